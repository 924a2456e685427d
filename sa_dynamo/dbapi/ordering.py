"""SQL's ORDER BY applied on the client, to rows the driver holds.

DynamoDB sorts only one partition, and only by its sort key; rows from several partitions, from
a batch of key reads or ordered by another attribute are sorted here. The order is SQL's as
SQLite applies it: NULL (an absent attribute) before every value ascending and after every
value descending, numbers before strings before binary values, strings by code point (the order
of their UTF-8 bytes). Rows that compare equal keep the order they came in.

The interface is plain on purpose: rows are tuples, and an order is a list of (column index,
descending, nulls first) triples, the first the most significant; "nulls first" is None for
SQL's default place of NULL (first ascending, last descending), else where NULLS FIRST or
NULLS LAST puts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from .errors import DataError

Order = Sequence[tuple[int, bool, bool | None]]  # (column index in the row, descending, nulls first)

_NUMBERS = (bool, int, float, Decimal)


def sort_key(value: Any, null: int = 0) -> tuple[int, Any]:
    """The value's place in SQL's order: its class (NULL, number, string, binary), then itself;
    ``null``: NULL's class, 0 (before every value) or 4 (after)."""
    if value is None:
        return (null, 0)
    if isinstance(value, _NUMBERS):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, bytes):
        return (3, value)
    raise DataError(
        f"cannot sort by a {type(value).__name__} value: ORDER BY takes numbers, strings, binary values "
        "and booleans"
    )


def sort_rows(rows: Iterable[tuple], order: Order) -> list[tuple]:
    """``rows`` sorted by ``order``; equal rows stay in the order they came."""
    result = list(rows)
    for index, descending, nulls_first in reversed(order):  # stable sorts, least significant first
        # NULL's class ahead of the values in the sort's own direction, unless NULLS moves it
        null = 0 if nulls_first is None or nulls_first is not descending else 4
        result.sort(key=lambda row: sort_key(row[index], null), reverse=descending)
    return result


def key_order(values: Sequence[Any]) -> list[Any]:
    """Partition-key values in DynamoDB's order of keys (numbers by value, strings by code
    point, binary values by byte), the order an IN list of partitions is sent in: reading such a
    list over several pages, DynamoDB Local resumes at the partitions after the last one read in
    this order, whatever the list's, and so misses or repeats partitions of a list in any other
    (docs/partiql-findings.md). Values of other types stay as given (DynamoDB refuses them)."""
    try:
        return sorted(values, key=sort_key)
    except (DataError, TypeError):
        return list(values)
