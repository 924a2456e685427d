"""Both databases of the differential tests: SQLite (the judge) and DynamoDB Local, same rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, Table, create_engine, event

from .grammar import SEED, make_rows, make_table


def _case_sensitive_like(dbapi_connection: Any, _record: Any) -> None:
    # SQLite's LIKE (behind startswith()) ignores ASCII case by default; begins_with does not.
    dbapi_connection.execute("PRAGMA case_sensitive_like = ON")


@pytest.fixture
def databases(endpoint_url: str, table_name: str) -> Iterator[tuple[Engine, Engine, Table]]:
    """SQLite and DynamoDB Local holding the same 200 rows (None: NULL there, absent here)."""
    table = make_table(table_name)
    sqlite = create_engine("sqlite://")
    event.listen(sqlite, "connect", _case_sensitive_like)
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")
    for engine in (sqlite, dynamodb):
        table.metadata.create_all(engine)
        # AUTOCOMMIT: a DynamoDB transaction holds at most 100 writes.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(table.insert(), make_rows(SEED))
    yield sqlite, dynamodb, table
    table.metadata.drop_all(dynamodb)
    for engine in (sqlite, dynamodb):
        engine.dispose()
