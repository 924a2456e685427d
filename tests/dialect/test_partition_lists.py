"""Reads of several partitions whose values are not in DynamoDB's order of keys, over more than
one page: every path that sends such an IN list (the table's partition key, an index's, a
join's other side, a semi-join's outer read by key, UPDATE and DELETE by such a WHERE) returns
SQLite's rows, each once. DynamoDB Local resumes a bare ``IN`` at the partitions after the last
one read in key order, so the dialect sends the list in that order (docs/partiql-findings.md)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Column, Engine, Index, Integer, MetaData, String, Table, delete, event, select, update
from support.beside_sqlite import filled_alike, rows_of
from support.sent import requests_built

import sa_dynamo

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
parents = Table(
    f"lists_parents_{suffix}", metadata, Column("id", String, primary_key=True), Column("name", String)
)
children = Table(
    f"lists_children_{suffix}",
    metadata,
    Column("pid", String, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("g", String),
    Column("v", Integer),
    Index("by_g", "g", "n"),
)
numbered = Table(
    f"lists_numbered_{suffix}",
    metadata,
    Column("pid", Integer, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("v", Integer),
)
p, c, k = parents.c, children.c, numbered.c
NAMES = ["a", "b", "c", "d"]
SMALL_PAGES = {"dynamodb_page_size": 3}


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(
        engine,
        metadata,
        {
            parents: [{"id": name, "name": name.upper()} for name in NAMES],
            children: [{"pid": name, "n": n, "g": f"G{name}", "v": n} for name in NAMES for n in range(8)],
            numbered: [{"pid": pid, "n": n, "v": 0} for pid in (1, 2, 3, 4, 10) for n in range(2)],
        },
    )


def _like_sqlite(databases: tuple[Engine, Engine], statement: Any, **options: Any) -> list[tuple]:
    """The statement's rows on DynamoDB, the same rows as SQLite's, each as often (in any order
    where the statement sets none)."""
    dynamodb, sqlite = databases
    rows, expected = rows_of(dynamodb, statement.execution_options(**options)), rows_of(sqlite, statement)
    if "ORDER BY" in str(statement):
        assert rows == expected
    else:
        assert sorted(rows) == sorted(expected)
    return rows


UNSORTED = ["c", "a", "b"]
READS = {
    "IN on the table's partition key": select(c.pid, c.n).where(c.pid.in_(UNSORTED)),
    "IN on a global index's partition key": select(c.pid, c.n).where(c.g.in_(["Gc", "Ga", "Gb"])),
    "IN of numbers (10 after 4, before it as text)": select(k.pid, k.n).where(k.pid.in_([10, 2, 1, 4])),
    "a join's other side fetched by the driving keys": select(p.id, c.n)
    .join_from(parents, children, p.id == c.pid)
    .where(p.id.in_(UNSORTED)),
    "a semi-join's outer read by the subquery's keys": select(c.pid, c.n).where(
        c.pid.in_(select(p.id).where(p.name.in_(["C", "A", "B"])))
    ),
    "IN and ORDER BY merged on the client, LIMIT": select(c.pid, c.n)
    .where(c.pid.in_(["d", "b", "a"]))
    .order_by(c.n.desc(), c.pid)
    .limit(10),
}


@pytest.mark.parametrize("statement", list(READS.values()), ids=list(READS))
@pytest.mark.parametrize("page_size", [1, 3])
def test_an_unsorted_list_of_partitions_reads_each_row_once(databases, statement, page_size):
    _like_sqlite(
        databases, statement, dynamodb_scan="allow", dynamodb_page_size=page_size, dynamodb_client_sort=100
    )


def test_a_limit_without_order_counts_distinct_rows(databases):
    statement = select(c.pid, c.n).where(c.pid.in_(["d", "b", "c"])).limit(20)
    rows = rows_of(databases[0], statement.execution_options(**SMALL_PAGES))
    assert len(set(rows)) == len(rows) == 20
    assert set(rows) <= set(rows_of(databases[1], statement.limit(None)))


def test_echo_shows_the_list_in_the_order_sent(databases):
    dynamodb, _ = databases
    echoed: list[Any] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        echoed.append(list(parameters))

    event.listen(dynamodb, "before_cursor_execute", record)
    try:
        with dynamodb.connect() as conn, requests_built(conn) as requests:
            conn.execute(select(c.pid, c.n).where(c.pid.in_(UNSORTED)).execution_options(**SMALL_PAGES)).all()
    finally:
        event.remove(dynamodb, "before_cursor_execute", record)
    assert echoed == [["a", "b", "c"]]
    sent = {str(body["Parameters"]) for operation, body in requests if operation == "ExecuteStatement"}
    assert sent == {str([{"S": "a"}, {"S": "b"}, {"S": "c"}])}


def _rows_left(engine: Engine, table: Table) -> list[tuple]:
    return sorted(rows_of(engine, select(table).execution_options(dynamodb_scan="allow")))


WRITES = {
    "DELETE by numbers": lambda t: delete(t).where(t.c.pid.in_([2, 1, 10, 3])),
    "UPDATE by numbers": lambda t: update(t).where(t.c.pid.in_([4, 10, 2])).values(v=7),
    "UPDATE by numbers, a sort-key test": lambda t: (
        update(t).where(t.c.pid.in_([10, 1]), t.c.n > 0).values(v=9)
    ),
}


@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
def test_writes_by_an_unsorted_list_match_every_row(engine, table_name, write):
    local = MetaData()
    table = numbered.to_metadata(local, name=table_name)
    rows = [{"pid": pid, "n": n, "v": 0} for pid in (1, 2, 3, 4, 10) for n in range(3)]
    filled = filled_alike(engine, local, {table: rows})
    databases = next(filled)
    try:
        counts = []
        for each in databases:
            with each.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                counts.append(conn.execute(write(table).execution_options(dynamodb_page_size=1)).rowcount)
        assert counts[0] == counts[1] > 0
        assert _rows_left(databases[0], table) == _rows_left(databases[1], table)
    finally:
        next(filled, None)


BIG = "x" * 200_000


def test_an_unsorted_list_past_1_mb_pages_without_options(engine, metadata, table_name):
    """Nine items of 200 KB in three partitions: DynamoDB ends a page at 1 MB, in the second
    partition of the list."""
    table = Table(
        table_name,
        metadata,
        Column("pid", String, primary_key=True),
        Column("n", Integer, primary_key=True),
        Column("blob", String),
    )
    metadata.create_all(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(table.insert(), [{"pid": pid, "n": n, "blob": BIG} for pid in "abc" for n in range(3)])
        with requests_built(conn) as requests:
            rows = conn.execute(select(table.c.pid, table.c.n).where(table.c.pid.in_(["b", "a", "c"]))).all()
    assert len([r for r in requests if r[0] == "ExecuteStatement"]) > 1  # it spanned pages
    assert sorted(rows) == [(pid, n) for pid in "abc" for n in range(3)]


def test_paginate_over_an_unsorted_list_gives_each_row_once(databases):
    statement = select(c.pid, c.n).where(c.pid.in_(["d", "a", "c"]))
    pages, token = [], None
    while True:
        page = sa_dynamo.paginate(databases[0], statement, page_size=5, after=token)
        pages.append(page.rows)
        if (token := page.next) is None:
            break
    assert [len(page) for page in pages] == [5, 5, 5, 5, 4]
    assert sorted(row for page in pages for row in page) == sorted(rows_of(databases[1], statement))
