"""SQLite as the judge: tables filled alike on DynamoDB Local and on SQLite, a statement's rows
read from both, and a write's outcome and the rows it leaves on both."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Engine, MetaData, Table, create_engine
from sqlalchemy.exc import IntegrityError


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


def same_outcome(
    databases: tuple[Engine, Engine], step: Callable[[Engine], Any], stored: Callable[[Engine], Any]
) -> Any:
    """Run ``step`` on DynamoDB, then on SQLite: each raises IntegrityError (the outcome is the
    error's class) or returns the same, and ``stored`` (every row) is the same afterwards.
    DynamoDB's error message, or the outcome."""
    outcomes, message = [], None
    for engine in databases:
        try:
            outcomes.append(step(engine))
        except IntegrityError as error:
            outcomes.append(IntegrityError)
            if engine is databases[0]:
                message = str(error.orig)
    assert outcomes[0] == outcomes[1]
    assert stored(databases[0]) == stored(databases[1])
    return message if outcomes[0] is IntegrityError else outcomes[0]


def read_on_both(
    databases: tuple[Engine, Engine],
    statements: list[Any],
    rows: Callable[[Any, Any], Any],
    wrote: Callable[[Any], None] | None,
) -> list[list[Any]]:
    """``rows(conn, statement)`` of every statement on DynamoDB (scans allowed, sorts of up to
    1,000 rows on the client) and on SQLite, one connection each: in a transaction after
    ``wrote(conn)`` (so the reads see its writes), or in AUTOCOMMIT when ``wrote`` is None;
    rolled back afterwards."""
    dynamodb, sqlite = databases
    got = []
    for engine in (dynamodb.execution_options(dynamodb_scan="allow", dynamodb_client_sort=1000), sqlite):
        with engine.connect() as conn:
            if wrote is not None:
                wrote(conn)
            else:
                conn.execution_options(isolation_level="AUTOCOMMIT")
            got.append([rows(conn, statement) for statement in statements])
            conn.rollback()
    return got
