"""JSON's null beside SQL's NULL, as SQLAlchemy tells them apart, on DynamoDB Local and SQLite
alike: a JSON column's None is JSON's null (a value: IS NOT NULL, counted, accepted by NOT NULL)
unless ``none_as_null=True``, ``JSON.NULL`` always is, ``null()`` never. DynamoDB stores JSON's
null as a NULL attribute and SQL's NULL as an absent one; both read back as None."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, func, insert, null, select, update
from sqlalchemy.exc import CompileError, IntegrityError
from support.beside_sqlite import filled_alike, read_on_both, same_outcome, same_rows

metadata = MetaData()
DOCS = Table(
    "json_nulls",
    metadata,
    Column("p", String, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("doc", JSON),
    Column("nulled", JSON(none_as_null=True)),
)
REQUIRED = Table(
    "json_nulls_required",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("doc", JSON, nullable=False),
    Column("nulled", JSON(none_as_null=True), nullable=False),
)
ROWS = [
    {"p": "a", "n": 1, "doc": None, "nulled": None},
    {"p": "a", "n": 2, "doc": JSON.NULL, "nulled": JSON.NULL},
    {"p": "a", "n": 3, "doc": null(), "nulled": null()},
    {"p": "a", "n": 4, "doc": {"k": 1}, "nulled": [1, None]},
    {"p": "b", "n": 5, "doc": null(), "nulled": null()},
]


@pytest.fixture(scope="module")
def databases(engine) -> Iterator[tuple[Any, Any]]:
    yield from filled_alike(engine, metadata, {DOCS: ROWS})


def _tests() -> list[Any]:
    """Every test of NULL a column can take, and comparisons whose negation SQL's NULL makes
    unknown, in the WHERE of a Query and of a Scan; its COUNT."""
    found = []
    for column, stored in ((DOCS.c.doc, {"k": 1}), (DOCS.c.nulled, [1, None])):
        for where in (
            column.is_(None),
            column.is_not(None),
            ~column.is_(None),
            column == stored,
            column != stored,
            ~(column == stored),
            column != JSON.NULL,
        ):
            found += [select(DOCS.c.n).where(DOCS.c.p == "a", where), select(DOCS.c.n).where(where)]
        found += [
            select(func.count(column)).where(DOCS.c.p == "a"),
            select(func.count(column)),
            select(DOCS.c.n).where(column == JSON.NULL),
        ]
    return found


TESTS = _tests()


@pytest.mark.parametrize("statement", TESTS, ids=[str(i) for i in range(len(TESTS))])
def test_null_tests_and_counts_agree_with_sqlite(databases, statement):
    same_rows(databases, statement.order_by(DOCS.c.n), dynamodb_scan="allow", dynamodb_client_sort=100)


def test_both_nulls_read_back_as_none(databases):
    rows = same_rows(databases, select(DOCS).where(DOCS.c.p == "a").order_by(DOCS.c.n))
    assert [(row[2], row[3]) for row in rows] == [(None, None)] * 3 + [({"k": 1}, [1, None])]


def test_json_null_is_stored_as_a_null_attribute(databases, raw):
    item = raw.get_item(TableName=DOCS.name, Key={"p": {"S": "a"}, "n": {"N": "1"}})["Item"]
    assert item["doc"] == {"NULL": True} and "nulled" not in item


def test_the_writes_of_a_transaction_are_tested_as_stored(databases):
    """The reads of a transaction lay its writes over what DynamoDB returns, and test them in
    Python: the same rows."""

    def wrote(conn):
        conn.execute(update(DOCS).where(DOCS.c.p == "a", DOCS.c.n == 4), {"doc": None, "nulled": None})
        conn.execute(update(DOCS).where(DOCS.c.p == "a", DOCS.c.n == 1), {"doc": null(), "nulled": JSON.NULL})
        conn.execute(insert(DOCS), [{"p": "a", "n": 6, "doc": None}, {"p": "a", "n": 7, "doc": null()}])

    statements = [s for s in TESTS if "count" not in str(s)] + [select(func.count(DOCS.c.doc))]
    dynamodb, sqlite = read_on_both(
        databases, statements, lambda conn, s: conn.execute(s.order_by(DOCS.c.n)).all(), wrote
    )
    assert dynamodb == sqlite


def _stored(engine: Any) -> list[tuple]:
    with engine.connect() as conn:
        return sorted(conn.execute(select(REQUIRED).execution_options(dynamodb_scan="allow")).all())


def _outcome(engine: Any, statement: Any, values: dict[str, Any]) -> Any:
    try:
        with engine.begin() as conn:
            return conn.execute(statement, values).rowcount
    except IntegrityError:
        return IntegrityError


@pytest.mark.parametrize(
    "doc, nulled",
    [(None, JSON.NULL), (JSON.NULL, JSON.NULL), (null(), JSON.NULL), (None, None), ({}, null())],
    ids=["None", "JSON.NULL", "null()", "none_as_null None", "none_as_null null()"],
)
def test_not_null_takes_json_null_and_refuses_sql_null(databases, doc, nulled):
    """On INSERT and on UPDATE: NOT NULL takes JSON's null, as SQL does, and refuses SQL's."""
    values = {"doc": doc, "nulled": nulled}

    def step(engine: Any) -> tuple[Any, Any]:
        _outcome(engine, insert(REQUIRED), {"id": 1, "doc": {"v": 1}, "nulled": {"v": 1}})
        return (
            _outcome(engine, update(REQUIRED).where(REQUIRED.c.id == 1), values),
            _outcome(engine, insert(REQUIRED), {"id": 2, **values}),
        )

    try:
        assert same_outcome(databases, step, _stored) != (1, 1) or nulled is JSON.NULL
    finally:
        for engine in databases:
            for key in (1, 2):
                _outcome(engine, REQUIRED.delete().where(REQUIRED.c.id == key), {})


@pytest.mark.parametrize(
    "statement",
    [
        select(DOCS.c.p, func.count(DOCS.c.doc)).group_by(DOCS.c.p),
        select(func.count(DOCS.c.nulled), func.count()).where(DOCS.c.p == "a"),
    ],
    ids=["grouped", "beside another aggregate"],
)
def test_a_count_of_a_json_column_the_client_would_compute_is_refused(databases, sent, statement):
    """The rows the client aggregates hold None for both nulls, so its COUNT would miss JSON's
    null: refused before anything is sent, rather than a count other than SQLite's."""
    with databases[0].connect() as conn, pytest.raises(CompileError, match="computed on the client"):
        conn.execute(statement.execution_options(dynamodb_scan="allow"))
    assert sent == []
