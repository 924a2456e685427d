"""LIKE and its relatives tested on the client, over joined rows (the outer side of a LEFT
JOIN's WHERE, an OR across the joined tables) and over a transaction's own writes: SQL's LIKE
as SQLite answers it (% and _ wildcards, an escape character, NULL unknown), case-sensitive as
begins_with is on one table (SQLite with PRAGMA case_sensitive_like), over values that hold %,
_ and both cases."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Column, Engine, MetaData, String, Table, bindparam, or_, select
from support.beside_sqlite import filled_alike, rows_of

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
people = Table(
    f"like_people_{suffix}", metadata, Column("id", String, primary_key=True), Column("name", String)
)
notes = Table(
    f"like_notes_{suffix}",
    metadata,
    Column("id", String, primary_key=True),
    Column("person_id", String, index=True),
    Column("body", String),
)
p, n = people.c, notes.c

NAMES = ["t%x", "tx", None, "T_y", "%", "t_", "t", "", "t\nx", "Tx", "t/%"]
BODIES = ["t%", "tz", "%x", None, "_", "T%", "t_z", "", "t", "a/b"]
PEOPLE = [{"id": f"p{i}", "name": name} for i, name in enumerate(NAMES)]
# p2 and p5 have no note, n9's person does not exist
NOTES = [
    {"id": f"n{i}", "person_id": f"p{i if i not in (2, 5) else 20 + i}", "body": body}
    for i, body in enumerate(BODIES)
]


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    for dynamodb, sqlite in filled_alike(engine, metadata, {people: PEOPLE, notes: NOTES}):
        with sqlite.connect() as conn:  # the in-memory database is this one connection
            conn.exec_driver_sql("PRAGMA case_sensitive_like = ON")
        yield dynamodb.execution_options(dynamodb_scan="allow"), sqlite


TESTS = {
    "like prefix": lambda c: c.like("t%"),
    "like everything": lambda c: c.like("%"),
    "like escaped": lambda c: c.like("t/%%", escape="/"),
    "like one character": lambda c: c.like("t_"),
    "like infix": lambda c: c.like("%x%"),
    "like a parameter": lambda c: c.like(bindparam("pattern", "T%")),
    "like NULL": lambda c: c.like(bindparam("pattern", None, type_=String)),
    "like ending in its escape": lambda c: c.like("t/", escape="/"),
    "not like": lambda c: c.not_like("t%"),
    "not like escaped": lambda c: c.not_like("%/_%", escape="/"),
    "not like NULL": lambda c: c.not_like(bindparam("pattern", None, type_=String)),
    "startswith autoescape": lambda c: c.startswith("t%", autoescape=True),
    "startswith an escape": lambda c: c.startswith("t^_", escape="^"),
    "not startswith autoescape": lambda c: ~c.startswith("t_", autoescape=True),
    "contains autoescape": lambda c: c.contains("/", autoescape=True),
    "not contains autoescape": lambda c: ~c.contains("%", autoescape=True),
}
WRITTEN = [{"id": "w1", "name": "t%w"}, {"id": "w2", "name": "tw"}, {"id": "w3", "name": "u_"}]
JOINED = people.outerjoin(notes, n.person_id == p.id)


def _same(databases: tuple[Engine, Engine], statement: Any) -> list[tuple]:
    dynamodb, sqlite = databases
    expected = sorted(rows_of(sqlite, statement), key=repr)
    assert sorted(rows_of(dynamodb, statement), key=repr) == expected
    return expected


@pytest.mark.parametrize("test", list(TESTS.values()), ids=list(TESTS))
def test_on_the_outer_side_of_a_left_join(databases, test):
    _same(databases, select(p.id, n.id).select_from(JOINED).where(test(n.body)))


@pytest.mark.parametrize("test", list(TESTS.values()), ids=list(TESTS))
def test_in_an_or_across_the_joined_tables(databases, test):
    _same(databases, select(p.id, n.id).select_from(JOINED).where(or_(test(p.name), n.body == "tz")))


def test_the_prefix_the_rows_were_sent_for_is_matched_literally(databases):
    """The case of the issue: LIKE 't%' matches every body beginning with t, % and _ included."""
    rows = _same(databases, select(n.id).select_from(JOINED).where(n.body.like("t%")))
    assert rows == [("n0",), ("n1",), ("n6",), ("n8",)]


@pytest.mark.parametrize("name", ["like prefix", "startswith autoescape", "not like"])
def test_over_a_transactions_own_writes(databases, name):
    """One table, the items a transaction wrote tested on the client: the same answer."""
    statement = select(p.id).where(TESTS[name](p.name))
    got = []
    for engine in databases:
        with engine.connect() as conn:
            conn.execute(people.insert(), WRITTEN)
            got.append(sorted(tuple(row) for row in conn.execute(statement)))
            conn.rollback()
    assert got[0] == got[1]
    assert {("w1",), ("w2",), ("w3",)} & set(got[1])  # some written item matches
