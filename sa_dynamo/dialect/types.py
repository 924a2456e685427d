"""SQLAlchemy types on DynamoDB attribute values.

A value a type cannot store is the driver's DataError, raised by the bind processor before
anything is sent, as the driver raises its own (SQLAlchemy wraps it as ``sqlalchemy.exc.DataError``).

Dates and times are ISO-8601 strings of fixed width, so they sort in time order as strings and
can be sort keys; timezone-aware values are stored in UTC. JSON is a native map/list. Sets are
native string/number/binary sets; DynamoDB cannot store an empty set, so an empty set is stored
as an absent attribute.
"""

from __future__ import annotations

import datetime
import math
import uuid
from decimal import Context, Decimal
from typing import Any

from sqlalchemy import types as sqltypes
from sqlalchemy.exc import ArgumentError
from sqlalchemy.sql import elements, operators

from ..dbapi.errors import DataError, shown
from ..dbapi.limits import EXPONENTS
from ..dbapi.values import STORED_NULL

# DynamoDB attribute types a key attribute can have, by SQLAlchemy type affinity (Enum is a
# String, Float a Numeric; Boolean, JSON and the set types have no entry).
_KEY_TYPES: list[tuple[type, str]] = [
    (sqltypes.Integer, "N"),
    (sqltypes.Numeric, "N"),
    (sqltypes.Float, "N"),  # not a Numeric since SQLAlchemy 2.1
    (sqltypes.LargeBinary, "B"),
    (sqltypes.String, "S"),
    (sqltypes.DateTime, "S"),
    (sqltypes.Date, "S"),
    (sqltypes.Time, "S"),
    (sqltypes.Uuid, "S"),
]


def attribute_type(type_: sqltypes.TypeEngine) -> str | None:
    """'S', 'N' or 'B' for a type that can be a key attribute; None for any other."""
    while isinstance(type_, sqltypes.TypeDecorator):
        type_ = type_.impl_instance
    for cls, code in _KEY_TYPES:
        if isinstance(type_, cls):
            return code
    return None


def key_attribute_type(column: Any, owner: str) -> str:
    """The key attribute type of ``column``, a key of ``owner`` ("table 't'", "index 'gsi1'")."""
    code = attribute_type(column.type)
    if code is None:
        raise ArgumentError(
            f"{owner}: key column {column.name!r} has type {column.type!r}, which a DynamoDB key cannot "
            "hold; a key attribute is a string, number or binary (String, Integer, Numeric, Float, "
            "LargeBinary, DateTime, Date, Time, Uuid, Enum)"
        )
    return code


class DynamoInteger(sqltypes.Integer):
    """N comes back as Decimal; integer columns give int. A whole float or Decimal is sent as an
    int; anything else goes on as it is, so that a write refuses it naming the column (a
    fraction: DynamoDB would store it exactly, and filters would then see a value reads
    truncate; write_rules.py), while a WHERE compares it as SQL does (``n = 1.5`` matches no
    integer). A fraction another writer stored comes back exact, as Decimal."""

    def bind_processor(self, dialect):
        def process(value):
            if isinstance(value, (float, Decimal)) and math.isfinite(value) and value == int(value):
                return int(value)
            return value

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            if isinstance(value, Decimal) and value == value.to_integral_value():
                return int(value)
            return value  # None, an int (a COUNT), or a fraction another writer stored

        return process


class DynamoNumeric(sqltypes.Numeric):
    """DynamoDB normalises numbers (19.90 -> 19.9); a declared scale restores the trailing zeros.

    Binds are not rounded, since the same processing applies to values compared in WHERE (as in
    PostgreSQL, ``price = 1.005`` does not match a stored 1.01). A value written to a
    ``Numeric(p, s)`` column is rounded and bounded by the driver, as PostgreSQL's numeric(p, s)
    does (write_rules.py), so what is stored is what reads back.
    """

    def result_processor(self, dialect, coltype):
        if self.asdecimal:
            if self.scale is None:
                return None
            scale = self.scale
            exponent = Decimal(1).scaleb(-scale)
            # Room for DynamoDB's largest number (126 integer digits) at this scale: the default
            # context's 28 digits would make quantize() fail on a 38-digit value.
            context = Context(prec=EXPONENTS.stop + scale)  # every DynamoDB number is below 1E+126

            def pad(value):
                if value is None or value.as_tuple().exponent <= -scale:
                    return value
                return value.quantize(exponent, context=context)

            return pad

        def process(value):
            return None if value is None else float(value)

        return process


