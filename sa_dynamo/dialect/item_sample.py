"""Reflection's non-key columns: the attributes of a bounded sample of a table's items.

DynamoDB knows the types of key attributes only (AttributeDefinitions); every other attribute
exists item by item. Reflection (``Table(..., autoload_with=engine)``, pandas'
``read_sql_table``) reads the first ``dynamodb_reflect_sample`` items (default 100) with one
Scan request, and each attribute found there becomes a column typed after the values seen.
What a sample cannot know: attributes that none of those items has, types other items store,
whether a number is an integer. docs/connecting.md says so to the user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import types as sqltypes
from sqlalchemy.exc import ArgumentError

from ..dbapi import capacity
from .types import BinarySet, NumberSet, StringSet

DEFAULT_SAMPLE = 100

# DynamoDB attribute value type -> the type its reflected column gets
ATTRIBUTE_TYPES: dict[str, type[sqltypes.TypeEngine]] = {
    "S": sqltypes.String,
    "N": sqltypes.Numeric,
    "B": sqltypes.LargeBinary,
    "BOOL": sqltypes.Boolean,
    "M": sqltypes.JSON,
    "L": sqltypes.JSON,
    "SS": StringSet,
    "NS": NumberSet,
    "BS": BinarySet,
}


def sample_size(value: Any) -> int:
    """``dynamodb_reflect_sample`` checked: a whole number of items, 0 to read none."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ArgumentError(
            "dynamodb_reflect_sample is the number of items reflection reads to find non-key "
            f"attributes (0 to read none, the key schema only), not {value!r}"
        )
    return value


def scan_request(table: str, size: int) -> dict[str, Any]:
    """One Scan page of at most ``size`` items: bounded whatever the table holds; it asks for
    its consumed capacity like every other read."""
    return capacity.asking({"TableName": table, "Limit": size})


def attribute_columns(items: Iterable[Mapping[str, Mapping[str, Any]]]) -> dict[str, sqltypes.TypeEngine]:
    """Each attribute of ``items`` (DynamoDB's wire form), by name, with the type of its values.
    An attribute stored with different types, or only as NULL, is untyped (NullType): its
    values are read as they are stored."""
    seen: dict[str, set[str]] = {}
    for item in items:
        for name, value in item.items():
            kinds = seen.setdefault(name, set())
            kinds.update(kind for kind in value if kind != "NULL")
    columns = {}
    for name in sorted(seen):
        kinds = seen[name]
        if kinds and kinds <= {"M", "L"}:  # both are JSON
            kinds = {"M"}
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        columns[name] = ATTRIBUTE_TYPES[kind]() if kind is not None else sqltypes.NullType()
    return columns
