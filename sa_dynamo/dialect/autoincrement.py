"""Autoincrement keys: an Integer primary key alone (SQLAlchemy's ``autoincrement="auto"``, as
SQLModel's and Flask-SQLAlchemy's ``id`` columns are) numbered by its counter (dbapi/counters.py).

SQLAlchemy asks the dialect for the key of a single INSERT before sending it
(``get_insert_default``, as PostgreSQL's dialect asks a SERIAL's sequence), so the ORM and
``inserted_primary_key`` know it. An executemany's keys it leaves to the server, which SQLite's
and PostgreSQL's make and DynamoDB does not: here the rows without one get theirs from the
counter before the statement is compiled for them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Table


def counter_column(table: Any) -> Column | None:
    """The column of ``table`` a counter numbers, if any: its autoincrement key, when it has no
    default of its own (a ``default=`` or ``Sequence`` gives the value instead)."""
    if not isinstance(table, Table):
        return None
    column = table.autoincrement_column
    return column if column is not None and column.default is None else None


def next_id(dialect: Any, dbapi_connection: Any, column: Column) -> int:
    return dialect.counters.next_value(dbapi_connection.transport, column.table.name, column.name)


def numbered_rows(
    dialect: Any, dbapi_connection: Any, compiled: Any, parameters: list[Any]
) -> tuple[Any, list[Any]]:
    """An executemany INSERT's rows with their keys: each row that gives none (or None) takes the
    counter's next value, in row order; the statement is compiled again with the key column when
    it was compiled without it."""
    if not compiled.isinsert or len(parameters) < 2:
        return compiled, parameters
    column = counter_column(compiled.statement.table)
    if column is None or all(row.get(column.key) is not None for row in parameters):
        return compiled, parameters
    rows = [
        row
        if row.get(column.key) is not None
        else {**row, column.key: next_id(dialect, dbapi_connection, column)}
        for row in parameters
    ]
    if column.key not in compiled.binds:
        compiled = compiled.statement.compile(
            dialect=dialect, column_keys=list(rows[0]), for_executemany=True
        )
    return compiled, rows
