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
    dialect: Any, dbapi_connection: Any, compiled: Any, statement: Any, parameters: list[Any]
) -> tuple[Any, list[Any]] | None:
    """An INSERT's rows with the keys the counter gives, as SQLite's rowid would: None when it
    gives none. SQLAlchemy compiles an executemany for the keys of its first row; when that row
    has no key column, every row takes the counter's next value in row order (a later row's key
    is ignored, as SQLAlchemy ignores it) and ``statement``, the one executed (its own values,
    not those of the cached compilation), is compiled with the key. A key given as None takes
    the next value too."""
    if not compiled.isinsert:
        return None
    column = counter_column(compiled.statement.table)
    if column is None:
        return None
    key = column.key
    if key not in compiled.binds:
        rows = [{**row, key: next_id(dialect, dbapi_connection, column)} for row in parameters]
        return statement.compile(dialect=dialect, column_keys=list(rows[0]), for_executemany=True), rows
    if not any(key in row and row[key] is None for row in parameters):
        return None
    rows = [
        {**row, key: next_id(dialect, dbapi_connection, column)} if key in row and row[key] is None else row
        for row in parameters
    ]
    return compiled, rows
