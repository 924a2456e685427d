"""Customers, their orders and the orders' lines: the three tables that the join and computed-read
tests share, each test module under names of its own, with the rows and WHERE terms their
differentials draw."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table


def shop_tables(prefix: str) -> tuple[MetaData, Table, Table, Table]:
    """customers by id, orders by id with an index on customer_id, lines by (order_id, line_no)."""
    metadata = MetaData()
    suffix = uuid.uuid4().hex[:8]
    customers = Table(
        f"{prefix}_customers_{suffix}",
        metadata,
        Column("id", String, primary_key=True),
        Column("name", String),
        Column("region", String),
        Column("tier", Integer),
        Column("balance", Numeric(10, 2)),
    )
    orders = Table(
        f"{prefix}_orders_{suffix}",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("customer_id", String, index=True),
        Column("total", Integer),
        Column("status", String),
    )
    lines = Table(
        f"{prefix}_lines_{suffix}",
        metadata,
        Column("order_id", Integer, primary_key=True),
        Column("line_no", Integer, primary_key=True),
        Column("product", String),
        Column("qty", Integer),
    )
    return metadata, customers, orders, lines


def shop_rows(
    draw: random.Random,
    tables: tuple[Table, Table, Table],
    *,
    customers: int,
    orders: int,
    lines: int,
    totals: tuple[int, int],
) -> dict[Table, list[dict[str, Any]]]:
    """Seeded rows with NULLs (one value in five) and dangling references: orders of customers
    that do not exist, lines of orders that do not exist."""

    def maybe(value: Any) -> Any:
        return None if draw.random() < 0.2 else value

    customer_table, order_table, line_table = tables
    return {
        customer_table: [
            {
                "id": f"C{i}",
                "name": maybe(draw.choice("abc")),
                "region": maybe(draw.choice(["a", "b"])),
                "tier": maybe(draw.randint(0, 3)),
                "balance": maybe(Decimal(draw.randint(-500, 500)) / 4),
            }
            for i in range(customers)
        ],
        order_table: [
            {
                "id": i,
                "customer_id": maybe(f"C{draw.randint(0, customers * 6 // 5)}"),
                "total": maybe(draw.randint(*totals)),
                "status": maybe(draw.choice(["open", "closed"])),
            }
            for i in range(orders)
        ],
        line_table: [
            {
                "order_id": draw.randint(0, orders * 9 // 8),
                "line_no": i,
                "qty": maybe(draw.randint(0, 4)),
                "product": maybe(draw.choice("xyz")),
            }
            for i in range(lines)
        ],
    }


class ShopDraws:
    """Values and WHERE terms drawn for the shop tables' columns (``integers``: the range an
    Integer column's value is drawn from)."""

    integers = (-2, 20)

    def __init__(self, draw: random.Random):
        self.draw = draw

    def value(self, column: Column) -> Any:
        if isinstance(column.type, Numeric) and not isinstance(column.type, Integer):
            return Decimal(self.draw.randint(-100, 100)) / 4
        if isinstance(column.type, Integer):
            return self.draw.randint(*self.integers)
        if column.name in ("id", "customer_id"):
            return f"C{self.draw.randint(0, 30)}"
        return self.draw.choice(["a", "b", "c", "open", "closed", "x", "y"])

    def term(self, columns: list[Column]) -> Any:
        column = self.draw.choice(columns)
        tests: list[Callable[[], Any]] = [
            lambda: column.is_(None),
            lambda: column.is_not(None),
            lambda: column.in_([self.value(column) for _ in range(3)]),
            lambda: column != self.value(column),
            lambda: column > self.value(column),
            lambda: column <= self.value(column),
            lambda: column == self.value(column),
        ]
        return self.draw.choice(tests)()
