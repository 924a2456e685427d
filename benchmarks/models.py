"""The same item shape for every contender: pk/sk strings, a number, a string and a flag."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import Boolean, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def items(partition: str, count: int) -> list[dict[str, Any]]:
    return [
        {"pk": partition, "sk": f"{i:06}", "n": i, "name": f"item {i}", "flag": i % 2 == 0}
        for i in range(count)
    ]


def orm_model(table: str) -> type:
    """A mapped class for ``table`` in its own registry."""

    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = table
        pk: Mapped[str] = mapped_column(String, primary_key=True)
        sk: Mapped[str] = mapped_column(String, primary_key=True)
        n: Mapped[int] = mapped_column(Integer)
        name: Mapped[str] = mapped_column(String)
        flag: Mapped[bool] = mapped_column(Boolean)

    return Item


def pynamodb_model(table: str, endpoint_url: str) -> type | None:
    """The same item as a PynamoDB model, or None without PynamoDB."""
    try:
        from pynamodb.attributes import BooleanAttribute, NumberAttribute, UnicodeAttribute
        from pynamodb.models import Model
    except ImportError:
        return None

    from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

    class Meta:
        table_name = table
        host = endpoint_url
        region = "us-east-1"
        aws_access_key_id = LOCAL_CREDENTIALS["aws_access_key_id"]
        aws_secret_access_key = LOCAL_CREDENTIALS["aws_secret_access_key"]

    return type(
        "PynamoItem",
        (Model,),
        {
            "Meta": Meta,
            "pk": UnicodeAttribute(hash_key=True),
            "sk": UnicodeAttribute(range_key=True),
            "n": NumberAttribute(),
            "name": UnicodeAttribute(),
            "flag": BooleanAttribute(),
        },
    )


def pydynamodb_connection(endpoint_url: str) -> Any | None:
    """A PyDynamoDB DBAPI connection, or None without PyDynamoDB."""
    try:
        import pydynamodb
    except ImportError:
        return None
    from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

    return pydynamodb.connect(region_name="us-east-1", endpoint_url=endpoint_url, **LOCAL_CREDENTIALS)


def plain(value: Any) -> Any:
    """Decimal -> int, as the ORM's Integer column gives, so every contender builds equal rows."""
    return int(value) if isinstance(value, Decimal) else value
