"""Types and NULL at the edges, each case run by the same SQLAlchemy code on SQLite (the judge) and
on DynamoDB Local: the rows, rowcounts and final table agree, or DynamoDB refuses before sending.

Inside a transaction the items it wrote are tested by the Python predicate, and an UPDATE or
DELETE tests the item it reads first: the cases run there too, so both sides of the overlay
(DynamoDB's filter, the predicate) are judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Double,
    Engine,
    Float,
    Integer,
    MetaData,
    Numeric,
    Table,
    create_engine,
    insert,
    select,
    update,
)


@pytest.fixture
def engines(endpoint_url: str) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")
    yield sqlite, dynamodb
    sqlite.dispose()
    dynamodb.dispose()


def on_both(
    engines: tuple[Engine, Engine], table: Table, rows: list[dict], run: Callable[[Engine], Any]
) -> tuple[Any, Any]:
    """``run``'s result on SQLite and on DynamoDB, each over a fresh ``table`` holding ``rows``."""
    results = []
    for engine in engines:
        table.metadata.create_all(engine)
        try:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(insert(table), rows)
            results.append(run(engine))
        finally:
            table.metadata.drop_all(engine)
    return results[0], results[1]


def final(engine: Engine, table: Table) -> list[tuple]:
    with engine.connect() as conn:
        return sorted(conn.execute(select(table)).all())


def test_float_columns_compare_as_sent_inside_a_transaction(engines, table_name):
    """A Float, Double or Numeric(asdecimal=False) value is stored as the number its shortest
    repr says: compared with the same float, in a transaction too, it is equal."""
    t = Table(
        table_name,
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("x", Float),
        Column("d", Double),
        Column("m", Numeric(asdecimal=False)),
        Column("n", Integer),
    )
    committed = [
        {"id": 1, "x": 0.7, "d": 2.675, "m": 0.3, "n": 0},
        {"id": 2, "x": 0.1 + 0.2, "d": 1e-7, "m": 19.99, "n": 0},
    ]

    def run(engine: Engine) -> Any:
        with engine.begin() as conn:
            conn.execute(insert(t), {"id": 3, "x": 0.1, "d": 2.675, "m": 0.3, "n": 0})
            counts = [
                conn.execute(update(t).where(t.c.id == key, condition).values(n=5)).rowcount
                for key, condition in [
                    (1, t.c.x == 0.7),
                    (1, t.c.d == 2.675),
                    (2, t.c.x == 0.30000000000000004),
                    (2, t.c.m >= 19.99),
                    (3, t.c.x == 0.1),
                    (3, t.c.m <= 0.3),
                    (2, t.c.x == 0.3),  # 0.1 + 0.2 is not 0.3
                ]
            ]
            reads = [
                sorted(conn.scalars(select(t.c.id).where(condition)))
                for condition in [
                    t.c.x == 0.1,
                    t.c.x >= 0.1,
                    t.c.d == 2.675,
                    t.c.m.in_([0.3, 19.99]),
                    t.c.x.between(0.1, 0.7),
                    t.c.d != 1e-7,
                ]
            ]
        return counts, reads, final(engine, t)

    expected, actual = on_both(engines, t, committed, run)
    assert actual == expected
    assert expected[0] == [1, 1, 1, 1, 1, 1, 0]
