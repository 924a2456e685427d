"""W11: one kind's items of a mixed partition (one order in twenty), read two ways: by the
discriminator alone (DynamoDB reads the whole partition and its filter discards the other
kinds, billing them all) and by the kinds' sort-key prefix (DynamoDB reads the orders only).
boto3's Query asks for the capacity consumed, which DynamoDB Local reports; sa_dynamo's PartiQL
reads get none reported on Local (docs/partiql-findings.md), so their rows show the same pair."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo

from .common import Env

NAME = "W11 one kind of a mixed partition"
EVERY = 20  # one item in EVERY is an order


def kinds(count: int) -> list[dict[str, Any]]:
    """Orders (sort key ORDER#...) among lines (LINE#...), each with its "$type"."""
    return [
        {"pk": "C", "sk": f"ORDER#{i:06}", "$type": "Order"}
        if i % EVERY == 0
        else {"pk": "C", "sk": f"LINE#{i:06}", "$type": "Line"}
        for i in range(count)
    ]


def models(table: str) -> Any:
    """A single-table hierarchy on ``table``: the Order class, whose reads filter on "$type"."""

    class Base(DeclarativeBase):
        pass

    class Entry(sa_dynamo.SingleTable, Base):
        __tablename__ = table
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)

    class Order(Entry):
        pass

    class Line(Entry):
        pass

    return Order


def run(env: Env, size: int = 2000) -> None:
    table = env.table_name("w10")
    env.create_table(table)
    env.load(table, kinds(size))
    orders = -(-size // EVERY)
    order = models(table)

    def query(**conditions: Any) -> tuple[int, int]:
        scanned = count = 0
        pages: dict[str, Any] = {}
        while True:
            page = env.client.query(TableName=table, ReturnConsumedCapacity="TOTAL", **conditions, **pages)
            scanned, count = scanned + page["ScannedCount"], count + page["Count"]
            if "LastEvaluatedKey" not in page:
                return scanned, count
            pages = {"ExclusiveStartKey": page["LastEvaluatedKey"]}

    by_kind = {
        "KeyConditionExpression": "pk = :p",
        "FilterExpression": "#t = :t",
        "ExpressionAttributeNames": {"#t": "$type"},
        "ExpressionAttributeValues": {":p": {"S": "C"}, ":t": {"S": "Order"}},
    }
    by_prefix = {
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :o)",
        "ExpressionAttributeValues": {":p": {"S": "C"}, ":o": {"S": "ORDER#"}},
    }
    for label, conditions in (("discriminator filter", by_kind), ("sort-key prefix", by_prefix)):
        result = env.measure(NAME, f"boto3 Query, {label}", lambda c=conditions: query(**c))
        scanned, count = query(**conditions)
        result.note = f"{scanned:,} items read for {count:,} rows"

    def orm(statement: Any) -> list:
        with Session(env.engine) as session:
            found = session.scalars(statement).all()
        assert len(found) == orders, (len(found), orders)
        return found

    env.measure(
        NAME,
        "sa_dynamo Order, discriminator only",
        lambda: orm(select(order).where(order.pk == "C")),
    )
    prefix = select(order).where(order.pk == "C", order.sk.startswith("ORDER#"))
    env.measure(NAME, "sa_dynamo Order, sort-key prefix", lambda: orm(prefix))
