"""What SQL means and DynamoDB's requests cannot say directly, answered as SQLite does: a COUNT
over a list of full keys (a batch of key reads, counted on the client), and an empty prefix of a
key (``sk LIKE '%'``: TRUE for every item, since none lacks its key; DynamoDB rejects the empty
key value, so ``? = ''`` is sent in its place)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, func, or_, select, tuple_
from support.beside_sqlite import filled_alike, rows_of

metadata = MetaData()
items = Table(
    f"key_counts_{uuid.uuid4().hex[:8]}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("x", Integer),
)
t = items.c
ROWS = [{"pk": p, "sk": str(i), "x": None if i == 2 else i} for p in "ab" for i in range(5)]
KEYS = [("a", "1"), ("a", "2"), ("b", "9"), ("a", "1"), ("b", "4")]  # one absent, one repeated


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    for dynamodb, sqlite in filled_alike(engine, metadata, {items: ROWS}):
        yield dynamodb.execution_options(dynamodb_scan="allow"), sqlite


STATEMENTS = {
    "COUNT(*) of full keys": select(func.count()).where(tuple_(t.pk, t.sk).in_(KEYS)),
    "COUNT(x) of full keys": select(func.count(t.x)).select_from(items).where(tuple_(t.pk, t.sk).in_(KEYS)),
    "COUNT of full keys and a filter": select(func.count()).where(tuple_(t.pk, t.sk).in_(KEYS), t.x > 1),
    "startswith('') of the sort key": select(t.pk, t.sk).where(t.pk == "a", t.sk.startswith("")),
    "LIKE '%' of the sort key": select(t.pk, t.sk).where(t.pk == "a", t.sk.like("%")),
    "NOT startswith('') of the sort key": select(t.pk, t.sk).where(t.pk == "a", ~t.sk.startswith("")),
    "startswith('') in an OR": select(t.pk, t.sk).where(t.pk == "b", or_(t.sk.startswith(""), t.x == 1)),
    "startswith('') of the partition key": select(t.pk, t.sk).where(t.pk.startswith("")),
    "COUNT with startswith('')": select(func.count())
    .select_from(items)
    .where(t.pk == "a", t.sk.startswith("")),
}


@pytest.mark.parametrize("statement", list(STATEMENTS.values()), ids=list(STATEMENTS))
def test_sqlites_rows(databases, statement):
    dynamodb, sqlite = databases
    expected = sorted(rows_of(sqlite, statement))
    assert sorted(rows_of(dynamodb, statement)) == expected
