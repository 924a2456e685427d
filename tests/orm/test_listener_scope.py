"""What sa_dynamo registers with SQLAlchemy acts on DynamoDB sessions only: a SQLite session in
the same process, with the same models, sends exactly what SQLAlchemy alone would send and gets
SQLite's rows, while the DynamoDB session beside it gets its key conditions, type filters,
templated keys and selectin loads by Query."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from sqlalchemy import Index, Numeric, create_engine, event, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, selectinload

import sa_dynamo


@pytest.fixture(scope="module")
def models():
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = f"scope_{uuid.uuid4().hex[:8]}"
        __table_args__ = (Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),)
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        gsi1sk: Mapped[str | None]
        customer_id: Mapped[str | None]

    class Customer(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "METADATA"}
        name: Mapped[str | None]
        orders = sa_dynamo.item_collection("Order", sort_key_prefix="ORDER#", order_by="Order.sk")

    class Order(Item):
        __key_templates__ = {
            "pk": "CUSTOMER#{customer_id}",
            "sk": "ORDER#{order_id}",
            "gsi1pk": "CUSTOMER#{customer_id}",
            "gsi1sk": "TOTAL#{total:08.2f}",  # two places: a bound with three is rounded
        }
        order_id: Mapped[str | None]
        total: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))

    yield Base, Customer, Order, Item
    Base.registry.dispose()


def _rows(Customer, Order, keys: bool) -> list:
    """Ann and her orders; ``keys``: with the keys a SQLite user sets (templates are DynamoDB's)."""

    def key(pk: str, sk: str) -> dict:
        return {"pk": pk, "sk": sk} if keys else {}

    return [
        Customer(customer_id="42", name="Ann", **key("CUSTOMER#42", "METADATA")),
        Order(customer_id="42", order_id="1", total=Decimal("12.50"), **key("CUSTOMER#42", "ORDER#1")),
        Order(customer_id="42", order_id="2", total=Decimal("3.00"), **key("CUSTOMER#42", "ORDER#2")),
    ]


def _plain(statement, engine) -> str:
    """What SQLAlchemy alone sends for an ORM statement."""
    return " ".join(str(statement.compile(engine, compile_kwargs={"render_postcompile": True})).split())


def test_a_sqlite_session_beside_a_dynamodb_one_is_untouched(engine, models):
    Base, Customer, Order, Item = models
    sqlite = create_engine("sqlite://")
    sent: list[str] = []
    event.listen(sqlite, "before_cursor_execute", lambda c, cur, statement, *a: sent.append(statement))
    for bind in (sqlite, engine):
        Base.metadata.create_all(bind)
    try:
        with Session(engine) as dynamodb_session, Session(sqlite) as sqlite_session:
            dynamodb_session.add_all(_rows(Customer, Order, keys=False))
            dynamodb_session.commit()
            sqlite_session.add_all(_rows(Customer, Order, keys=True))
            sqlite_session.commit()
            # templates fill the keys on DynamoDB only
            assert dynamodb_session.get(Order, ("CUSTOMER#42", "ORDER#1")).gsi1sk == "TOTAL#00012.50"
            assert sqlite_session.get(Order, ("CUSTOMER#42", "ORDER#1")).gsi1sk is None

            queries = [
                select(Order).where(Order.customer_id == "42", Order.total > Decimal("12.499")),
                select(Item).where(Item.pk == "CUSTOMER#42"),
                select(Customer).options(selectinload(Customer.orders)),
            ]
            for query in queries:
                sent.clear()
                dynamodb_rows = dynamodb_session.scalars(query.execution_options(dynamodb_scan="allow")).all()
                sqlite_rows = sqlite_session.scalars(query).all()
                assert _plain(query, sqlite) == " ".join(sent[0].split())
                assert sorted(r.sk for r in sqlite_rows) == sorted(r.sk for r in dynamodb_rows)
            # the DynamoDB session's statements were rewritten: a key condition, a type filter
            plan = sa_dynamo.explain(dynamodb_session, queries[0])
            assert plan.key_condition == '"gsi1pk" = ? AND "gsi1sk" >= ?'
            assert '"$type" IN' in sa_dynamo.explain(dynamodb_session, queries[1]).filter

            sent.clear()
            count = sqlite_session.query(Order).filter(Order.customer_id == "42").count()
            assert count == 2 and "FROM (SELECT" in sent[0]  # SQLAlchemy's own subquery
            assert dynamodb_session.query(Order).filter(Order.customer_id == "42").count() == 2
            assert sqlite_session.scalar(select(func.count()).select_from(Item)) == 3
    finally:
        Base.metadata.drop_all(engine)
        sqlite.dispose()
