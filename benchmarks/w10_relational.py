"""W10: relational reads the driver plans and finishes on the client (issue 29): a join of 1,000
orders to their customers and a GROUP BY over a 10,000-item partition, Core on each transport vs
raw boto3 doing the same by hand: a Query of the orders and BatchGetItem of their customers
(100 keys a request; the join's ON pins the customers' sort key, so the driver reads them so
too), a Query of the partition summed in a dict."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import Any

from sqlalchemy import Column, Integer, MetaData, String, Table, and_, func, select

from .common import BOTOCORE, Env

NAME = "W10 relational"
JOIN = f"{NAME}: join of orders to their customers"
GROUP_BY = f"{NAME}: GROUP BY over one partition"
ORDERS_PER_CUSTOMER = 4
CATEGORIES = 10


def _table(metadata: MetaData, name: str, *columns: Column) -> Table:
    return Table(
        name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        *columns,
    )


def _pages(read: Callable[..., dict[str, Any]], **request: Any) -> list[dict[str, Any]]:
    """Every item of a paged boto3 read."""
    found, start = [], None
    while True:
        page = read(**request, **({"ExclusiveStartKey": start} if start else {}))
        found += page["Items"]
        start = page.get("LastEvaluatedKey")
        if start is None:
            return found


def run(env: Env, orders: int = 1000, partition: int | None = None) -> None:
    """``orders`` orders of ``orders / 4`` customers; a GROUP BY over ``partition`` items (ten
    times the orders unless given)."""
    partition = 10 * orders if partition is None else partition
    metadata = MetaData()
    order_table = _table(
        metadata, env.table_name("w10_orders"), Column("customer_id", String), Column("total", Integer)
    )
    customer_table = _table(metadata, env.table_name("w10_customers"), Column("name", String))
    group_table = _table(
        metadata, env.table_name("w10_group"), Column("category", String), Column("amount", Integer)
    )
    for each in (order_table, customer_table, group_table):
        env.create_table(each.name)
    customers = max(1, orders // ORDERS_PER_CUSTOMER)
    env.load(
        customer_table.name,
        [{"pk": f"C{i:05}", "sk": "C", "name": f"customer {i}"} for i in range(customers)],
    )
    env.load(
        order_table.name,
        [
            {"pk": "O", "sk": f"{i:06}", "customer_id": f"C{i % customers:05}", "total": i}
            for i in range(orders)
        ],
    )
    env.load(
        group_table.name,
        [
            {"pk": "G", "sk": f"{i:06}", "category": f"c{i % CATEGORIES}", "amount": i % 100}
            for i in range(partition)
        ],
    )
    client = env.client

    def boto3_join() -> list[tuple[Any, ...]]:
        read = _pages(
            client.query,
            TableName=order_table.name,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "O"}},
        )
        wanted = list(dict.fromkeys(item["customer_id"]["S"] for item in read))
        names: dict[str, str] = {}
        for start in range(0, len(wanted), 100):
            keys = [{"pk": {"S": pk}, "sk": {"S": "C"}} for pk in wanted[start : start + 100]]
            pending: dict[str, Any] = {
                customer_table.name: {
                    "Keys": keys,
                    "ProjectionExpression": "pk, #n",
                    "ExpressionAttributeNames": {"#n": "name"},
                }
            }
            while pending:
                answer = client.batch_get_item(RequestItems=pending)
                names.update(
                    (item["pk"]["S"], item["name"]["S"]) for item in answer["Responses"][customer_table.name]
                )
                pending = answer.get("UnprocessedKeys") or {}
        return [
            (item["sk"]["S"], int(item["total"]["N"]), names[item["customer_id"]["S"]])
            for item in read
            if item["customer_id"]["S"] in names
        ]

    def boto3_group_by() -> list[tuple[Any, ...]]:
        groups: dict[str, list[Any]] = {}
        for item in _pages(
            client.query,
            TableName=group_table.name,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "G"}},
            ProjectionExpression="category, amount",
        ):
            group = groups.setdefault(item["category"]["S"], [0, Decimal(0)])
            group[0] += 1
            group[1] += Decimal(item["amount"]["N"])
        return [(category, count, total) for category, (count, total) in groups.items()]

    # the ON says what boto3's by-hand keys know, a customer's item has sk "C", so the driver
    # too reads the customers by their whole key
    on = and_(customer_table.c.pk == order_table.c.customer_id, customer_table.c.sk == "C")
    join = (
        select(order_table.c.sk, order_table.c.total, customer_table.c.name)
        .join_from(order_table, customer_table, on)
        .where(order_table.c.pk == "O")
    )
    group_by = (
        select(group_table.c.category, func.count(), func.sum(group_table.c.amount))
        .where(group_table.c.pk == "G")
        .group_by(group_table.c.category)
    )

    def core(engine: Any, statement: Any) -> list[tuple[Any, ...]]:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(statement)]

    for workload, by_hand, statement, rows in (
        (JOIN, boto3_join, join, orders),
        (GROUP_BY, boto3_group_by, group_by, CATEGORIES),
    ):
        expected = sorted(by_hand())
        assert len(expected) == min(rows, partition), workload
        env.measure(workload, "boto3 by hand", by_hand)
        for suffix, engine in (("", env.engine), (BOTOCORE, env.botocore_engine)):
            work = partial(core, engine, statement)
            # the same rows as by hand, or the ratio compares different work
            assert sorted(work()) == expected, (workload, suffix)
            env.measure(workload, f"sa_dynamo Core{suffix}", work)
