"""SQLite as the judge: tables filled alike on DynamoDB Local and on SQLite, and a statement's
rows read from both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Engine, MetaData, Table, create_engine


def filled_alike(
    engine: Engine, metadata: MetaData, contents: dict[Table, list[dict[str, Any]]]
) -> Iterator[tuple[Engine, Engine]]:
    """For a fixture: (DynamoDB's engine, SQLite's) holding ``contents``; the tables dropped after."""
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        metadata.create_all(each)
        with each.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table, rows in contents.items():
                conn.execute(table.insert(), rows)
    yield engine, sqlite
    metadata.drop_all(engine)
    sqlite.dispose()


def rows_of(engine: Engine, statement: Any) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(statement)]


def same_rows(databases: tuple[Engine, Engine], statement: Any, **options: Any) -> list[tuple]:
    """The statement's rows, the same on both (``options``: DynamoDB's execution options)."""
    dynamodb, sqlite = databases
    rows = rows_of(dynamodb, statement.execution_options(**options))
    assert rows == rows_of(sqlite, statement)
    return rows
