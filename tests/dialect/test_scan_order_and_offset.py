"""ORDER BY over a scan and OFFSET, computed by the driver over the planned read and compared
with SQLite holding the same rows: a cap (dynamodb_client_sort) that raises rather than cuts,
the skipped rows read and counted, OFFSET 0 free."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, select, text, tuple_
from sqlalchemy.exc import ArgumentError, CompileError, OperationalError
from support.beside_sqlite import filled_alike, rows_of, same_rows
from support.sent import requests_built

import sa_dynamo
from sa_dynamo.dialect.base import DynamoDBDialect

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
things = Table(
    f"scan_order_{suffix}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("n", Integer),
    Column("s", String),
)
ROWS = [
    {"pk": f"P{i % 3}", "sk": f"{i:03}", "n": None if i % 7 == 0 else (i * 5) % 11, "s": "ab"[i % 2]}
    for i in range(60)
]
CAP = {"dynamodb_client_sort": 100, "dynamodb_scan": "allow"}


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, {things: ROWS})


def _same(databases: tuple[Engine, Engine], statement: Any) -> list[tuple]:
    return same_rows(databases, statement)


@pytest.mark.parametrize(
    "order",
    [
        (things.c.n, things.c.pk, things.c.sk),
        (things.c.s.desc(), things.c.n.desc(), things.c.sk),
        (things.c.n.nulls_last(), things.c.sk.desc(), things.c.pk),
    ],
)
def test_a_scan_is_sorted_on_the_client_like_sqlite(databases, order):
    statement = select(things).where(things.c.n > 2).order_by(*order).execution_options(**CAP)
    assert len(_same(databases, statement)) > 20
    assert len(_same(databases, statement.limit(7))) == 7


def test_an_order_over_a_scan_needs_the_cap_and_never_cuts(databases):
    statement = select(things.c.sk).order_by(things.c.n, things.c.sk)
    with pytest.raises(CompileError, match=r"ORDER BY on a scan: .*dynamodb_client_sort=<max rows>"):
        rows_of(databases[0], statement.execution_options(dynamodb_scan="allow"))
    with pytest.raises(OperationalError, match="more than dynamodb_client_sort=59 allows"):
        rows_of(databases[0], statement.execution_options(dynamodb_client_sort=59, dynamodb_scan="allow"))
    assert (
        len(_same(databases, statement.execution_options(dynamodb_client_sort=60, dynamodb_scan="allow")))
        == 60
    )


def test_the_scan_policy_still_decides_the_read(databases):
    statement = select(things).order_by(things.c.n).execution_options(dynamodb_client_sort=100)
    with pytest.raises(sa_dynamo.exc.ScanNotAllowed):
        rows_of(databases[0], statement.execution_options(dynamodb_scan="error"))


@pytest.mark.parametrize(("limit", "offset"), [(None, 5), (4, 5), (10, 55), (3, 70), (0, 3)])
def test_offset_skips_rows_like_sqlite(databases, limit, offset):
    ordered = select(things).order_by(things.c.n.desc(), things.c.sk).execution_options(**CAP)
    one_partition = select(things).where(things.c.pk == "P1").order_by(things.c.sk)
    for statement in (ordered, one_partition.execution_options(dynamodb_client_sort=100)):
        statement = statement.offset(offset)
        _same(databases, statement if limit is None else statement.limit(limit))


def test_skipped_rows_are_read_and_counted(databases):
    """Over one partition in DynamoDB's own order the rows stream: OFFSET reads the rows it
    skips (three pages of 5 items for 2 rows after 12 skipped), and OFFSET 0 reads what the
    statement alone reads."""
    statement = (
        select(things.c.sk)
        .where(things.c.pk == "P1")
        .order_by(things.c.sk)
        .limit(2)
        .execution_options(dynamodb_page_size=5, dynamodb_client_sort=20)
    )
    with databases[0].connect() as conn:
        with requests_built(conn) as sent:
            rows = conn.execute(statement.offset(12)).all()
        assert [r.sk for r in rows] == ["037", "040"]
        assert [operation for operation, _ in sent] == ["ExecuteStatement"] * 3
        with requests_built(conn) as plain:
            conn.execute(statement).all()
        with requests_built(conn) as free:
            conn.execute(statement.offset(0).execution_options(dynamodb_client_sort=None)).all()
        assert free == plain and len(free) == 1


def test_offset_needs_the_cap_unless_the_keys_bound_the_read(databases):
    query = select(things).where(things.c.pk == "P0").offset(3)
    with pytest.raises(
        CompileError, match=r"OFFSET over a Query or a Scan: the rows it skips are read first"
    ):
        rows_of(databases[0], query)
    too_far = r"OFFSET 30 reads and skips more rows than dynamodb_client_sort=29"
    with (
        databases[0].connect() as conn,
        requests_built(conn) as sent,
        pytest.raises(OperationalError, match=too_far),
    ):
        conn.execute(query.offset(30).execution_options(dynamodb_client_sort=29))
    assert sent == []  # refused before anything is sent
    keys = [(f"P{i % 3}", f"{i:03}") for i in range(0, 30, 2)]
    listed = (
        select(things).where(tuple_(things.c.pk, things.c.sk).in_(keys)).order_by(things.c.n, things.c.sk)
    )
    assert len(_same(databases, listed.offset(10))) == 5  # bounded by its keys: no cap asked
    assert _same(databases, select(things).where(things.c.pk == "P0", things.c.sk == "003").offset(1)) == []


def test_paginate_pages_with_its_tokens_not_offset(databases):
    with pytest.raises(ArgumentError, match=r"leave \.offset\(\) out"):
        sa_dynamo.paginate(databases[0], select(things).where(things.c.pk == "P1").offset(2), page_size=5)


def test_sql_text_offset_and_scan_order(databases):
    sql = f"SELECT sk, n FROM {things.name} WHERE n IS NOT NULL ORDER BY n DESC, sk LIMIT 5 OFFSET 4"
    with pytest.raises(CompileError, match="dynamodb_client_sort"):
        rows_of(databases[0], text(sql).execution_options(dynamodb_scan="allow"))
    assert len(_same(databases, text(sql).execution_options(**CAP))) == 5


def test_a_transaction_sorts_and_skips_its_own_writes(databases):
    """In a transaction the written items are laid over the scan before it is sorted and cut."""
    statement = select(things).order_by(things.c.n.desc(), things.c.sk).offset(3).limit(6)
    results = []
    for engine in databases:
        with engine.connect() as conn:
            conn.execute(
                things.insert(), [{"pk": "P9", "sk": "900", "n": 99}, {"pk": "P9", "sk": "901", "n": 10}]
            )
            conn.execute(things.delete().where(things.c.pk == "P1", things.c.sk == "010"))
            conn.execute(things.update().where(things.c.pk == "P2", things.c.sk == "002").values(n=50))
            results.append([tuple(r) for r in conn.execute(statement.execution_options(**CAP))])
            conn.rollback()
    assert results[0] == results[1]
    assert ("P9", "901", 10, None) in results[0]  # a row the transaction wrote


LABELLED_N, LABELLED_SK = things.c.n.label("ln"), things.c.sk.label("lsk")


@pytest.mark.parametrize(
    "statement",
    [
        select(LABELLED_N, things.c.pk, things.c.sk).order_by("ln", "pk", "sk").execution_options(**CAP),
        select(LABELLED_N, things.c.sk).where(things.c.pk == "P1").order_by(LABELLED_N.desc(), things.c.sk),
        select(LABELLED_SK, things.c.n).where(things.c.pk == "P2").order_by(LABELLED_SK.desc()),
        select(LABELLED_SK).where(things.c.pk == "P0").order_by("lsk").limit(4),
    ],
    ids=[
        "by name, the client's order",
        "the label object, descending",
        "the sort key's label",
        "by name, LIMIT",
    ],
)
def test_a_label_of_a_column_orders_as_the_column(databases, statement):
    """ORDER BY a label that names a plain column, by its name or the label itself, follows the
    column's rules: the sort key's is DynamoDB's order, another the client's (with its cap)."""
    assert len(_same(databases, statement.execution_options(**CAP))) >= 4


def test_the_sort_keys_label_is_served_by_dynamodb():
    statement = select(LABELLED_SK).where(things.c.pk == "P0").order_by(LABELLED_SK.desc())
    assert statement.compile(dialect=DynamoDBDialect()).string.endswith('ORDER BY "sk" DESC')
