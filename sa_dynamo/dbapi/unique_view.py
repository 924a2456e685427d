"""A unique value checked at the statement that takes it, as SQL checks it.

The guard items (unique.py) are written at COMMIT, but SQL refuses a statement that gives a row
a value another row holds when the statement runs, whatever later statements do; and a
statement of several rows is refused whole. So each statement of a transaction that gives an
item a unique value it did not hold is checked at once against the values as the transaction
sees them: those the items it changed hold, as it left them, and those the guard items say the
other rows hold (read strongly consistently, once per value and transaction). A value is free
when no guard names it, or when its guard names a row this transaction has since moved off it.
A statement that takes a held value raises IntegrityError and is not held (buffer.py). The
commit still writes each guard conditionally, so a value taken meanwhile by another writer fails
the commit as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import batch
from .errors import IntegrityError, in_row
from .guard_names import GUARD_KEY, GUARD_ROW, guard_table
from .tables import Tables
from .transport import Transport
from .unique import Committed, guards_of, violation
from .values import key_of
from .writes import Write

Item = dict[str, Any]
Holder = tuple[str, tuple[Any, ...]]  # an item: its table and its key's values (values.key_of)
Value = tuple[str, str]  # a unique value: its table and its guard's key


def moves_values(write: Write, constraints: tuple[tuple[str, ...], ...]) -> bool:
    """Whether ``write`` can change the unique values its item holds: an INSERT, or an UPDATE
    that sets or removes a constrained column (a DELETE frees them all)."""
    if write.kind == "INSERT":
        return True
    columns = {name for names in constraints for name in names}
    return write.kind == "UPDATE" and bool(columns & (set(write.values) | set(write.removes)))


@dataclass(frozen=True)
class Step:
    """What one row of a statement did to one item of a table with unique constraints: the
    item as the transaction saw it before and after (None: no item), and whether it was an
    INSERT of a key the transaction had not written (whose key, when stored, SQL names first)."""

    row: int
    write: Write
    before: Item | None
    after: Item | None
    fresh_insert: bool


class UniqueView:
    """The unique values of the items a transaction changed, as it left them, and the guard
    items it has read."""

    def __init__(self, transport: Transport, tables: Tables) -> None:
        self.transport, self.tables = transport, tables
        self.holders: dict[Value, Holder] = {}  # a value -> the changed item holding it now
        self.changed: dict[Holder, frozenset[str]] = {}  # a changed item -> the guard keys it holds
        self._stored: dict[Value, Holder | None] = {}  # guard items read: the row each names

    def saved(self) -> tuple[dict[Value, Holder], dict[Holder, frozenset[str]]]:
        """The state to restore when a statement is let go (the guards read stay true)."""
        return dict(self.holders), dict(self.changed)

    def restore(self, saved: tuple[dict[Value, Holder], dict[Holder, frozenset[str]]]) -> None:
        self.holders, self.changed = saved

    def check(self, steps: Sequence[Step], rows: int, committed: Committed, hidden: bool) -> None:
        """Apply a statement's ``steps`` (of its ``rows``) in order, or raise IntegrityError at
        the first that takes a value another row holds (``committed(table, key)``: the item
        stored, to name an INSERT's taken key before a taken value, as SQL does)."""
        planned = []
        for step in steps:
            table = step.write.table
            constraints = self.tables.unique(table)
            old, new = guards_of(step.before, constraints), guards_of(step.after, constraints)
            holder = (table, key_of(dict(step.write.key), self.tables.key_names(table)))
            planned.append((step, holder, new, {key: new[key] for key in new.keys() - old.keys()}))
        self._read_guards([(s.write.table, key) for s, _, _, taken in planned for key in taken])
        for step, holder, new, taken in planned:
            table = holder[0]
            with in_row(step.row, rows):
                for key, columns in taken.items():
                    if self._held_by_another((table, key), holder):
                        if step.fresh_insert and committed(table, step.write.key) is not None:
                            raise _duplicate_key(step.write, hidden)
                        raise violation(table, columns, key, hidden, "so this statement changed nothing")
            for key in self.changed.get(holder, ()):
                if self.holders.get((table, key)) == holder:
                    del self.holders[(table, key)]
            self.holders.update(((table, key), holder) for key in new)
            self.changed[holder] = frozenset(new)

    def _held_by_another(self, value: Value, holder: Holder) -> bool:
        now = self.holders.get(value)
        if now is not None:
            return now != holder
        stored = self._stored[value]  # its row, unless this transaction moved that row off it
        return stored is not None and stored != holder and stored not in self.changed

    def _read_guards(self, values: list[Value]) -> None:
        """Read the guard items of ``values`` not read yet in this transaction."""
        unread = [value for value in dict.fromkeys(values) if value not in self._stored]
        for table in {table for table, _ in unread}:
            keys = [key for name, key in unread if name == table]
            self._stored.update(((table, key), None) for key in keys)
            requested = [{GUARD_KEY: {"S": key}} for key in keys]
            for guard in batch.read_items(self.transport, guard_table(table), requested):
                row = guard[GUARD_ROW]["M"]
                self._stored[(table, guard[GUARD_KEY]["S"])] = (
                    table,
                    key_of(row, self.tables.key_names(table)),
                )


def _duplicate_key(write: Write, hidden: bool) -> IntegrityError:
    return IntegrityError(
        f"duplicate key {write.key_text(hidden)} in table {write.table!r}: an item with this key is "
        "already stored, so this statement changed nothing. Insert it under another key, or update "
        "the stored item"
    )
