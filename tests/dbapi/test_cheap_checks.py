"""The shortcuts a write's checks take for the common case give the answers of the exact ones:
the item-size bound never lets through an item the exact count refuses, and an int's N text is
the canonical text of the same number, its limits included."""

from __future__ import annotations

import enum
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sa_dynamo.dbapi.errors import DataError
from sa_dynamo.dbapi.limits import MAX_ITEM_BYTES
from sa_dynamo.dbapi.validate import (
    attribute_size,
    check_number,
    number_size,
    number_text,
    surely_within_limit,
)
from sa_dynamo.dbapi.values import serialize

NUMBERS = st.one_of(
    st.integers(min_value=-(10**45), max_value=10**45),
    st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
        lambda d: abs(d) < Decimal("1E+120")
    ),
)


@settings(max_examples=300, deadline=None)
@given(NUMBERS)
def test_a_number_takes_at_most_its_text_and_two_bytes(number: Any) -> None:
    """What the size bound counts a number as: never less than DynamoDB's count."""
    try:
        text = serialize(number)["N"]
    except DataError:
        return  # a number DynamoDB cannot store is refused before any size is counted
    assert number_size(text) <= len(text) + 2


def exact_size(values: dict[str, dict[str, Any]]) -> int:
    return sum(len(name.encode()) + attribute_size(value) for name, value in values.items())


CHARACTERS = ["x", "é", "€", "😀"]  # 1 to 4 bytes in UTF-8


def item(character: str, length: int) -> dict[str, dict[str, Any]]:
    values = {"pk": "a", "n": -12345, "t": True, "z": None, "f": character * length, "b": b"\x00\x01"}
    return {name: serialize(value) for name, value in values.items()}


@pytest.mark.parametrize("character", CHARACTERS)
def test_the_size_bound_passes_only_items_within_the_limit(character: str) -> None:
    """At the bound's own edge, for every width of character: the longest item it passes is
    within 400 KB by DynamoDB's count, and one character more is left to the exact count."""
    low, high = 0, MAX_ITEM_BYTES  # the bound passes ``low`` characters, not ``high``
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if surely_within_limit(item(character, middle)) else (low, middle)
    assert low > MAX_ITEM_BYTES // 4 - 100  # the bound is not so loose that it never applies
    assert exact_size(item(character, low)) <= MAX_ITEM_BYTES
    assert not surely_within_limit(item(character, high))


@pytest.mark.parametrize(
    "value", [{"SS": ["a"]}, {"NS": ["1"]}, {"BS": [b"x"]}, {"M": {"": {"S": "x"}}}, {"L": [{"S": "x"}]}]
)
def test_sets_maps_and_lists_are_counted_exactly(value: dict[str, Any]) -> None:
    """A map's keys are checked by the exact count (an empty one is refused): never skipped."""
    assert not surely_within_limit({"pk": {"S": "a"}, "v": value})


class Size(enum.IntEnum):
    LARGE = 3


INTS = [0, 1, -1, 7, 100, -12345, 10**37, 10**38 - 1, -(10**38 - 1), 10**38, 10**40, -(10**125), Size.LARGE]


@pytest.mark.parametrize("number", INTS, ids=str)
def test_an_int_is_sent_as_the_canonical_text_of_its_number(number: int) -> None:
    expected = Decimal(int(number))
    check_number(expected)
    assert serialize(number) == {"N": number_text(expected)}


@pytest.mark.parametrize(
    "number", [10**38 + 1, -(10**38 + 1), 10**126, 12345678901234567890123456789012345678901]
)
def test_an_int_dynamodb_cannot_store_is_refused(number: int) -> None:
    with pytest.raises(DataError, match=r"significant digits|outside DynamoDB's range"):
        serialize(number)
