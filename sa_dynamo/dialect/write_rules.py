"""What the driver checks a table's writes against, read from its SQLAlchemy Table.

The driver knows DynamoDB's own limits; the Table adds what only the model says: the attribute
types of the table's and its indexes' keys (an empty string or a wrong type in an index key is
refused like one in the table's key), the values each column takes (a String column refuses
a number, a JSON column a set, and ``Numeric(p, s)`` rounds and bounds as PostgreSQL's
``numeric(p, s)`` does) and the columns a write may not leave without a value (NOT NULL,
``nullable=False``), and the columns of its unique constraints, whose guard items the driver
writes with the rows (dbapi/unique.py). Checking in the driver, on the values sent, covers every write path
(transactions, chunked commits, AUTOCOMMIT batches, upserts, SQL text) and names the column.
"""

from __future__ import annotations

import datetime
import weakref
from decimal import Decimal
from typing import Any

from sqlalchemy import Table, UniqueConstraint
from sqlalchemy import types as sqltypes

from ..dbapi.validate import AttributeRule, KeyAttribute, TableRules, round_to_scale
from .compiler.normal_form import has_affinity
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

_cache: weakref.WeakKeyDictionary[Table, tuple[tuple[int, int, int], TableRules]] = (
    weakref.WeakKeyDictionary()
)


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
    shape = (len(table.columns), len(table.indexes), len(table.constraints))
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
    key = tuple(c.name for c in key_schema(table).columns)
    required = {
        column.name: next((fk.target_fullname.rpartition(".")[0] for fk in column.foreign_keys), None)
        for column in table.columns
        if not column.nullable and column.name not in key
    }
    documents = frozenset(column.name for column in table.columns if has_affinity(column.type, sqltypes.JSON))
    rules = TableRules(
        table.name, key, keys, attributes, required, unique_constraints(table), null_is_value=documents
    )
    _cache[table] = (shape, rules)
    return rules


def unique_constraints(table: Table) -> tuple[tuple[str, ...], ...]:
    """The columns of each unique constraint of a Table (``unique=True``, ``UniqueConstraint``,
    ``Index(..., unique=True)``), each set once, in a stable order; none that holds the whole
    primary key, which DynamoDB keeps unique itself."""
    key = {c.name for c in key_schema(table).columns}
    found = [
        tuple(c.name for c in constraint.columns)
        for constraint in table.constraints
        if isinstance(constraint, UniqueConstraint)
    ]
    found += [tuple(c.name for c in index.columns) for index in table.indexes if index.unique]
    return tuple(sorted(dict.fromkeys(columns for columns in found if not key <= set(columns))))


def stored_value(type_: sqltypes.TypeEngine, value: Any) -> Any:
    """The value a column of ``type_`` holds once ``value`` is written to it, as Python sees it:
    a number in a Numeric or Float column as the decimal DynamoDB stores (a float by its shortest
    repr, as it is sent), rounded to a ``Numeric(p, s)``'s scale as the driver rounds it; a whole
    number in an Integer column as an int; an aware datetime in a ``DateTime(timezone=True)``
    column in UTC. Keys built from a column (key templates) are rendered from this, so that a
    key always agrees with the attribute it is built from."""
    if value is None or isinstance(value, bool):
        return value
    plain = type_
    while isinstance(plain, sqltypes.TypeDecorator):
        plain = plain.impl_instance
    if isinstance(value, (int, float, Decimal)):
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not number.is_finite():
            return value
        if isinstance(plain, sqltypes.Integer):
            return int(number) if number == number.to_integral_value() else value
        if isinstance(plain, (sqltypes.Numeric, sqltypes.Float)):
            rule = attribute_rule(type_)
            return number if rule is None or rule.scale is None else round_to_scale(number, rule.scale)
        return value
    if (
        isinstance(value, datetime.datetime)
        and value.tzinfo is not None
        and getattr(plain, "timezone", False)
    ):
        return value.astimezone(datetime.timezone.utc)
    return value
