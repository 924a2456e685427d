"""SQL text over the reads the client computes: COUNT(DISTINCT x) and ORDER BY a name the select
list gives (SQL's first meaning of the name), run by exec_driver_sql on DynamoDB Local and on
SQLite holding the same rows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table
from support.beside_sqlite import filled_alike

from sa_dynamo.sql_text import TranslationError

metadata = MetaData()
events = Table(
    f"text_events_{uuid.uuid4().hex[:8]}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("kind", String),
    Column("n", Integer),
)
ROWS = [{"pk": f"p{i}", "kind": "abc"[i % 3], "n": None if i % 5 == 0 else i % 4} for i in range(20)]
TEXTS = [
    "SELECT count(DISTINCT n) FROM {t}",
    "SELECT kind, count(DISTINCT n) AS d, count(*) AS c FROM {t} GROUP BY kind ORDER BY d DESC, kind",
    "SELECT kind, sum(n) AS total FROM {t} GROUP BY kind ORDER BY total DESC, kind",
    "SELECT n AS k, pk FROM {t} WHERE pk IN (?, ?, ?, ?) ORDER BY k DESC, pk",
    # a name the select list gives wins over the attribute of that name
    "SELECT kind AS n, pk FROM {t} WHERE pk IN (?, ?, ?, ?) ORDER BY n, pk",
]


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, {events: ROWS})


@pytest.mark.parametrize("sql", TEXTS)
def test_computed_text_like_sqlite(databases, sql):
    text = sql.format(t=events.name)
    parameters = ("p1", "p4", "p6", "p10")[: text.count("?")]
    got = []
    for engine in databases:
        with engine.connect().execution_options(dynamodb_scan="allow") as conn:
            got.append([tuple(row) for row in conn.exec_driver_sql(text, parameters)])
    assert got[0] == got[1]
    assert len(got[0]) > 0


def test_distinct_of_several_attributes_is_refused(databases):
    with databases[0].connect() as conn, pytest.raises(TranslationError, match="of several attributes"):
        conn.exec_driver_sql(f"SELECT count(DISTINCT n, kind) FROM {events.name}")
