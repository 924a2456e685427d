"""What the driver checks a table's writes against, read from its SQLAlchemy Table.

The driver knows DynamoDB's own limits; the Table adds what only the model says: the attribute
types of the table's and its indexes' keys (an empty string or a wrong type in an index key is
refused like one in the table's key) and the values each column takes (a String column refuses
a number, a JSON column a set, and ``Numeric(p, s)`` rounds and bounds as PostgreSQL's
``numeric(p, s)`` does). Checking in the driver, on the values sent, covers every write path
(transactions, chunked commits, AUTOCOMMIT batches, upserts, SQL text) and names the column.
"""

from __future__ import annotations

import weakref
from typing import Any

from sqlalchemy import Table
from sqlalchemy import types as sqltypes

from ..dbapi.validate import AttributeRule, KeyAttribute, TableRules
from .key_schema import index_key_schema, key_schema
from .types import BinarySet, NumberSet, StringSet, attribute_type

# AttributeValue kinds by SQLAlchemy type affinity, the first match wins (Boolean before the
# numbers, the sets before anything else). A type not listed takes any value.
_KINDS: list[tuple[type, frozenset[str]]] = [
    (StringSet, frozenset({"SS"})),
    (NumberSet, frozenset({"NS"})),
    (BinarySet, frozenset({"BS"})),
    (sqltypes.Boolean, frozenset({"BOOL"})),
    (sqltypes.Integer, frozenset({"N"})),
    (sqltypes.Numeric, frozenset({"N"})),
    (sqltypes.Float, frozenset({"N"})),  # not a Numeric since SQLAlchemy 2.1
    (sqltypes.LargeBinary, frozenset({"B"})),
    (sqltypes.JSON, frozenset({"M", "L", "S", "N", "BOOL"})),
    (sqltypes.String, frozenset({"S"})),
    (sqltypes.DateTime, frozenset({"S"})),
    (sqltypes.Date, frozenset({"S"})),
    (sqltypes.Time, frozenset({"S"})),
    (sqltypes.Uuid, frozenset({"S"})),
]

_cache: weakref.WeakKeyDictionary[Table, tuple[tuple[int, int], TableRules]] = weakref.WeakKeyDictionary()


def attribute_rule(type_: sqltypes.TypeEngine) -> AttributeRule | None:
    """The values a column of this type takes once SQLAlchemy has processed them; None for a
    type that takes any (NullType, PickleType, a custom UserDefinedType)."""
    declared = type_
    while isinstance(type_, sqltypes.TypeDecorator):
        type_ = type_.impl_instance
    kinds = next((kinds for cls, kinds in _KINDS if isinstance(type_, cls)), None)
    if kinds is None:
        return None
    name = type(declared).__name__
    if isinstance(type_, sqltypes.Integer):
        return AttributeRule(name, kinds, whole=True)
    if isinstance(type_, sqltypes.Numeric) and not isinstance(type_, (sqltypes.Float, sqltypes.Integer)):
        precision, scale = type_.precision, type_.scale
        if precision is not None or scale is not None:
            # PostgreSQL: NUMERIC(p) is NUMERIC(p, 0).
            scale = scale or 0
            shape = f"{precision}, {scale}" if precision is not None else f"scale={scale}"
            return AttributeRule(f"{name}({shape})", kinds, precision, scale)
    return AttributeRule(name, kinds)


def table_rules(table: Table) -> TableRules:
    """The rules of a Table's writes (computed once per shape of the Table)."""
    shape = (len(table.columns), len(table.indexes))
    cached = _cache.get(table)
    if cached is not None and cached[0] == shape:
        return cached[1]
    schemas = [(None, key_schema(table))] + [
        (index.name, index_key_schema(index)) for index in table.indexes if index.name and len(index.columns)
    ]
    keys = tuple(
        KeyAttribute(column.name, attribute_type(column.type), role, index)
        for index, schema in schemas
        for column, role in ((schema.hash_key, "HASH"), (schema.range_key, "RANGE"))
        if column is not None
    )
    attributes: dict[str, Any] = {}
    for column in table.columns:
        rule = attribute_rule(column.type)
        if rule is not None:
            attributes[column.name] = rule
    rules = TableRules(table.name, tuple(c.name for c in key_schema(table).columns), keys, attributes)
    _cache[table] = (shape, rules)
    return rules
