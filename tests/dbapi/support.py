"""Helpers the DBAPI tests share: identifier quoting, exact value comparison, a test table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sa_dynamo import dbapi


def quote(name: str) -> str:
    """A PartiQL identifier: double-quoted, with an inner ``"`` doubled."""
    return '"' + name.replace('"', '""') + '"'


def typed(value: Any) -> Any:
    """The value with every leaf's type and exact digits spelled out, so that ``==`` also
    tells ``Decimal('1.5')`` from ``Decimal('1.50')``, 1 from True and a list from a set."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(typed(item) for item in value))
    return (type(value).__name__, repr(value))


def fetch_dicts(cursor: dbapi.Cursor) -> list[dict[str, Any]]:
    """The remaining rows as {column name: value}, named by ``cursor.description``."""
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@dataclass
class Table:
    """A fresh table with an S partition key ``pk`` and an S sort key ``sk``."""

    name: str

    @property
    def ref(self) -> str:
        return quote(self.name)

    def insert_sql(self, names: Sequence[str]) -> str:
        """``INSERT INTO "t" VALUE {'name': ?, ...}``; a quote in a name is doubled."""
        pairs = ", ".join("'{}': ?".format(name.replace("'", "''")) for name in names)
        return f"INSERT INTO {self.ref} VALUE {{{pairs}}}"

    def insert(self, cursor: dbapi.Cursor, item: Mapping[str, Any]) -> None:
        cursor.execute(self.insert_sql(list(item)), list(item.values()))

    def item(self, cursor: dbapi.Cursor, pk: str, sk: str) -> dict[str, Any] | None:
        """The stored item as a dict (None when absent), read with a consistent SELECT *."""
        cursor.consistent_read = True
        cursor.execute(f'SELECT * FROM {self.ref} WHERE "pk" = ? AND "sk" = ?', [pk, sk])
        items = fetch_dicts(cursor)
        return items[0] if items else None

    def keys(self, cursor: dbapi.Cursor) -> list[tuple[str, str]]:
        """Every (pk, sk) in the table, sorted: a scan, fine for test-sized tables."""
        cursor.execute(f'SELECT "pk", "sk" FROM {self.ref}')
        return sorted(cursor.fetchall())
