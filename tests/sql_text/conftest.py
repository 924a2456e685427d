"""Tables for the SQL-text tests: the same models serve the Core form of each statement."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from sqlalchemy import JSON, Boolean, Column, Index, Integer, MetaData, String, Table, event

from sa_dynamo.dialect.options import EXPLAIN


class Tables(NamedTuple):
    items: Table  # pk + sk; gsi1 (gsi1pk, gsi1sk, ALL), gsi2 (gsi2pk, KEYS_ONLY)
    users: Table  # id only


def define(suffix: str) -> tuple[MetaData, Tables]:
    metadata = MetaData()
    items = Table(
        f"items_{suffix}",
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
        Column("s", String),
        Column("b", Boolean),
        Column("doc", JSON),
        Column("gsi1pk", String),
        Column("gsi1sk", String),
        Column("gsi2pk", String),
        Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
        Index("gsi2", "gsi2pk", dynamodb_projection="KEYS_ONLY"),
    )
    users = Table(f"users_{suffix}", metadata, Column("id", String, primary_key=True), Column("n", Integer))
    return metadata, Tables(items, users)


@pytest.fixture(scope="module")
def tables(engine) -> Iterator[Tables]:
    metadata, tables = define(uuid.uuid4().hex[:8])
    metadata.create_all(engine)
    yield tables
    metadata.drop_all(engine)


class Sent(NamedTuple):
    partiql: str
    parameters: list[Any]
    plan: Any


def explained(engine, sql: str, parameters: Any = ()) -> Sent:
    """What exec_driver_sql of ``sql`` would send and its plan; nothing is sent."""
    holder: dict[str, Any] = {}
    captured: list[tuple[str, list[Any]]] = []

    def record(conn, cursor, statement, params, context, executemany):
        captured.append((statement, list(params)))

    event.listen(engine, "before_cursor_execute", record)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(sql, tuple(parameters), execution_options={EXPLAIN: holder})
    finally:
        event.remove(engine, "before_cursor_execute", record)
    return Sent(captured[0][0], captured[0][1], holder["plan"])
