"""The names of the guard items of unique constraints (unique.py): their table, their
attributes, and the record of a constraint's columns. Apart so that the control plane, which
creates and lists tables, can name them without the write planning."""

from __future__ import annotations

import json
from typing import Any

from .own_tables import GUARD_SUFFIX

GUARD_KEY = "guard"
GUARD_ROW = "row"  # the key of the row that holds the value (a map of its AttributeValues)
GUARD_COLUMNS = "columns"  # the constraint's columns, as JSON (a hashed key does not say them)


def guard_table(table: str) -> str:
    """The table of ``table``'s guard items."""
    return table + GUARD_SUFFIX


def columns_text(columns: tuple[str, ...]) -> str:
    """A guard's ``columns`` attribute: the constraint's columns as JSON."""
    return json.dumps(list(columns), ensure_ascii=False)


def record_key(name: str) -> dict[str, Any]:
    """The key of the item that records which columns the constraint ``name`` covers (DynamoDB
    keeps no constraints; dropping one by name needs them). A guard's key is a JSON list or
    ``sha256:...``, so a record never shares a key with a guard."""
    return {GUARD_KEY: {"S": f"constraint:{name}"}}


def record_request(table: str, name: str, columns: tuple[str, ...]) -> dict[str, Any]:
    """The PutItem request that records the constraint ``name`` of ``table`` on ``columns``."""
    item = {**record_key(name), GUARD_COLUMNS: {"S": columns_text(columns)}}
    return {"TableName": guard_table(table), "Item": item}
