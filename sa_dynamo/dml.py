"""``upsert()``: an INSERT that overwrites, for bulk loads that accept it.

SQL INSERT refuses an existing key (IntegrityError), so it runs as PartiQL INSERT. A load that
means "write this item whatever is there" uses ``upsert(table)`` instead: it runs with
DynamoDB's native BatchWriteItem (PartiQL has no upsert), writes at once (AUTOCOMMIT only) and
shows in the log as ``PUT INTO "t" VALUE {...}``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql.dml import Insert


class Upsert(Insert):
    """An INSERT that replaces an existing item with the same key."""

    inherit_cache = True


def upsert(table: Any) -> Upsert:
    """``conn.execute(upsert(table), [dicts])``: write the items, replacing existing ones."""
    return Upsert(table)
