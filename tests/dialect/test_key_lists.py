"""Lists of full keys read as BatchGetItem, 100 keys a request, and ORDER BY sorted on the client,
each compared with SQLite holding the same rows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, create_engine, select, text, tuple_
from sqlalchemy.exc import ArgumentError, CompileError, OperationalError, StatementError
from support.sent import operations_sent

import sa_dynamo

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
orders = Table(
    f"keylist_orders_{suffix}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("n", Integer),
    Column("s", String),
)
users = Table(
    f"keylist_users_{suffix}",
    metadata,
    Column("id", String, primary_key=True),
    Column("n", Integer),
)
ORDER_ROWS = [
    {
        "pk": f"P{i % 4}",
        "sk": f"{i:03}",
        "n": None if i % 5 == 0 else (i * 7) % 10,
        "s": "x" if i % 2 else None,
    }
    for i in range(120)
]
USER_ROWS = [{"id": f"U{i:03}", "n": None if i % 4 == 0 else (i * 3) % 7} for i in range(80)]


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    """DynamoDB Local and SQLite, the same rows in each."""
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        metadata.create_all(each)
        with each.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(orders.insert(), ORDER_ROWS)
            conn.execute(users.insert(), USER_ROWS)
    yield engine, sqlite
    metadata.drop_all(engine)
    sqlite.dispose()


def _rows(engine: Engine, statement: Any, calls: list[str] | None = None) -> list[tuple]:
    with engine.connect() as conn:
        if calls is None:
            return [tuple(row) for row in conn.execute(statement)]
        with operations_sent(conn.connection.dbapi_connection) as sent:
            rows = [tuple(row) for row in conn.execute(statement)]
        calls += sent
        return rows


def _same(databases: tuple[Engine, Engine], statement: Any, ordered: bool = True) -> list[tuple]:
    dynamodb, sqlite = databases
    rows, expected = _rows(dynamodb, statement), _rows(sqlite, statement)
    if not ordered:
        rows, expected = sorted(rows), sorted(expected)
    assert rows == expected
    return rows


FULL_KEYS = [(f"P{i % 4}", f"{i:03}") for i in range(100)]


def test_a_hundred_full_keys_are_one_batch_get_with_sqlites_rows(databases):
    keys = tuple_(orders.c.pk, orders.c.sk).in_(FULL_KEYS)
    statement = select(orders).where(keys).execution_options(dynamodb_scan="error")  # no scan
    calls: list[str] = []
    rows = _rows(databases[0], statement, calls)
    assert calls == ["BatchGetItem"]
    assert sorted(rows) == sorted(_rows(databases[1], statement))
    assert len(rows) == 100


def test_absent_and_repeated_keys_give_each_item_once(databases):
    keys = [("P1", "001"), ("P1", "001"), ["P1", "005"], ("P1", "999"), ("P9", "001")]
    rows = _same(databases, select(orders.c.sk).where(tuple_(orders.c.pk, orders.c.sk).in_(keys)), False)
    assert rows == [("001",), ("005",)]


def test_further_terms_filter_the_keys_on_the_client(databases, sent):
    statement = (
        select(orders.c.pk, orders.c.sk)
        .where(tuple_(orders.c.sk, orders.c.pk).in_([(sk, pk) for pk, sk in FULL_KEYS]), orders.c.n > 4)
        .order_by(orders.c.sk)
    )
    rows = _same(databases, statement)
    assert 0 < len(rows) < 100
    # a batched SELECT takes no filter: n is read for the client's test, and not returned
    assert sent == [f'SELECT "pk", "sk", "n" FROM "{orders.name}" WHERE "sk" = ? AND "pk" = ?']


@pytest.mark.parametrize("limit", [None, 7])
def test_full_keys_sorted_by_any_attribute_like_sqlite(databases, limit):
    statement = (
        select(orders)
        .where(tuple_(orders.c.pk, orders.c.sk).in_(FULL_KEYS[::-1]))
        .order_by(orders.c.n.desc(), orders.c.s, orders.c.sk)
        .limit(limit)
    )
    rows = _same(databases, statement)
    assert len(rows) == (limit or 100)


def test_partition_keys_of_a_table_without_sort_key(databases):
    few = [f"U{i:03}" for i in range(0, 80, 3)]  # 27: one Query
    many = [f"U{i:03}" for i in range(79, -1, -1)] * 2 + ["U999"]  # 80 distinct: one BatchGetItem
    for keys, requests in ((few, ["ExecuteStatement"]), (many, ["BatchGetItem"])):
        statement = select(users).where(users.c.id.in_(keys), users.c.n != 3).order_by(users.c.n, users.c.id)
        calls: list[str] = []
        assert _rows(databases[0], statement, calls) == _rows(databases[1], statement)
        assert calls == requests
    one_tuple = select(users.c.id).where(tuple_(users.c.id).in_([("U001",), ("U002",), ("U999",)]))
    assert _same(databases, one_tuple, False) == [("U001",), ("U002",)]


def test_explain_shows_the_batch(databases):
    keys = FULL_KEYS[:30]
    plan = sa_dynamo.explain(
        databases[0], select(orders).where(tuple_(orders.c.pk, orders.c.sk).in_(keys), orders.c.n == 1)
    )
    assert (plan.operation, plan.key_condition, plan.filter) == (
        "BatchGetItem",
        '"pk" = ? AND "sk" = ?',
        '"n" = ?',
    )
    assert plan.reason == (
        "30 keys, 1 BatchGetItem request of up to 100 keys; the filter is tested on the client "
        "(BatchGetItem takes none)"
    )
    assert plan.partiql == f'SELECT "pk", "sk", "n", "s" FROM "{orders.name}" WHERE "pk" = ? AND "sk" = ?'


def test_a_query_is_sorted_on_the_client_only_when_asked(databases, sent):
    statement = select(orders.c.sk).where(orders.c.pk.in_(["P1", "P2"])).order_by(orders.c.n, orders.c.sk)
    with pytest.raises(CompileError, match=r"pass the execution option dynamodb_client_sort=<max rows>"):
        _rows(databases[0], statement)
    assert sent == []
    rows = _same(databases, statement.execution_options(dynamodb_client_sort=60))
    assert len(rows) == 60
    one = select(orders).where(orders.c.pk == "P3").order_by(orders.c.s.desc(), orders.c.sk.desc()).limit(5)
    assert len(_same(databases, one.execution_options(dynamodb_client_sort=1000))) == 5


def test_more_rows_than_allowed_is_an_error_not_a_shorter_result(databases):
    statement = select(orders.c.sk).where(orders.c.pk.in_(["P1", "P2"])).order_by(orders.c.n)
    with pytest.raises(OperationalError, match=r"more than dynamodb_client_sort=59 allows"):
        _rows(databases[0], statement.execution_options(dynamodb_client_sort=59))
    with pytest.raises(ArgumentError, match="a positive int"):
        _rows(databases[0], statement.execution_options(dynamodb_client_sort=0))


def test_a_scan_sorts_only_with_the_cap_and_paginate_stays_refused(databases):
    scan = select(users).order_by(users.c.n, users.c.id).execution_options(dynamodb_scan="allow")
    with pytest.raises(CompileError, match="ORDER BY on a scan") as raised:
        _rows(databases[0], scan)
    assert "select keys with id.in_(keys)" in str(raised.value)
    assert "id == value" not in str(raised.value)
    assert len(_same(databases, scan.execution_options(dynamodb_client_sort=80))) == 80
    keys = select(orders).where(tuple_(orders.c.pk, orders.c.sk).in_(FULL_KEYS)).order_by(orders.c.n)
    with pytest.raises(ArgumentError, match="paginate"):
        sa_dynamo.paginate(databases[0], keys, page_size=10)


def test_an_empty_key_is_refused_before_sending(databases, sent):
    with pytest.raises(CompileError, match="key attribute 'pk, sk' with an empty value"):
        _rows(databases[0], select(orders).where(tuple_(orders.c.pk, orders.c.sk).in_([("P1", "")])))
    with pytest.raises(StatementError, match="give each key as a tuple of 2 values"):
        _rows(databases[0], select(orders).where(tuple_(orders.c.pk, orders.c.sk).in_([("P1",)])))
    assert sent == []


def test_sql_text_sorts_the_same_way(databases):
    """SQL text is the same statement to the compiler: its ORDER BY needs the same option."""
    sql = f"SELECT sk, n FROM {orders.name} WHERE pk IN ('P1', 'P2') ORDER BY n DESC, sk LIMIT 9"
    with pytest.raises(CompileError, match="dynamodb_client_sort"):
        _rows(databases[0], text(sql))
    assert _same(databases, text(sql).execution_options(dynamodb_client_sort=100)) == _rows(
        databases[1], text(sql)
    )
