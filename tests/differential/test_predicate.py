"""The Python predicate the compiler builds beside each WHERE selects exactly SQLite's rows: the
same random filters as the oracle, evaluated over the oracle's items as DynamoDB stores them
(numbers as Decimal, None as an absent attribute). Nothing is sent to DynamoDB."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import create_engine, event
from sqlalchemy.exc import CompileError

from sa_dynamo.dialect.base import DynamoDBDialect
from sa_dynamo.dialect.compiler.predicate import values_of

from .grammar import SEED, Generator, Grammar, make_rows, make_table

STATEMENTS = 1500


def _stored(value):
    return Decimal(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def test_the_predicate_selects_sqlites_rows():
    table = make_table("predicate_items")
    rows = make_rows(SEED)
    sqlite = create_engine("sqlite://")
    event.listen(sqlite, "connect", lambda conn, _: conn.execute("PRAGMA case_sensitive_like = ON"))
    table.metadata.create_all(sqlite)
    items = [{k: _stored(v) for k, v in row.items() if v is not None} for row in rows]
    dialect = DynamoDBDialect()
    generator = Generator(table, 20261124, Grammar())
    compared = 0
    with sqlite.begin() as conn:
        conn.execute(table.insert(), rows)
        for _ in range(STATEMENTS):
            statement = generator.case().statement.limit(None)
            try:
                compiled = statement.compile(dialect=dialect)
            except CompileError:
                continue
            values = values_of(compiled, compiled.construct_params())
            expected = {(row.pk, row.sk) for row in conn.execute(statement)}
            actual = {(i["pk"], i["sk"]) for i in items if compiled.record.predicate(i, values)}
            assert actual == expected, f"{statement.compile(sqlite)} {compiled.construct_params()}"
            compared += 1
    assert compared > STATEMENTS * 0.9
