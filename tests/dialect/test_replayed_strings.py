"""str(compiled), run as SQL text on the same engine, gives the statement's rows: the ORDER BY,
LIMIT and OFFSET the driver applies are written after the PartiQL sent, and the attributes read
only for its sorting are left out; a statement the client computes says that its string is only
the reads it sends, which the text path refuses. The statement's rows are SQLite's."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, func, select
from support.beside_sqlite import filled_alike, same_rows

from sa_dynamo.sql_text import TranslationError
from sa_dynamo.sqlalchemy_private import limit_clause, offset_clause

metadata = MetaData()
t = Table(
    f"replay_{uuid.uuid4().hex[:8]}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("n", Integer),
)
u = Table(f"replay_u_{uuid.uuid4().hex[:8]}", metadata, Column("id", String, primary_key=True))
ROWS = [{"pk": "a", "sk": f"s{i}", "n": None if i == 3 else (7 * i) % 5} for i in range(6)] + [
    {"pk": "b", "sk": "s0", "n": 1}
]
in_a = t.c.pk == "a"
OPTIONS = {"dynamodb_client_sort": 100, "dynamodb_scan": "allow"}
READS = {
    "order by a non-key, limit": select(t.c.sk).where(in_a).order_by(t.c.n, t.c.sk).limit(2),
    "order by a non-key, offset": select(t.c.sk, t.c.n).where(in_a).order_by(t.c.n.desc(), t.c.sk).offset(1),
    "nulls last": select(t.c.sk).where(in_a).order_by(t.c.n.nulls_last(), t.c.sk),
    "limit": select(t.c.sk, t.c.n).where(in_a).limit(3),
    "offset": select(t.c.sk).where(in_a).offset(4),
    "order, limit, offset": select(t.c.n).where(in_a).order_by(t.c.n.desc(), t.c.sk).limit(2).offset(1),
    "sort key descending, limit, offset": select(t.c.n)
    .where(in_a)
    .order_by(t.c.sk.desc())
    .limit(3)
    .offset(1),
}
COMPUTED = {
    "join": select(t.c.sk, u.c.id).join_from(t, u, t.c.sk == u.c.id).where(in_a),
    "group by": select(t.c.pk, func.count()).group_by(t.c.pk).order_by(t.c.pk),
}


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, {t: ROWS, u: [{"id": "s1"}, {"id": "s2"}]})


@pytest.mark.parametrize("name", READS)
def test_literal_string_gives_the_rows(databases, name):
    statement = READS[name]
    rows = same_rows(databases, statement, **OPTIONS)
    string = str(statement.compile(databases[0], compile_kwargs={"literal_binds": True}))
    with databases[0].connect().execution_options(**OPTIONS) as conn:
        assert [tuple(r) for r in conn.exec_driver_sql(string)] == rows


@pytest.mark.parametrize("name", READS)
def test_string_with_parameters_gives_the_rows(databases, name):
    """The ``?`` of LIMIT and OFFSET come last, after those of the PartiQL sent."""
    statement = READS[name]
    rows = same_rows(databases, statement, **OPTIONS)
    compiled = statement.compile(databases[0])
    counts = (c.value for c in (limit_clause(statement), offset_clause(statement)) if c is not None)
    values = (*(compiled.params[p] for p in compiled.positiontup), *counts)
    with databases[0].connect().execution_options(**OPTIONS) as conn:
        assert [tuple(r) for r in conn.exec_driver_sql(str(compiled), values)] == rows


def test_what_is_sent_is_the_partiql(databases, sent):
    statement = READS["order by a non-key, limit"]
    compiled = statement.compile(databases[0], compile_kwargs={"literal_binds": True})
    assert compiled.string == f'SELECT "sk", "n" FROM "{t.name}" WHERE "pk" = \'a\''
    assert str(compiled) == f'SELECT "sk" FROM "{t.name}" WHERE "pk" = \'a\' ORDER BY "n", "sk" LIMIT 2'
    with databases[0].connect().execution_options(**OPTIONS) as conn:
        conn.execute(statement).all()
    assert sent == [f'SELECT "sk", "n" FROM "{t.name}" WHERE "pk" = ?']


@pytest.mark.parametrize("name", COMPUTED)
def test_computed_string_is_refused_as_text(databases, name):
    statement = COMPUTED[name]
    assert same_rows(databases, statement, **OPTIONS)
    string = str(statement.compile(databases[0], compile_kwargs={"literal_binds": True}))
    with (
        databases[0].connect() as conn,
        pytest.raises(TranslationError, match="execute the statement itself"),
    ):
        conn.exec_driver_sql(string)
