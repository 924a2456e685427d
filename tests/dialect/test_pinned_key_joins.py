"""A join whose ON (or WHERE) pins the other table's sort key with ==, as single-table designs
write it (``account.sk == "PROFILE"``): that table is fetched by its whole key, BatchGetItem of
100 keys a request, instead of Queries of 50 partitions; rows compared with SQLite."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, and_, bindparam, literal, select
from support.beside_sqlite import filled_alike, same_rows
from support.sent import requests_built

import sa_dynamo

metadata = MetaData()
accounts = Table(
    "pinned_accounts",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("name", String),
)
orders = Table(
    "pinned_orders",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("customer_id", String),
    Column("total", Integer),
)
a, o = accounts.c, orders.c

# each customer has a PROFILE item and a PREFS item in its partition; every fifth has no PROFILE
ACCOUNTS = [
    {"pk": f"C{i:03}", "sk": kind, "name": f"{kind.lower()} {i}"}
    for i in range(150)
    for kind in ("PROFILE", "PREFS")
    if not (kind == "PROFILE" and i % 5 == 0)
]
ORDERS = [
    {"pk": "O", "sk": f"{i:04}", "customer_id": None if i % 17 == 0 else f"C{i % 160:03}", "total": i}
    for i in range(320)
]
CUSTOMERS_ORDERED = {row["customer_id"] for row in ORDERS if row["customer_id"]}


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, {accounts: ACCOUNTS, orders: ORDERS})


def _joined(on_profile: object, isouter: bool = False, where: object = None) -> object:
    statement = (
        select(o.sk, o.total, a.name)
        .join_from(
            orders,
            accounts,
            and_(a.pk == o.customer_id, *([on_profile] if on_profile is not None else [])),
            isouter=isouter,
        )
        .where(o.pk == "O", *([where] if where is not None else []))
        .order_by(o.sk)
    )
    return statement


STATEMENTS = {
    "ON pins the sort key": _joined(a.sk == "PROFILE"),
    "ON pins it, value first": _joined(literal("PROFILE", String) == a.sk),
    "WHERE pins it": _joined(None, where=a.sk == "PROFILE"),
    "left outer, ON pins it": _joined(a.sk == "PROFILE", isouter=True),
}


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_a_pinned_sort_key_fetches_by_the_whole_key(databases, name):
    statement = STATEMENTS[name]
    rows = same_rows(databases, statement)
    assert rows and all(row[2] is None or row[2].startswith("profile") for row in rows)
    with databases[0].connect() as conn, requests_built(conn) as sent:
        conn.execute(statement).all()
    assert [operation for operation, _ in sent] == ["ExecuteStatement"] + ["BatchGetItem"] * math.ceil(
        len(CUSTOMERS_ORDERED) / 100
    )
    keys = [key for _, body in sent[1:] for key in body["RequestItems"][accounts.name]["Keys"]]
    assert len(keys) == len(CUSTOMERS_ORDERED)
    assert {key["sk"]["S"] for key in keys} == {"PROFILE"}


def test_without_the_pin_the_partitions_are_queried_50_an_in(databases):
    statement = _joined(None)
    same_rows(databases, statement)  # both kinds of item of each customer
    with databases[0].connect() as conn, requests_built(conn) as sent:
        conn.execute(statement).all()
    assert [operation for operation, _ in sent] == ["ExecuteStatement"] * (
        1 + math.ceil(len(CUSTOMERS_ORDERED) / 50)
    )


@pytest.mark.parametrize("isouter", [False, True])
def test_a_pinned_null_matches_no_item(databases, isouter):
    statement = _joined(a.sk == bindparam("kind", None, type_=String), isouter=isouter)
    rows = same_rows(databases, statement)
    assert len(rows) == (len(ORDERS) if isouter else 0)
    with databases[0].connect() as conn, requests_built(conn) as sent:
        conn.execute(statement).all()
    assert [operation for operation, _ in sent] == ["ExecuteStatement"]


def test_explain_shows_the_fetch_by_the_whole_key(databases):
    text = str(sa_dynamo.explain(databases[0], STATEMENTS["ON pins the sort key"]))
    assert f"step 2:\n  operation:     BatchGetItem\n  table:         {accounts.name}\n" in text
    assert f'SELECT "name", "pk", "sk" FROM "{accounts.name}" WHERE ("pk", "sk") IN' in text or (
        f'FROM "{accounts.name}" WHERE "pk" = ? AND "sk" = ?' in text
    ), text
    assert "fetched by its whole key" in text


@pytest.mark.parametrize("consistent", [False, True])
def test_a_consistent_read_asks_each_batch_get_for_it(databases, consistent):
    """dynamodb_consistent_read reaches the BatchGetItem the fetch by the whole key sends."""
    statement = STATEMENTS["ON pins the sort key"].execution_options(dynamodb_consistent_read=consistent)
    with databases[0].connect() as conn, requests_built(conn) as sent:
        rows = conn.execute(statement).all()
    assert rows == same_rows(databases, STATEMENTS["ON pins the sort key"])
    gets = [body["RequestItems"][accounts.name] for operation, body in sent if operation == "BatchGetItem"]
    assert gets and all(get.get("ConsistentRead", False) is consistent for get in gets)
