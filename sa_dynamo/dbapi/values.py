"""Python values <-> DynamoDB AttributeValues.

Numbers are exact: N becomes ``Decimal`` and floats are converted through their shortest repr,
never through binary rounding. What DynamoDB cannot store (NaN, infinity, more than 38 digits,
more than 32 levels of nesting: the rules of validate.py) is refused here, before anything is
sent.
"""

from __future__ import annotations

import datetime
import gc
from base64 import b64decode
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary, TypeDeserializer

from .errors import DataError
from .limits import MAX_DIGITS, MAX_NESTING
from .validate import check_number, nesting_error, number_text

_deserializer = TypeDeserializer()
_NUMBERS = DYNAMODB_CONTEXT  # what TypeDeserializer reads NS elements with
_EXACT_INTS = 10**MAX_DIGITS


class _StoredNull:
    __slots__ = ()

    def __repr__(self) -> str:
        return "STORED_NULL"

    def __reduce__(self) -> str:
        return "STORED_NULL"


# A parameter that stores DynamoDB's NULL (JSON's null), where None leaves the attribute absent
# (SQL's NULL): a JSON column's None is a value, as SQL stores JSON's null.
STORED_NULL: Any = _StoredNull()


def _number(value: int | float | Decimal) -> str:
    """The canonical N text of a number, or DataError for one DynamoDB cannot store."""
    if type(value) is int and -_EXACT_INTS < value < _EXACT_INTS:
        return str(value)  # at most 38 digits: stored as it is, and its text is the canonical one
    if isinstance(value, float):
        value = Decimal(repr(value))  # the shortest repr: 0.1 is sent as 0.1, not 0.1000000000000000055
    elif isinstance(value, int):
        value = Decimal(value)
    check_number(value)
    return number_text(value)


def _set(value: Set) -> dict[str, list]:
    if not value:
        raise DataError("DynamoDB cannot store an empty set: use None to leave the attribute absent")
    kinds = {_scalar_kind(v) for v in value}
    if len(kinds) != 1:
        raise DataError(f"a DynamoDB set holds one kind of value (strings, numbers or binary), got {kinds}")
    kind = kinds.pop()
    # Distinct in Python, equal in DynamoDB (0.1 and Decimal("0.1")): DynamoDB refuses a set
    # with duplicates, so each is sent once.
    if kind == "S":
        return {"SS": sorted(_text(v) for v in value)}
    if kind == "N":
        return {"NS": sorted({_number(v) for v in value})}
    return {"BS": sorted({bytes(v) for v in value})}


def _scalar_kind(value: Any) -> str:
    if isinstance(value, str):
        return "S"
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return "N"
    if isinstance(value, (bytes, bytearray, memoryview, Binary)):
        return "B"
    raise DataError(f"a DynamoDB set cannot hold {type(value).__name__} values")


def _text(value: str) -> str:
    """``value``, which DynamoDB stores as UTF-8; a lone surrogate (what decoding bytes that are
    not UTF-8 with errors="surrogateescape" leaves) has no UTF-8 form and is refused."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise DataError(
                f"a string holds a lone surrogate at character {error.start}, which UTF-8 (the "
                "encoding DynamoDB stores) cannot hold: decode the bytes it came from with "
                "errors='replace', or store them as bytes (LargeBinary)"
            ) from None
    return value


def serialize(value: Any, depth: int = 0) -> dict[str, Any]:
    """One Python value as a DynamoDB AttributeValue. ``depth``: the maps and lists around it;
    DynamoDB stores 32 levels, and a deeper value (or one that contains itself) is refused here
    rather than exhausting Python's recursion."""
    if value is None or value is STORED_NULL:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": _text(value)}
    if isinstance(value, (int, float, Decimal)):
        return {"N": _number(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"B": bytes(value)}
    if isinstance(value, Binary):
        return {"B": value.value}
    if isinstance(value, Set):
        return _set(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return {"S": value.isoformat()}
    if not isinstance(value, (Mapping, Sequence)):
        raise DataError(
            f"cannot send a {type(value).__name__} to DynamoDB: use str, int, Decimal, float, bool, "
            "bytes, set, list, dict or None"
        )
    if depth >= MAX_NESTING:
        raise nesting_error()
    if isinstance(value, Mapping):
        return {"M": {_text(str(k)): serialize(v, depth + 1) for k, v in value.items()}}
    return {"L": [serialize(v, depth + 1) for v in value]}


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


def received(value: Any) -> Any:
    """A parameter as DynamoDB receives it, as a Python value read from an item: the float 0.7
    is the number 0.7 (``Decimal("0.7")``), a tuple a list, a bytearray bytes. Whoever tests an
    item on the client compares with this, as DynamoDB compares the AttributeValue sent."""
    return deserialize(serialize(value))


def deserialize_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """An item's AttributeValues as Python values, so that equal items compare equal (1.0 = 1,
    sets unordered) and a predicate can read them."""
    return {name: deserialize(value) for name, value in item.items()}


def key_of(item: Mapping[str, Any], names: Iterable[str]) -> tuple[Any, ...]:
    """An item's (or a key's) values of ``names`` as Python values, one hashable tuple in which
    DynamoDB's equal keys are equal: 1 and 1.0 are one number, as DynamoDB says."""
    return tuple(deserialize(item[name]) for name in names)


class collector_paused:
    """Python's cyclic garbage collector held off while a page is decoded and turned into rows.

    A page is thousands of dicts that hold no reference cycles and die together a moment later;
    collections that start while they are made find them all alive and promote them, page after
    page, into the oldest generation, until a full collection walks every object of the process.
    In a stream that was most of its CPU (docs/performance.md, W9). Reference counting frees the
    page as before; collections resume when the block ends. Left as it is when the collector is
    off already (``gc.disable()``); only a few milliseconds of CPU, never a wait on the network,
    run inside. A class, not a generator: it runs twice in every read."""

    __slots__ = ("_paused",)

    def __enter__(self) -> None:
        self._paused = gc.isenabled()
        if self._paused:
            gc.disable()

    def __exit__(self, *exc_info: Any) -> None:
        if self._paused:
            gc.enable()
