"""Unique constraints kept the way DynamoDB keeps them: one guard item per unique value.

A table with unique constraints has a guard table, ``<table>.unique``, keyed by one string
attribute, ``guard``. Each row whose constrained columns all hold a value owns one guard item
per constraint, written, moved and deleted in the same ExecuteTransaction as the row: a guard
is taken with an INSERT, which DynamoDB refuses for a key already stored, so a second row with
the same value cancels the whole transaction and nothing is written. NULL takes no guard (SQL:
NULLs are not equal).

The guards live in their own table, not among the rows, so that no read of the rows ever meets
one (a scan, a COUNT, ``SELECT *``, SQL text), and so that a table keyed by a number or with a
sort key can have them (a guard's key is a string). A guard's key is JSON of the constraint's
columns and the values, each value as its AttributeValue with a number in DynamoDB's canonical
text: unambiguous, exact for every number DynamoDB stores (1.50 and 1.5 are one value, as in
SQL), and never the key of another constraint's guard. A key over 1024 bytes is replaced by its
SHA-256, keeping it under DynamoDB's 2048-byte partition-key limit.

A row moved or deleted is conditioned on the unique values that were read to plan its guards,
so a change in between fails the commit instead of leaving a stray guard.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from .errors import IntegrityError, shown
from .guard_names import GUARD_COLUMNS, GUARD_KEY, GUARD_ROW, columns_text, guard_table
from .overlay import image
from .validate import number_text
from .writes import Condition, Write, quote

_LONGEST_READABLE_KEY = 1024
NOTHING_WRITTEN = "so nothing was written"  # what a refused commit wrote, for its message

Item = dict[str, Any]
Committed = Callable[[str, tuple[tuple[str, Any], ...]], "Item | None"]


def _canonical(value: dict[str, Any]) -> Any:
    ((kind, inner),) = value.items()
    if kind == "N":
        return {"N": number_text(Decimal(inner))}
    if kind == "B":
        return {"B": base64.b64encode(bytes(inner)).decode("ascii")}
    if kind in ("NS", "SS", "BS"):
        members = [_canonical({kind[0]: member})[kind[0]] for member in inner]
        return {kind: sorted(members)}
    if kind == "M":
        return {"M": {name: _canonical(member) for name, member in inner.items()}}
    if kind == "L":
        return {"L": [_canonical(member) for member in inner]}
    return value


def guard_key(columns: tuple[str, ...], values: list[dict[str, Any]]) -> str:
    """The key of the guard of ``values`` (AttributeValues) under the constraint on ``columns``."""
    text = json.dumps(
        [list(columns), [_canonical(v) for v in values]],
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    if len(text.encode("utf-8")) > _LONGEST_READABLE_KEY:
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text


def guard_item(columns: tuple[str, ...], key: str, row: dict[str, Any]) -> Item:
    """A guard item as stored (AttributeValues); ``row``: the key of the row holding the value."""
    return {GUARD_KEY: {"S": key}, GUARD_ROW: {"M": row}, GUARD_COLUMNS: {"S": columns_text(columns)}}


def guards_of(
    item: Mapping[str, Any] | None, constraints: tuple[tuple[str, ...], ...]
) -> dict[str, tuple[str, ...]]:
    """The guards an item (AttributeValues) holds: guard key -> the constraint's columns. A
    constraint with a column NULL or absent takes none."""
    if item is None:
        return {}
    held = {}
    for columns in constraints:
        values = [item.get(name) for name in columns]
        if all(v is not None and "NULL" not in v for v in values):
            held[guard_key(columns, values)] = columns
    return held


@dataclass(frozen=True)
class GuardWrite:
    """One write of a guard item: INSERT (the value is taken), DELETE (freed) or UPDATE (freed by
    one row and taken by another in the same transaction)."""

    kind: str
    table: str  # the rows' table
    columns: tuple[str, ...]
    key: str
    row: tuple[tuple[str, Any], ...]  # the key of the row that holds it (INSERT, UPDATE)

    def render(self) -> dict[str, Any]:
        """The ExecuteTransaction statement for this write."""
        table = quote(guard_table(self.table))
        row = {"M": dict(self.row)}
        if self.kind == "INSERT":
            text = f"INSERT INTO {table} VALUE {{'{GUARD_KEY}': ?, '{GUARD_ROW}': ?, '{GUARD_COLUMNS}': ?}}"
            return {
                "Statement": text,
                "Parameters": [{"S": self.key}, row, {"S": columns_text(self.columns)}],
            }
        if self.kind == "UPDATE":
            text = f"UPDATE {table} SET {quote(GUARD_ROW)} = ? WHERE {quote(GUARD_KEY)} = ?"
            return {"Statement": text, "Parameters": [row, {"S": self.key}]}
        return {
            "Statement": f"DELETE FROM {table} WHERE {quote(GUARD_KEY)} = ?",
            "Parameters": [{"S": self.key}],
        }

    def violated(self, hidden: bool, outcome: str = NOTHING_WRITTEN) -> IntegrityError:
        """The error of this value being held already by another row."""
        return violation(self.table, self.columns, self.key, hidden, outcome)


def violation(
    table: str, columns: tuple[str, ...], key: str, hidden: bool, outcome: str = NOTHING_WRITTEN
) -> IntegrityError:
    """SQLite's wording, then the value (unless hidden), what became of the write and what to do."""
    names = ", ".join(f"{table}.{name}" for name in columns)
    value = "" if hidden else f" ({shown(key, False)})"
    return IntegrityError(
        f"UNIQUE constraint failed: {names}: another row already holds this value{value}, {outcome}. "
        "Give this row another value, or change or delete the row that holds it first"
    )


