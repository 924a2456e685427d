"""A differential beside test_computed_differential.py: seeded random semi-joins (IN, NOT IN,
EXISTS, NOT EXISTS, over one table or a join, their subqueries with NULLs and empty results),
ORDER BY over a scan with LIMIT and OFFSET, and UPDATE/DELETE by a WHERE that names no key (with
semi-joins among its terms), in Core and through the ORM's bulk statements, in and out of a
transaction, run on DynamoDB Local and on SQLite: every row, every rowcount and every table
after the writes must agree. The seeds are fixed, so a run repeats the last."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Engine,
    Table,
    delete,
    exists,
    join,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, registry
from support.beside_sqlite import filled_alike, read_on_both
from support.shop import ShopDraws, shop_rows, shop_tables


def pairs(tables: tuple[Table, Table, Table]) -> list[tuple[Column, Column]]:
    """The (outer column, inner column) pairs a semi-join compares."""
    customers, orders, lines = (t.c for t in tables)
    return [
        (orders.customer_id, customers.id),
        (customers.id, orders.customer_id),
        (orders.id, lines.order_id),
        (lines.order_id, orders.id),
        (customers.tier, lines.qty),
        (orders.total, lines.qty),
    ]


metadata, *TABLES = shop_tables("sdiff")
customers, orders, lines = TABLES
written, *WRITTEN = shop_tables("sdiffw")
SELECTS = 90  # per seed and setting: 360 in all
WRITES = 30  # per seed, setting and API: 240 in all
GROUP = 6  # writes in one transaction, then every table compared


class Mapped:
    """The ORM's view of the tables, for its bulk UPDATE and DELETE."""


mapped = {}
for table in WRITTEN:
    mapped[table] = type(f"Row_{table.name}", (Mapped,), {})
    registry().map_imperatively(mapped[table], table)


def _data(draw: random.Random, scale: int, tables: Any) -> dict[Table, list[dict[str, Any]]]:
    return shop_rows(draw, tables, customers=5 * scale, orders=8 * scale, lines=10 * scale, totals=(-1, 5))


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, _data(random.Random(34), 5, TABLES))


class Program(ShopDraws):
    """Draws statements, and counts the kinds drawn."""

    integers = (-1, 5)

    def __init__(self, draw: random.Random, tables: tuple[Table, Table, Table]):
        self.draw, self.kinds, self.tables, self.pairs = draw, Counter(), tables, pairs(tables)

    def where(self, table: Table, most: int) -> list[Any]:
        terms = [self.term(list(table.columns)) for _ in range(self.draw.randint(0, most))]
        if self.draw.random() < 0.2:
            terms = [or_(self.term(list(table.columns)), self.term(list(table.columns)))]
        return terms

    def semi_join(self, outer_tables: list[Table]) -> Any:
        """An IN, NOT IN, EXISTS or NOT EXISTS on a column of one of ``outer_tables``."""
        usable = [p for p in self.pairs if p[0].table in outer_tables and p[1].table not in outer_tables]
        outer, inner = self.draw.choice(usable)
        kind = self.draw.choice(["IN", "NOT IN", "EXISTS", "NOT EXISTS"])
        self.kinds[kind] += 1
        terms = self.where(inner.table, 2)
        if kind in ("IN", "NOT IN"):
            if self.draw.random() < 0.3:
                terms.append(inner.is_not(None))  # NOT IN without a NULL to stop it
            subquery = select(inner).where(*terms)
            return outer.in_(subquery) if kind == "IN" else outer.not_in(subquery)
        found = exists().where(inner == outer, *terms)
        return found if kind == "EXISTS" else ~found

    def select(self) -> Any:
        shape = self.draw.choice(["semi-join", "semi-join over a join", "ORDER BY over a scan"])
        self.kinds[shape] += 1
        customers, orders, _ = self.tables
        if shape == "semi-join over a join":
            tables, source = (
                [orders, customers],
                join(orders, customers, customers.c.id == orders.c.customer_id),
            )
        else:
            table = self.draw.choice(self.tables)
            tables, source = [table], table
        columns = [c for t in tables for c in t.columns]
        keys = [c for t in tables for c in t.primary_key]
        where = [term for t in tables for term in self.where(t, 1)]
        if shape != "ORDER BY over a scan":
            where.append(self.semi_join(tables))
        chosen = self.draw.sample(columns, self.draw.randint(1, 3))
        ordered = [c.desc() if self.draw.random() < 0.3 else c for c in chosen]
        statement = select(*chosen).select_from(source).where(*where).order_by(*ordered, *keys)
        if self.draw.random() < 0.3:
            self.kinds["LIMIT/OFFSET"] += 1
            statement = statement.limit(self.draw.randint(0, 6)).offset(self.draw.randint(0, 3))
        return statement

    def write(self, orm: bool) -> Any:
        table = self.draw.choice(self.tables)
        target = mapped[table] if orm else table
        keys = {c.name for c in table.primary_key}
        where = self.where(table, 2)
        if self.draw.random() < 0.5:
            where.append(self.semi_join([table]))
        if self.draw.random() < 0.15:
            self.kinds["DELETE"] += 1  # a narrow one, so that the tables keep rows to write
            return delete(target).where(
                *where, self.term(list(table.columns)), self.term(list(table.columns))
            )
        self.kinds["UPDATE"] += 1
        column = self.draw.choice([c for c in table.columns if c.name not in keys])
        value = None if self.draw.random() < 0.2 else self.value(column)
        return update(target).where(*where).values({column.name: value})


