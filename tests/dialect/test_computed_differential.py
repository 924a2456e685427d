"""A differential of the SELECTs the client computes: seeded random joins (inner and left outer,
1:N and N:1, by whole key, by partition key, on an index, over three tables), GROUP BY with every
aggregate and HAVING, aggregates over every row, DISTINCT, LIMIT and OFFSET, over data with NULLs
and dangling references, run on DynamoDB Local and on SQLite, in and out of a transaction that
wrote first: every row must agree. The seeds are fixed, so a run repeats the last."""

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
    Integer,
    Numeric,
    Table,
    distinct,
    func,
    join,
    or_,
    select,
)
from support.beside_sqlite import filled_alike, read_on_both
from support.shop import ShopDraws, shop_rows, shop_tables

metadata, customers, orders, lines = shop_tables("diff")
COLUMNS = {table: list(table.columns) for table in (customers, orders, lines)}
STATEMENTS = 125  # per seed and setting: 500 in all


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(
        engine,
        metadata,
        shop_rows(
            random.Random(29), (customers, orders, lines), customers=25, orders=50, lines=80, totals=(-5, 20)
        ),
    )


class Program(ShopDraws):
    """Draws one SELECT the client computes, and counts the kinds drawn."""

    def __init__(self, draw: random.Random):
        self.draw, self.kinds = draw, Counter()

    def source(self) -> tuple[list[Table], Any]:
        outer = self.draw.random() < 0.5
        shapes = {
            "one table": lambda: ([orders], orders),
            "N:1 by the whole key": lambda: (
                [orders, customers],
                join(orders, customers, customers.c.id == orders.c.customer_id, isouter=outer),
            ),
            "1:N on an index": lambda: (
                [customers, orders],
                join(customers, orders, orders.c.customer_id == customers.c.id, isouter=outer),
            ),
            "1:N by the partition key": lambda: (
                [orders, lines],
                join(orders, lines, lines.c.order_id == orders.c.id, isouter=outer),
            ),
            "three tables": lambda: (
                [lines, orders, customers],
                join(lines, orders, orders.c.id == lines.c.order_id, isouter=outer).join(
                    customers, customers.c.id == orders.c.customer_id, isouter=self.draw.random() < 0.5
                ),
            ),
        }
        shape = self.draw.choice(list(shapes))
        self.kinds[shape] += 1
        self.kinds["LEFT OUTER JOIN" if outer and shape != "one table" else "inner or none"] += 1
        return shapes[shape]()

    def aggregates(self, columns: list[Column]) -> list[Any]:
        numbers = [c for c in columns if isinstance(c.type, (Integer, Numeric))]
        made = []
        for _ in range(self.draw.randint(1, 3)):
            kind = self.draw.choice(["count", "count(x)", "count(distinct)", "sum", "avg", "min", "max"])
            self.kinds[kind] += 1
            column = self.draw.choice(numbers if kind in ("sum", "avg") else columns)
            if kind == "count":
                made.append(func.count())
            elif kind == "count(distinct)":
                made.append(func.count(distinct(column)))
            else:
                made.append(getattr(func, kind.removesuffix("(x)"))(column))
        return made

    def statement(self) -> Any:
        tables, source = self.source()
        columns = [c for table in tables for c in COLUMNS[table]]
        keys = [c for table in tables for c in table.primary_key]
        where = [self.term(columns) for _ in range(self.draw.randint(0, 2))]
        if self.draw.random() < 0.25:
            where = [or_(self.term(columns), self.term(columns))]
        mode = self.draw.choice(["rows", "GROUP BY", "aggregates", "DISTINCT"])
        self.kinds[mode] += 1
        if mode == "aggregates":
            return select(*self.aggregates(columns)).select_from(source).where(*where)
        if mode == "GROUP BY":
            grouped = self.draw.sample(columns, self.draw.randint(1, 2))
            statement = (
                select(*grouped, *self.aggregates(columns))
                .select_from(source)
                .where(*where)
                .group_by(*grouped)
                .order_by(*grouped)
            )
            if self.draw.random() < 0.4:
                self.kinds["HAVING"] += 1
                statement = statement.having(func.count() > self.draw.randint(0, 2))
        else:
            chosen = self.draw.sample(columns, self.draw.randint(1, 3))
            statement = select(*chosen).select_from(source).where(*where)
            statement = (
                statement.distinct().order_by(*chosen)
                if mode == "DISTINCT"
                else statement.order_by(*chosen, *keys)
            )
        if self.draw.random() < 0.3:
            self.kinds["LIMIT/OFFSET"] += 1
            statement = statement.limit(self.draw.randint(0, 6)).offset(self.draw.randint(0, 3))
        return statement


def _rows(conn: Any, statement: Any) -> list[tuple]:
    # SQLite's AVG and ours may differ in the last binary digit of a float only
    return [tuple(round(v, 9) if isinstance(v, float) else v for v in row) for row in conn.execute(statement)]


def _wrote(conn: Any) -> None:
    """Writes a transaction holds before it reads: a new customer and order, a change, a delete."""
    conn.execute(customers.insert().values(id="C77", name="a", tier=2, balance=Decimal("1.5")))
    conn.execute(orders.insert().values(id=77, customer_id="C77", total=9, status="open"))
    conn.execute(orders.update().where(orders.c.id == 3).values(customer_id="C1", total=None))
    conn.execute(lines.delete().where(lines.c.order_id == 7, lines.c.line_no == 5))


@pytest.mark.parametrize("in_transaction", [False, True], ids=["autocommit", "transaction"])
@pytest.mark.parametrize("seed", [1, 2])
def test_computed_selects_agree_with_sqlite(databases, seed, in_transaction):
    program = Program(random.Random(seed * 100 + in_transaction))
    statements = [program.statement() for _ in range(STATEMENTS)]
    got = read_on_both(databases, statements, _rows, _wrote if in_transaction else None)
    disagreements = [
        (str(statement), dynamodb[:5], sqlite[:5])
        for statement, dynamodb, sqlite in zip(statements, *got, strict=True)
        if dynamodb != sqlite
    ]
    assert disagreements == []
    assert sum(1 for rows in got[1] if rows) > STATEMENTS // 2  # most statements return rows
    kinds = {
        "N:1 by the whole key",
        "1:N on an index",
        "1:N by the partition key",
        "three tables",
        "LEFT OUTER JOIN",
        "GROUP BY",
        "HAVING",
        "DISTINCT",
        "aggregates",
        "count(distinct)",
        "sum",
        "avg",
        "LIMIT/OFFSET",
    }
    assert kinds <= set(program.kinds)
