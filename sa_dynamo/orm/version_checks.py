"""``version_id_col`` checked at the flush, where SQLAlchemy raises StaleDataError.

Inside a transaction the dialect holds writes until COMMIT, so an UPDATE or DELETE whose
version no longer matches would only fail there. Before a flush, the items of its versioned
writes are announced to the driver (``Buffer.announce``), which reads them all with the flush's
first versioned write (one strongly consistent BatchGetItem, counted in that statement's
capacity) and tests each write's WHERE on its item: a stale one counts 0 rows, and SQLAlchemy
raises StaleDataError from ``flush()``, in its own words. The version stays the commit's
condition, so a change between the flush and COMMIT still fails the commit.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import inspect
from sqlalchemy.orm import Session

from ..dbapi import values
from ..dialect.key_schema import key_schema
from .scope import is_dynamodb


def announce_versioned_writes(session: Session, flush_context: Any, instances: Any) -> None:
    """Tell each DynamoDB connection the items this flush will write with a version check."""
    keys: dict[tuple[Any, str], tuple[Any, list[dict[str, Any]]]] = {}
    for obj in (*session.dirty, *session.deleted):
        state = inspect(obj)
        mapper = state.mapper
        if mapper.version_id_col is None or state.key is None:
            continue
        if obj not in session.deleted and not session.is_modified(obj, include_collections=False):
            continue  # no column changed: SQLAlchemy writes nothing
        bind = session.get_bind(mapper)
        if not is_dynamodb(bind):
            continue
        table = mapper.local_table
        schema = key_schema(table)
        found = dict(zip((c.name for c in mapper.primary_key), state.key[1], strict=True))
        dialect = bind.dialect
        key = {}
        for column in schema.columns:
            processor = column.type.dialect_impl(dialect).bind_processor(dialect)
            value = found[column.name]
            key[column.name] = values.serialize(processor(value) if processor else value)
        keys.setdefault((mapper, table.name), (schema, []))[1].append(key)
    for (mapper, table), (schema, announced) in keys.items():
        dbapi_connection = session.connection(bind_arguments={"mapper": mapper}).connection.dbapi_connection
        if not dbapi_connection.autocommit:
            dbapi_connection.buffer.announce(table, tuple(c.name for c in schema.columns), announced)
