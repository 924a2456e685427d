"""GROUP BY, the aggregates, HAVING and DISTINCT, computed on the client over the planned read (a
partition Query, a key list, a scan under the scan policy) and compared with SQLite holding the
same rows: NULLs skipped, exact sums, AVG as SQLite's, no empty groups, COUNT of nothing 0."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Engine,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    desc,
    distinct,
    func,
    insert,
    literal_column,
    select,
    text,
    tuple_,
)
from sqlalchemy.exc import CompileError, OperationalError
from support.beside_sqlite import filled_alike, rows_of, same_rows
from support.sent import requests_built

import sa_dynamo
from sa_dynamo.dialect.base import DynamoDBDialect

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
things = Table(
    f"group_by_{suffix}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", Integer, primary_key=True),
    Column("n", Integer),
    Column("d", Numeric(12, 3)),
    Column("s", String),
)
ROWS = [
    {
        "pk": f"P{i % 3}",
        "sk": i,
        "n": None if i % 7 == 0 else (i * 5) % 11 - 3,
        "d": None if i % 4 == 0 else Decimal(i * 3) / 8,
        "s": None if i % 5 == 0 else "abcd"[i % 4],
    }
    for i in range(60)
]
SCAN = {"dynamodb_scan": "allow"}
t = things.c


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, {things: ROWS})


def _same(databases: tuple[Engine, Engine], statement: Any) -> list[tuple]:
    return same_rows(databases, statement, **SCAN)


EVERY_AGGREGATE = (
    func.count(),
    func.count(t.n),
    func.sum(t.n),
    func.min(t.n),
    func.max(t.s),
    func.avg(t.n),
    func.sum(t.d),
    func.avg(t.d),
    func.min(t.d),
    func.count(distinct(t.s)),
)
READS = {
    "scan": t.n != 0,
    "partition": t.pk == "P1",
    "partitions": t.pk.in_(["P0", "P2"]),
    "key list": tuple_(t.pk, t.sk).in_([(f"P{i % 3}", i) for i in range(0, 60, 3)]),
}


@pytest.mark.parametrize("read", READS)
def test_every_aggregate_by_group_like_sqlite(databases, read):
    statement = select(t.s, *EVERY_AGGREGATE).where(READS[read]).group_by(t.s).order_by(t.s)
    rows = _same(databases, statement)
    assert len(rows) >= 3
    assert all(isinstance(row[7], Decimal) for row in rows if row[7] is not None)  # exact sums


@pytest.mark.parametrize("read", READS)
def test_aggregates_over_every_row_like_sqlite(databases, read):
    assert len(_same(databases, select(*EVERY_AGGREGATE).where(READS[read]))) == 1


def test_an_empty_read_counts_zero_and_has_no_groups(databases):
    nothing = t.pk == "nobody"
    assert _same(databases, select(func.count(t.n), func.sum(t.n), func.avg(t.d)).where(nothing)) == [
        (0, None, None)
    ]
    assert _same(databases, select(t.s, func.count()).where(nothing).group_by(t.s)) == []


def test_count_distinct_counts_each_value_once(databases):
    """Before the client computed it, count(distinct(x)) alone was sent as count(x): 16, not 4."""
    assert _same(databases, select(func.count(distinct(t.s))).where(t.pk == "P2")) == [(4,)]


@pytest.mark.parametrize(
    "statement",
    [
        select(t.pk, t.s, func.sum(t.n)).group_by(t.pk, t.s).having(func.count() > 3).order_by(t.pk, t.s),
        select(t.n, func.count().label("c"))
        .group_by(t.n)
        .having(func.sum(t.d) >= 5)
        .order_by(desc("c"), t.n)
        .limit(4)
        .offset(1),
        select(t.pk, func.max(t.d)).group_by(t.pk).having(func.min(t.n) < -2).order_by(func.max(t.d).desc()),
        select(t.s, func.avg(t.n)).group_by(t.s).having(func.avg(t.n).is_(None)),
    ],
)
def test_having_order_and_limit_over_the_groups_like_sqlite(databases, statement):
    _same(databases, statement)


@pytest.mark.parametrize(
    "statement",
    [
        select(t.s).distinct().order_by(t.s),
        select(t.pk, t.s).distinct().where(t.n > 0).order_by(t.s.desc(), t.pk).limit(5),
        select(t.n).distinct().where(t.pk == "P0").order_by(t.n.nulls_last()),
    ],
)
def test_distinct_like_sqlite(databases, statement):
    assert len(_same(databases, statement)) > 2


def test_the_program_is_the_planned_read_then_the_client():
    compiled = (
        select(t.s, func.sum(t.n))
        .where(t.pk == "P1", t.sk > 10)
        .group_by(t.s)
        .having(func.count() > 1)
        .order_by(t.s)
        .compile(dialect=DynamoDBDialect())
    )
    assert compiled.string == f'SELECT "s", "n" FROM "{things.name}" WHERE "pk" = ? AND "sk" > ?'
    plan = compiled.record.plan
    assert plan.operation == "Client"
    [read] = plan.steps
    assert (read.operation, read.key_condition, read.reason) == (
        "Query",
        '"pk" = ? AND "sk" > ?',
        f"{things.name} read by its own plan",
    )
    assert plan.client == (
        "GROUP BY; HAVING; ORDER BY; the rows the reads return are held (dynamodb_client_sort caps them "
        "when given)"
    )


def test_explain_shows_the_read_and_what_the_client_computes(databases):
    plan = sa_dynamo.explain(databases[0], select(t.pk, func.count()).group_by(t.pk))
    assert str(plan) == "\n".join(
        [
            "operation:     Client",
            f"table:         {things.name}",
            "step 1:",
            "  operation:     Scan",
            f"  table:         {things.name}",
            "  index:         -",
            "  key condition: -",
            "  filter:        -",
            f"  note:          {things.name} read by its own plan; the WHERE has no equality (= or IN) on its "
            "partition key 'pk'",
            f'  PartiQL:       SELECT "pk" FROM "{things.name}"',
            "on the client: GROUP BY; the rows the reads return are held (dynamodb_client_sort caps them "
            "when given)",
        ]
    )


def test_one_partition_costs_its_query_and_echo_shows_each_statement(databases, sent):
    statement = select(t.s, func.count()).where(t.pk == "P0").group_by(t.s).order_by(t.s)
    with databases[0].connect() as conn, requests_built(conn) as requests:
        conn.execute(statement).all()
    assert [operation for operation, _ in requests] == ["ExecuteStatement"]
    read = f'SELECT "s" FROM "{things.name}" WHERE "pk" = ?'
    assert sent == [read, read]  # the computed statement (its steps' text), then its one step


def test_the_scan_policy_decides_the_read(databases):
    statement = select(t.s, func.count()).group_by(t.s).execution_options(dynamodb_scan="error")
    with pytest.raises(sa_dynamo.exc.ScanNotAllowed):
        rows_of(databases[0], statement)


def test_a_transaction_groups_its_own_writes(databases):
    dynamodb, sqlite = databases
    statement = select(t.s, func.count(), func.sum(t.n)).where(t.pk == "P1").group_by(t.s).order_by(t.s)
    got = []
    for engine in databases:
        with engine.connect() as conn:
            conn.execute(insert(things).values(pk="P1", sk=1000, n=40, s="z"))
            conn.execute(things.update().where(t.pk == "P1", t.sk == 1).values(n=1000, s="a"))
            got.append([tuple(row) for row in conn.execute(statement)])
            conn.rollback()
    assert got[0] == got[1]
    assert ("z", 1, 40) in got[0]
    assert rows_of(dynamodb, statement) == rows_of(sqlite, statement)  # rolled back on both


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (select(t.pk, func.count()), "the column pk neither grouped nor aggregated: add it to GROUP BY"),
        (select(t.s, t.n).group_by(t.s), "the column n neither grouped nor aggregated"),
        (select(func.sum(t.n + 1)).select_from(things), "sum() of BinaryExpression: aggregate a column"),
        (
            select(literal_column("*")).select_from(things).group_by(t.s),
            "the literal column * in a SELECT computed on the client: name the columns",
        ),
    ],
)
def test_what_is_not_computed_is_refused_with_advice(databases, statement, message):
    with pytest.raises(CompileError, match="DynamoDB PartiQL cannot express") as raised:
        rows_of(databases[0], statement.execution_options(**SCAN))
    assert message in str(raised.value)


def test_the_cap_on_rows_held_raises_rather_than_cuts(databases):
    statement = select(t.s, func.count()).where(t.pk == "P0").group_by(t.s).order_by(t.s)
    with pytest.raises(OperationalError, match="more than dynamodb_client_sort=19 allows"):
        rows_of(databases[0], statement.execution_options(dynamodb_client_sort=19))
    assert sum(n for _, n in _same(databases, statement.execution_options(dynamodb_client_sort=20))) == 20


def test_sql_text_groups_the_same_way(databases):
    """SQL text becomes the same Core statement, so its GROUP BY is computed the same way."""
    sql = f"SELECT s, count(*), sum(n), min(d) FROM {things.name} WHERE pk = 'P1' GROUP BY s ORDER BY s"
    assert len(_same(databases, text(sql))) == 5
