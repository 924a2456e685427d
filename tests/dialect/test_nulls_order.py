"""NULLS FIRST and NULLS LAST, in Core and in SQL text, place NULL as SQLite does where the rows
are sorted on the client; on the sort key DynamoDB sorts (which no item lacks) they change
nothing; elsewhere the refusal is the ORDER BY's own."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, select, text
from sqlalchemy.exc import CompileError

ROWS = [{"pk": "p", "sk": f"{i:02}", "n": n} for i, n in enumerate([3, None, 1, None, 2])]
ORDERS = {
    "ASC NULLS FIRST": lambda n: n.asc().nulls_first(),
    "ASC NULLS LAST": lambda n: n.asc().nulls_last(),
    "DESC NULLS FIRST": lambda n: n.desc().nulls_first(),
    "DESC NULLS LAST": lambda n: n.desc().nulls_last(),
    "NULLS LAST": lambda n: n.nulls_last(),
}


@pytest.fixture(scope="module")
def both(engine):
    metadata = MetaData()
    table = Table(
        f"nulls_{uuid.uuid4().hex[:10]}",
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
    )
    sqlite = create_engine("sqlite://")
    metadata.create_all(engine)
    metadata.create_all(sqlite)
    for bind in (engine, sqlite):
        with bind.begin() as conn:
            conn.execute(insert(table), ROWS)
    yield table, sqlite
    metadata.drop_all(engine)


@pytest.mark.parametrize("order", ORDERS)
def test_a_client_sort_places_null_as_sqlite_does(engine, both, order):
    table, sqlite = both
    query = select(table.c.sk, table.c.n).where(table.c.pk == "p").order_by(ORDERS[order](table.c.n))
    with sqlite.connect() as conn:
        expected = conn.execute(query).all()
    with engine.connect() as conn:
        assert conn.execute(query.execution_options(dynamodb_client_sort=100)).all() == expected
        sql = f"SELECT sk, n FROM {table.name} WHERE pk = 'p' ORDER BY n {order}"
        assert conn.execute(text(sql).execution_options(dynamodb_client_sort=100)).all() == expected


def test_on_the_sort_key_they_change_nothing(engine, both):
    table, _ = both
    query = select(table.c.sk).where(table.c.pk == "p").order_by(table.c.sk.desc().nulls_first())
    with engine.connect() as conn:
        assert conn.execute(query).scalars().all() == ["04", "03", "02", "01", "00"]
        sql = f"SELECT sk FROM {table.name} WHERE pk = 'p' ORDER BY sk DESC NULLS FIRST"
        assert conn.execute(text(sql)).scalars().all() == ["04", "03", "02", "01", "00"]


def test_without_a_client_sort_the_refusal_is_the_order_bys(engine, both):
    table, _ = both
    with engine.connect() as conn, pytest.raises(CompileError, match="dynamodb_client_sort=<max rows>"):
        conn.execute(text(f"SELECT sk FROM {table.name} WHERE pk = 'p' ORDER BY n NULLS LAST"))
