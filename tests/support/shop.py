"""Customers, their orders and the orders' lines: the three tables that the join, GROUP BY and
computed-read tests share, each test module under names of its own."""

from __future__ import annotations

import uuid

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
