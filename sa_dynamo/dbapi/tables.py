"""What a connection knows of the tables it writes: their keys and the rules of their writes.

The dialect tells it what the SQLAlchemy Table declares (``TableRules``); for a table nobody
described, DescribeTable is read once per connection. Every write is parsed into its canonical
form and checked against these rules before it is sent or held (validate.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import control_plane, writes
from . import statement as stmt
from .errors import NotSupportedError
from .transport import Transport
from .validate import TableRules, check_write


@dataclass(frozen=True)
class Source:
    """What a SELECT reads: the table's key attributes, and the key attributes an item needs to be
    in the index read (an item without them is not in a sparse index), the sort key first when
    the order of the rows is the sort key's."""

    table: str
    key: tuple[str, ...]
    required: tuple[str, ...]
    sort_key: str | None


class Tables:
    """The rules of each table a connection has written or read in a transaction."""

    def __init__(self, transport: Transport, hide_parameters: bool = False):
        self.transport = transport
        self.hide_parameters = hide_parameters
        self._known: dict[str, TableRules] = {}

    def set_key_names(self, table: str, names: tuple[str, ...]) -> None:
        """A table's key attributes (HASH first), sparing a DescribeTable."""
        known = self._known.get(table)
        if known is None or known.key != tuple(names):
            self._known[table] = TableRules(table, tuple(names))

    def set_rules(self, rules: TableRules) -> None:
        """All that a table's writes are checked against (see TableRules)."""
        self._known[rules.table] = rules

    def rules(self, table: str, key_types: bool = False) -> TableRules:
        """What writes to ``table`` are checked against: DescribeTable's, once per table, when
        nobody told (or told the key names only, and ``key_types`` asks for the types of the
        table's and its indexes' keys)."""
        known = self._known.get(table)
        if known is None or (key_types and not known.key_attributes):
            self._known[table] = known = control_plane.table_rules(self.transport, table)
        return known

    def unique(self, table: str) -> tuple[tuple[str, ...], ...]:
        """The columns of each unique constraint of ``table`` the dialect told of (none for a
        table nobody described: DynamoDB keeps no such constraint)."""
        known = self._known.get(table)
        return known.unique if known is not None else ()

    def key_names(self, table: str) -> tuple[str, ...]:
        """The table's key attributes, HASH first."""
        return self.rules(table).key

    def read_source(self, table: str, index: str | None) -> Source:
        """What a SELECT of ``table`` (or of its ``index``) reads, for laying writes over it."""
        rules = self.rules(table, key_types=index is not None)
        if index is None:
            return Source(table, rules.key, (), rules.key[1] if len(rules.key) > 1 else None)
        if not any(k.index == index for k in rules.key_attributes):  # an index created since
            self._known[table] = rules = control_plane.table_rules(self.transport, table)
        keys = sorted((k for k in rules.key_attributes if k.index == index), key=lambda k: k.role != "HASH")
        names = tuple(k.name for k in keys)
        return Source(table, rules.key, names, names[1] if len(names) > 1 else None)

    def checked(self, operation: str, body: dict[str, Any]) -> writes.Write | None:
        """The canonical write a statement performs, checked against every rule of validate.py
        (None for other statements, which DynamoDB alone judges)."""
        write = writes.parse(operation, body.get("Parameters", []), self.key_names)
        if write is not None:
            self.check(write)
        elif (target := stmt.source(operation)) is not None and self.unique(target[0]):
            raise NotSupportedError(
                f"table {target[0]!r} has unique constraints, kept by guard items that only the "
                "canonical INSERT/UPDATE/DELETE forms the dialect emits can move: write it through "
                "a Table or the ORM"
            )
        return write

    def check(self, write: writes.Write) -> None:
        """Refuse a write its table's rules refuse (a merged one, say, grown past 400 KB)."""
        check_write(write, self.rules(write.table), self.hide_parameters)
