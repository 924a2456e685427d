"""IN and NOT IN with an empty list, as SQL (and SQLite) answer them: ``x IN ()`` matches no
row, ``x NOT IN ()`` every row, a NULL or missing x included, anywhere in the WHERE. DynamoDB
rejects ``IN []``: a top-level IN of no values sends nothing, elsewhere the execution writes
the constant; on a sparse index's key an empty NOT IN is refused (the index lacks rows it
matches)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, bindparam, func, or_, select, tuple_
from support.beside_sqlite import filled_alike, rows_of
from support.sent import operations_sent

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
items = Table(
    f"empty_in_{suffix}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("x", Integer),
)
others = Table(
    f"empty_in_others_{suffix}",
    metadata,
    Column("id", String, primary_key=True),
    Column("item_pk", String, index=True),
    Column("y", Integer),
)
t, o = items.c, others.c
ITEMS = [{"pk": "a", "sk": str(i), "x": None if i % 3 == 0 else i} for i in range(8)] + [
    {"pk": "b", "sk": "1", "x": 1}
]
OTHERS = [{"id": "o1", "item_pk": "a", "y": 1}, {"id": "o2", "item_pk": "a", "y": None}]


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    for dynamodb, sqlite in filled_alike(engine, metadata, {items: ITEMS, others: OTHERS}):
        yield dynamodb.execution_options(dynamodb_scan="allow"), sqlite


PINNED = t.pk == "a"
JOINED = items.outerjoin(others, o.item_pk == t.pk)
STATEMENTS = {
    "NOT IN, a scan": select(t.pk, t.sk).where(t.x.not_in([])),
    "NOT IN, a query": select(t.pk, t.sk).where(PINNED, t.x.not_in([])),
    "NOT IN beside ORDER BY": select(t.pk, t.sk).where(PINNED, t.x.not_in([])).order_by(t.sk.desc()),
    "IN in an OR": select(t.pk, t.sk).where(PINNED, or_(t.x.in_([]), t.x == 1)),
    "NOT IN in an OR": select(t.pk, t.sk).where(PINNED, or_(t.x.not_in([]), t.x == 1)),
    "NOT of IN": select(t.pk, t.sk).where(PINNED, ~t.x.in_([])),
    "NOT of an OR with IN": select(t.pk, t.sk).where(PINNED, ~or_(t.x.in_([]), t.x == 1)),
    "NOT IN on the partition key": select(t.pk, t.sk).where(t.pk.not_in([])),
    "NOT IN on the sort key": select(t.pk, t.sk).where(PINNED, t.sk.not_in([])),
    "COUNT with NOT IN": select(func.count()).select_from(items).where(PINNED, t.x.not_in([])),
    "outer side, NOT IN": select(t.sk, o.id).select_from(JOINED).where(PINNED, o.y.not_in([])),
    "outer side, IN in an OR": select(t.sk, o.id)
    .select_from(JOINED)
    .where(PINNED, or_(o.y.in_([]), t.x == 1)),
}
# a top-level IN of no values: no row, nothing sent
NOTHING = {
    "IN, a scan": select(t.pk, t.sk).where(t.x.in_([])),
    "IN, a query": select(t.pk, t.sk).where(PINNED, t.x.in_([])),
    "IN on the partition key": select(t.pk, t.sk).where(t.pk.in_([])),
    "IN on the sort key": select(t.pk, t.sk).where(PINNED, t.sk.in_([])),
    "a list of full keys": select(t.pk, t.sk).where(tuple_(t.pk, t.sk).in_([])),
    "a parameter's empty list": select(t.pk, t.sk).where(
        PINNED, t.x.in_(bindparam("xs", [], expanding=True))
    ),
}


def _rows(engine: Engine, statement: Any) -> list[tuple]:
    return sorted(rows_of(engine, statement), key=repr)


@pytest.mark.parametrize("statement", list(STATEMENTS.values()), ids=list(STATEMENTS))
def test_sqlites_rows(databases, statement):
    dynamodb, sqlite = databases
    expected = _rows(sqlite, statement)
    assert _rows(dynamodb, statement) == expected
    assert expected  # NOT IN () holds for rows whose x is NULL too


@pytest.mark.parametrize("statement", list(NOTHING.values()), ids=list(NOTHING))
def test_a_top_level_in_of_no_values_sends_nothing(databases, statement):
    dynamodb, sqlite = databases
    assert _rows(sqlite, statement) == []
    with dynamodb.connect() as conn, operations_sent(conn) as sent:
        assert conn.execute(statement).all() == []
    assert sent == []