def _before_conditions(write: Write, before: Item | None, columns: set[str]) -> list[Condition]:
    """Conditions that hold only while the row's unique columns are as they were read."""
    if before is None:  # an UPDATE or DELETE of an item not stored: it must stay so
        return [Condition(f"{quote(write.key[0][0])} IS MISSING", [])]
    conditions = []
    for name in sorted(columns):
        if name in before:
            conditions.append(Condition(f"{quote(name)} = ?", [before[name]]))
        else:
            conditions.append(Condition(f"{quote(name)} IS MISSING", []))
    return conditions


def guarded(
    held: list[tuple[Any, tuple[int, ...]]],
    constraints_of: Callable[[str], tuple[tuple[str, ...], ...]],
    committed: Committed,
    hidden: bool = False,
) -> tuple[list[Any], list[GuardWrite]]:
    """The row writes (each conditioned on the unique values its guards were planned from) and
    the guard writes that go with them into one transaction. ``held``: each write with the
    positions of the statements it stands for; ``committed(table, key)``: the item as stored.

    An IntegrityError, as SQL checks each statement: two rows of the transaction take one value,
    or a row takes a value before the statement that frees it (a swap of two rows' values)."""
    taken: dict[tuple[str, str], tuple[Write, tuple[str, ...], tuple[int, ...]]] = {}
    freed: dict[tuple[str, str], tuple[tuple[str, ...], tuple[int, ...]]] = {}
    rows = []
    for action, order in held:
        constraints = constraints_of(action.table) if isinstance(action, Write) else ()
        unique_columns = {name for columns in constraints for name in columns}
        changed = set(action.values) | set(action.removes) if constraints else set()
        if not constraints or (action.kind == "UPDATE" and not changed & unique_columns):
            rows.append(action)
            continue
        before = None if action.kind in ("INSERT", "PUT") else committed(action.table, action.key)
        old, new = guards_of(before, constraints), guards_of(image(action, before), constraints)
        if action.kind not in ("INSERT", "PUT"):
            watched = _before_conditions(action, before, unique_columns)
            action = replace(action, conditions=[*action.conditions, *watched])
        rows.append(action)
        for key, columns in old.items():
            if key not in new:
                freed[(action.table, key)] = (columns, order)
        for key, columns in new.items():
            if key in old:
                continue
            if (action.table, key) in taken:
                raise violation(action.table, columns, key, hidden)
            taken[(action.table, key)] = (action, columns, order)
    guards = []
    for (table, key), (action, columns, order) in taken.items():
        if (table, key) not in freed:
            guards.append(GuardWrite("INSERT", table, columns, key, action.key))
        elif max(order) < min(freed[(table, key)][1]):  # taken while its holder still held it
            raise violation(table, columns, key, hidden)
        else:
            guards.append(GuardWrite("UPDATE", table, columns, key, action.key))
    guards += [
        GuardWrite("DELETE", table, columns, key, ())
        for (table, key), (columns, _) in freed.items()
        if (table, key) not in taken
    ]
    return rows, guards
