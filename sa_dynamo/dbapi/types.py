"""Python values <-> DynamoDB AttributeValues.

Numbers are exact: N becomes ``Decimal`` and floats are converted through their shortest repr,
never through binary rounding. NaN and infinity cannot be stored, so they are refused here,
before anything is sent.
"""

from __future__ import annotations

import datetime
from base64 import b64decode
from collections.abc import Callable, Mapping, Sequence, Set
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary, TypeDeserializer

from .errors import DataError

_deserializer = TypeDeserializer()
_NUMBERS = DYNAMODB_CONTEXT  # what TypeDeserializer reads NS elements with


def _number(value: int | float | Decimal) -> str:
    """The canonical N text of a number, or DataError for one DynamoDB cannot store."""
    if isinstance(value, float):
        value = Decimal(repr(value))  # the shortest repr: 0.1 is sent as 0.1, not 0.1000000000000000055
    elif isinstance(value, int):
        value = Decimal(value)
    if not value.is_finite():
        raise DataError(f"DynamoDB cannot store {value}: store None (attribute absent) or a finite number")
    if value.is_zero():
        return "0"
    # Counted from the digit tuple: normalize() would round to the context's 28 digits first.
    significant = "".join(map(str, value.as_tuple().digits)).rstrip("0")
    if len(significant) > 38:
        raise DataError(f"number {value} has more than 38 significant digits; DynamoDB keeps 38 exactly")
    if not -130 <= value.adjusted() <= 125:
        raise DataError(f"number {value} is outside DynamoDB's range (1E-130 to 9.9E+125)")
    # DynamoDB's own form: plain notation without insignificant zeros ("1.50" -> "1.5",
    # "1E+2" -> "100"). INSERT normalises on the server, but DynamoDB Local stores the text of
    # an UPDATE's SET value verbatim, so the driver sends the canonical form itself.
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _set(value: Set) -> dict[str, list]:
    if not value:
        raise DataError("DynamoDB cannot store an empty set: use None to leave the attribute absent")
    kinds = {_scalar_kind(v) for v in value}
    if len(kinds) != 1:
        raise DataError(f"a DynamoDB set holds one kind of value (strings, numbers or binary), got {kinds}")
    kind = kinds.pop()
    if kind == "S":
        return {"SS": sorted(value)}
    if kind == "N":
        return {"NS": [_number(v) for v in value]}
    return {"BS": [bytes(v) for v in value]}


def _scalar_kind(value: Any) -> str:
    if isinstance(value, str):
        return "S"
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return "N"
    if isinstance(value, (bytes, bytearray, memoryview, Binary)):
        return "B"
    raise DataError(f"a DynamoDB set cannot hold {type(value).__name__} values")


def serialize(value: Any) -> dict[str, Any]:
    """One Python value as a DynamoDB AttributeValue."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, (int, float, Decimal)):
        return {"N": _number(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"B": bytes(value)}
    if isinstance(value, Binary):
        return {"B": value.value}
    if isinstance(value, Mapping):
        return {"M": {str(k): serialize(v) for k, v in value.items()}}
    if isinstance(value, Set):
        return _set(value)
    if isinstance(value, Sequence):
        return {"L": [serialize(v) for v in value]}
    if isinstance(value, (datetime.date, datetime.time)):
        return {"S": value.isoformat()}
    raise DataError(
        f"cannot send a {type(value).__name__} to DynamoDB: use str, int, Decimal, float, bool, bytes, "
        "set, list, dict or None"
    )


def _reader(binary: Callable[[Any], bytes]) -> Callable[[Mapping[str, Any]], Any]:
    """A deserializer whose binary values (and those nested in maps, lists and sets) are read
    by ``binary``; the only difference between botocore's parse and DynamoDB's JSON."""

    def read(value: Mapping[str, Any]) -> Any:
        # Strings and numbers first: they are most attribute values, and each test costs a lookup.
        text = value.get("S")
        if text is not None:
            return text
        number = value.get("N")
        if number is not None:
            return Decimal(number)
        return _other(value, binary, read)

    return read


# One AttributeValue as botocore parses it, as a Python value (N -> Decimal, B -> bytes,
# sets -> set, NULL -> None, M -> dict, L -> list).
deserialize = _reader(bytes)
# The same, for an AttributeValue as DynamoDB's JSON sends it (binary as base64 text).
deserialize_wire = _reader(b64decode)


def _other(value: Mapping[str, Any], binary: Callable[[Any], bytes], nested: Callable[[Any], Any]) -> Any:
    """Every AttributeValue type but S and N; the result of boto3's TypeDeserializer, except
    that binary values are ``bytes`` (not ``Binary``) and numbers in maps and lists Decimal."""
    if "BOOL" in value:
        return value["BOOL"]
    if "NULL" in value:
        return None
    if "M" in value:
        return {k: nested(v) for k, v in value["M"].items()}
    if "L" in value:
        return [nested(v) for v in value["L"]]
    if "B" in value:
        return binary(value["B"])
    if "SS" in value:
        return set(value["SS"])
    if "NS" in value:
        return {_NUMBERS.create_decimal(v) for v in value["NS"]}
    if "BS" in value:
        return {binary(v) for v in value["BS"]}
    return _deserializer.deserialize(value)  # its error for what is not an AttributeValue