class DynamoFloat(sqltypes.Float):
    def result_processor(self, dialect, coltype):
        if self.asdecimal:
            return None

        def process(value):
            return None if value is None else float(value)

        return process


class DynamoBoolean(sqltypes.Boolean):
    """True or False (and 1 or 0, as SQLAlchemy accepts them); anything else goes on as it is,
    so that a write refuses it naming the column (write_rules.py)."""

    def bind_processor(self, dialect):
        def process(value):
            if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
                return bool(value)
            return value

        return process


class DynamoDateTime(sqltypes.DateTime):
    """``YYYY-MM-DDTHH:MM:SS.ffffff`` (naive) or the same in UTC with ``+00:00`` (timezone=True)."""

    def bind_processor(self, dialect):
        aware = self.timezone
        hidden = dialect.hide_parameters

        def process(value):
            if value is None:
                return None
            if not isinstance(value, datetime.datetime):
                raise DataError(f"expected a datetime, got {type(value).__name__}")
            if aware:
                if value.tzinfo is None:
                    raise DataError(
                        f"DateTime(timezone=True) needs an aware datetime, got naive {shown(value, hidden)}: "
                        "attach a tzinfo (e.g. datetime.timezone.utc)"
                    )
                return value.astimezone(datetime.timezone.utc).isoformat(timespec="microseconds")
            if value.tzinfo is not None:
                # SQLite's DateTime drops the offset and PostgreSQL shifts it to the session's
                # zone, each silently: refused rather than guessed.
                raise DataError(
                    f"DateTime() stores naive datetimes, got aware {shown(value, hidden)}: declare "
                    "DateTime(timezone=True) or pass a naive value"
                )
            return value.isoformat(timespec="microseconds")

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            return None if value is None else datetime.datetime.fromisoformat(value)

        return process


class DynamoDate(sqltypes.Date):
    def bind_processor(self, dialect):
        def process(value):
            if value is None:
                return None
            if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
                raise DataError(f"expected a date, got {type(value).__name__}")
            return value.isoformat()

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            return None if value is None else datetime.date.fromisoformat(value)

        return process


class DynamoTime(sqltypes.Time):
    def bind_processor(self, dialect):
        def process(value):
            return None if value is None else value.isoformat(timespec="microseconds")

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            return None if value is None else datetime.time.fromisoformat(value)

        return process


class DynamoUuid(sqltypes.Uuid):
    """The canonical hyphenated text, not the 32-character hex SQLAlchemy uses without a UUID type."""

    def bind_processor(self, dialect):
        def process(value):
            if value is None:
                return None
            return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))

        return process

    def result_processor(self, dialect, coltype):
        as_uuid = self.as_uuid

        def process(value):
            if value is None:
                return None
            return uuid.UUID(value) if as_uuid else value

        return process


def _plain_json(value: Any) -> Any:
    """DynamoDB numbers inside a document come back as Decimal; JSON means int or float."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return value


def _json_text(value: Any) -> str:
    """A document element as the text SQL's ``->>`` gives: JSON's spelling of scalars."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float, Decimal)):
        return str(_plain_json(value))
    raise ValueError(f"a JSON {type(value).__name__} has no text value")