def _rows(conn: Any, statement: Any) -> list[tuple]:
    return [tuple(row) for row in conn.execute(statement)]


def _wrote(conn: Any) -> None:
    """Writes a transaction holds before it reads: a new customer and order, a change, a delete."""
    conn.execute(customers.insert().values(id="C77", name="a", tier=2, balance=Decimal("1.5")))
    conn.execute(orders.insert().values(id=77, customer_id="C77", total=3, status="open"))
    conn.execute(orders.update().where(orders.c.id == 3).values(customer_id="C1", total=None))
    conn.execute(lines.delete().where(lines.c.order_id == 7, lines.c.line_no == 5))


def _disagreements(statements: list[Any], dynamodb: list[Any], sqlite: list[Any]) -> list[Any]:
    return [
        (str(statement), ours, theirs)
        for statement, ours, theirs in zip(statements, dynamodb, sqlite, strict=True)
        if ours != theirs
    ]


@pytest.mark.parametrize("in_transaction", [False, True], ids=["autocommit", "transaction"])
@pytest.mark.parametrize("seed", [1, 2])
def test_semi_joins_and_sorted_scans_agree_with_sqlite(databases, seed, in_transaction):
    program = Program(random.Random(seed * 100 + in_transaction), TABLES)
    statements = [program.select() for _ in range(SELECTS)]
    got = read_on_both(databases, statements, _rows, _wrote if in_transaction else None)
    assert _disagreements(statements, *got) == []
    assert sum(1 for rows in got[1] if rows) > SELECTS // 2  # most statements return rows
    assert {"IN", "NOT IN", "EXISTS", "NOT EXISTS", "semi-join over a join", "ORDER BY over a scan"} <= set(
        program.kinds
    )


@pytest.fixture
def writable(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    """Small tables (fewer items than a transaction's 100 actions), filled afresh for each test."""
    yield from filled_alike(engine, written, _data(random.Random(35), 2, WRITTEN))


def _tables(conn: Any) -> list[list[tuple]]:
    return [_rows(conn, select(t).order_by(*t.primary_key)) for t in WRITTEN]


@pytest.mark.parametrize("orm", [False, True], ids=["core", "orm"])
@pytest.mark.parametrize("in_transaction", [False, True], ids=["autocommit", "transaction"])
@pytest.mark.parametrize("seed", [1, 2])
def test_writes_by_any_where_agree_with_sqlite(writable, seed, in_transaction, orm):
    """GROUP writes at a time (one transaction), each rowcount compared, then every table."""
    program = Program(random.Random(seed * 1000 + in_transaction * 10 + orm), WRITTEN)
    statements = [program.write(orm) for _ in range(WRITES)]
    dynamodb, sqlite = writable
    dynamodb = dynamodb.execution_options(dynamodb_scan="allow", dynamodb_client_sort=1000)
    counts: list[list[int]] = [[], []]
    tables: list[list[Any]] = [[], []]
    for number, engine in enumerate((dynamodb, sqlite)):
        if not in_transaction:
            engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        for start in range(0, WRITES, GROUP):
            with Session(engine) if orm else engine.connect() as conn:
                for statement in statements[start : start + GROUP]:
                    counts[number].append(conn.execute(statement).rowcount)
                if in_transaction:
                    tables[number].append(_tables(conn))  # the transaction reads its own writes
                    conn.commit()
            with engine.connect() as conn:
                tables[number].append(_tables(conn))
    assert _disagreements(statements, *counts) == []
    assert tables[0] == tables[1]
    assert sum(1 for count in counts[1] if count) > WRITES // 4  # many writes change something
    assert {"UPDATE", "DELETE", "IN", "NOT IN", "EXISTS", "NOT EXISTS"} <= set(program.kinds)
