"""Errors a DynamoDB migration raises; CommandError subclasses, so the alembic CLI prints them."""

from __future__ import annotations

from alembic.util import CommandError


class KeySchemaChangeError(CommandError):
    """The migration (or the model, under autogenerate) changes something DynamoDB fixes when a
    table is created: its key schema or its local secondary indexes."""


class BackfillConflict(CommandError):
    """Another process advanced the same backfill, or the items of a batch kept changing."""


def key_change_advice(table: str) -> str:
    """What to do instead of altering a key: DynamoDB has no ALTER for it."""
    return (
        f"create a new table with the new key schema (op.create_table), copy the items into it "
        f"(op.copy_items({table!r}, '<new table>', templates={{...}})), point the application at "
        f"the new table, then drop {table!r}"
    )