def _json_boolean(value: Any) -> bool:
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    if isinstance(value, (bool, int, Decimal)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{value!r} is not a JSON boolean")


class JSONElementAs(sqltypes.TypeDecorator):
    """The type of ``doc["k"].as_string()`` (as_integer(), ...) in a select list: DynamoDB has no
    CAST, so the stored element is converted after reading, as SQL's cast would (15 -> "15",
    "45" -> 45, "true" -> True); a value that does not convert raises ValueError."""

    impl = sqltypes.NullType
    cache_ok = True

    def __init__(self, target: sqltypes.TypeEngine):
        super().__init__()
        self.target = target

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if value is None:
            return None
        target = self.target
        if isinstance(target, sqltypes.Boolean):
            return _json_boolean(value)
        if isinstance(target, sqltypes.Integer):
            return int(value)
        if isinstance(target, sqltypes.Float):
            return float(value)
        if isinstance(target, sqltypes.Numeric):
            number = Decimal(_json_text(value))
            return number if target.scale is None else number.quantize(Decimal(1).scaleb(-target.scale))
        return _json_text(value)


class DynamoJSON(sqltypes.JSON):
    """JSON as a native DynamoDB map or list, so its parts can be read and filtered by path.

    JSON's null is an attribute stored as DynamoDB's NULL, SQL's NULL an absent attribute, as
    SQLAlchemy tells them apart: None is JSON's null unless ``none_as_null=True``, ``JSON.NULL``
    always, ``null()`` never. Both read back as None."""

    def bind_processor(self, dialect):
        json_null, none_as_null = self.NULL, self.none_as_null

        def process(value):
            if value is None:
                return None if none_as_null else STORED_NULL
            if value is json_null:
                return STORED_NULL
            if isinstance(value, elements.Null):
                return None
            return value

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            return None if value is None else _plain_json(value)

        return process


class _SetType(sqltypes.UserDefinedType):
    """A native DynamoDB set; an empty set is stored as an absent attribute."""

    cache_ok = True
    element_type: tuple[type, ...] = ()
    kind = ""
    code = ""
    element_sqltype: type[sqltypes.TypeEngine] = sqltypes.NullType

    def get_col_spec(self, **kw: Any) -> str:
        return self.code

    def coerce_compared_value(self, op: Any, value: Any) -> sqltypes.TypeEngine:
        # tags.contains("red") compares with one element, not with a set.
        if op in (operators.contains_op, operators.not_contains_op):
            return self.element_sqltype()
        return self

    @property
    def python_type(self) -> type:
        return set

    def bind_processor(self, dialect):
        element_type, kind = self.element_type, self.kind
        *others, last = [t.__name__ for t in element_type]
        allowed = f"{', '.join(others)} or {last}" if others else last
        hidden = dialect.hide_parameters

        def process(value):
            if value is None or len(value) == 0:
                return None
            if not all(isinstance(v, element_type) and not isinstance(v, bool) for v in value):
                raise DataError(f"a {kind} set holds only {allowed} values, got {shown(value, hidden)}")
            return set(value)

        return process

    def literal_processor(self, dialect):
        return None


class StringSet(_SetType):
    """DynamoDB string set (SS)."""

    cache_ok = True
    element_type = (str,)
    kind = "string"
    code = "SS"
    element_sqltype = sqltypes.String


class NumberSet(_SetType):
    """DynamoDB number set (NS); elements come back as Decimal."""

    cache_ok = True
    element_type = (int, float, Decimal)
    kind = "number"
    code = "NS"
    element_sqltype = sqltypes.Numeric


class BinarySet(_SetType):
    """DynamoDB binary set (BS)."""

    cache_ok = True
    element_type = (bytes, bytearray)
    kind = "binary"
    code = "BS"
    element_sqltype = sqltypes.LargeBinary


colspecs = {
    sqltypes.Integer: DynamoInteger,
    sqltypes.Numeric: DynamoNumeric,
    sqltypes.Float: DynamoFloat,
    sqltypes.Boolean: DynamoBoolean,
    sqltypes.DateTime: DynamoDateTime,
    sqltypes.Date: DynamoDate,
    sqltypes.Time: DynamoTime,
    sqltypes.Uuid: DynamoUuid,
    sqltypes.JSON: DynamoJSON,
}
