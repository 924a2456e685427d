"""Which columns of a Table form the DynamoDB key schema.

The primary-key columns are the key: the first is HASH, the second RANGE, in declaration order;
``dynamodb_key="hash"|"range"`` on a column overrides the order.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import Column, Index, Table
from sqlalchemy.exc import ArgumentError


class KeySchema(NamedTuple):
    hash_key: Column
    range_key: Column | None

    @property
    def columns(self) -> tuple[Column, ...]:
        return (self.hash_key,) if self.range_key is None else (self.hash_key, self.range_key)


def key_schema(table: Table) -> KeySchema:
    """The table's HASH and RANGE key columns; an ArgumentError that says how to fix a bad key."""
    columns = list(table.primary_key.columns)
    if not columns:
        raise ArgumentError(
            f"table {table.name!r} has no primary key: mark its partition key column (and sort key "
            "column, if any) with primary_key=True (pandas' DataFrame.to_sql marks none: declare the "
            "table with its key and create it first, then write with if_exists='append', index=False)"
        )
    if len(columns) > 2:
        names = ", ".join(c.name for c in columns)
        raise ArgumentError(
            f"table {table.name!r} has {len(columns)} primary-key columns ({names}); a DynamoDB key "
            "is a partition key plus at most one sort key"
        )
    for column in table.columns:
        if not column.primary_key and column.dialect_options["dynamodb"]["key"] is not None:
            # Ignoring it would silently give the table a different key than the one declared.
            raise ArgumentError(
                f"column {column.name!r} of table {table.name!r} has dynamodb_key but is not part of the "
                "primary key: add primary_key=True"
            )
    roles = {c.name: c.dialect_options["dynamodb"]["key"] for c in columns}
    for name, role in roles.items():
        if role not in (None, "hash", "range"):
            raise ArgumentError(f"column {name!r}: dynamodb_key must be 'hash' or 'range', not {role!r}")
    columns.sort(key=lambda c: {"hash": 0, None: 1, "range": 2}[roles[c.name]])
    if len(columns) == 2 and roles[columns[0].name] == roles[columns[1].name] is not None:
        raise ArgumentError(
            f"table {table.name!r} marks both key columns dynamodb_key={roles[columns[0].name]!r}; one "
            "must be 'hash' and the other 'range'"
        )
    if len(columns) == 1 and roles[columns[0].name] == "range":
        raise ArgumentError(
            f"table {table.name!r}: the only key column cannot be the sort key (dynamodb_key='range')"
        )
    return KeySchema(columns[0], columns[1] if len(columns) == 2 else None)


def index_key_schema(index: Index) -> KeySchema:
    """A secondary index's partition and sort key columns, in declaration order."""
    columns = list(index.columns)
    return KeySchema(columns[0], columns[1] if len(columns) > 1 else None)


def unprojected(index: Index, names: set[str]) -> set[str]:
    """The attributes in ``names`` that a query on the index cannot read."""
    options = index.dialect_options["dynamodb"]
    if (options["projection"] or "ALL").upper() == "ALL":
        return set()
    projected = {c.name for c in key_schema(index.table).columns} | {c.name for c in index.columns}
    projected |= {getattr(c, "name", c) for c in options["include"] or ()}
    return names - projected


def projects(index: Index, names: set[str]) -> bool:
    """Whether a query on the index can read every attribute in ``names``."""
    return not unprojected(index, names)
