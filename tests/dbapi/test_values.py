"""Python <-> DynamoDB values through the real server: exact numbers, every attribute type,
and the values refused before anything is sent."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sa_dynamo import dbapi
from sa_dynamo.dbapi.transport import WIRE_ITEMS
from sa_dynamo.dbapi.values import deserialize

from .support import Table, fetch_dicts, quote, typed

# Built from text: arithmetic such as -DIGITS_38 would round to the default context's 28 digits.
DIGITS_38 = Decimal("12345678901234567890123456789012345678")


def round_trip(cursor: dbapi.Cursor, table: Table, value: Any, name: str = "v") -> Any:
    """Store ``value`` under attribute ``name`` of one item and read that attribute back."""
    cursor.execute(f"UPDATE {table.ref} SET {quote(name)} = ? WHERE \"pk\" = 'rt' AND \"sk\" = 'rt'", [value])
    cursor.execute(f"SELECT {quote(name)} FROM {table.ref} WHERE \"pk\" = 'rt' AND \"sk\" = 'rt'")
    assert [column[0] for column in cursor.description] == [name]
    (row,) = cursor.fetchall()
    return row[0]


@pytest.fixture
def stored(cur: dbapi.Cursor, table: Table) -> Table:
    """The table with the item that round_trip() updates."""
    table.insert(cur, {"pk": "rt", "sk": "rt"})
    return table


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", "text"),
        ("", ""),
        ("café 😀 ñ 中文", "café 😀 ñ 中文"),
        ("O'Brien", "O'Brien"),
        ('say "hi"', 'say "hi"'),
        ("a\\nb\n\t", "a\\nb\n\t"),
        (DIGITS_38, DIGITS_38),
        (DIGITS_38.copy_negate(), DIGITS_38.copy_negate()),
        (
            Decimal("1234567890123456789.0123456789012345678"),
            Decimal("1234567890123456789.0123456789012345678"),
        ),
        (
            Decimal("0.00000000000000000000000000000000000000012345678901234567890123456789012345678"),
            Decimal("1.2345678901234567890123456789012345678E-40"),
        ),
        (
            Decimal("11111111111111111111111111111111111111000"),
            Decimal("11111111111111111111111111111111111111000"),
        ),
        (Decimal("1.50"), Decimal("1.5")),
        (Decimal("1.0"), Decimal("1")),
        (Decimal("0.10"), Decimal("0.1")),
        (Decimal("1E+2"), Decimal("100")),
        (Decimal("-0"), Decimal("0")),
        (Decimal("9.9E+125"), Decimal("99" + "0" * 124)),
        (Decimal("-9.9E+125"), Decimal("-99" + "0" * 124)),
        (Decimal("1E-130"), Decimal("1E-130")),
        (42, Decimal("42")),
        (-7, Decimal("-7")),
        (10**37, Decimal(10**37)),
        (0.1, Decimal("0.1")),
        (1 / 3, Decimal("0.3333333333333333")),
        (1e-5, Decimal("0.00001")),
        (1.5e100, Decimal("15" + "0" * 99)),
        (-0.0, Decimal("0")),
        (True, True),
        (False, False),
        (None, None),
        (b"\x00\xffbinary", b"\x00\xffbinary"),
        (bytearray(b"\x01\x02"), b"\x01\x02"),
        (memoryview(b"mv"), b"mv"),
        (Binary(b"boto"), b"boto"),
        (b"", b""),
        ({"SS"}, {"SS"}),
        ({"a", "O'Brien", "😀"}, {"a", "O'Brien", "😀"}),
        ({1, Decimal("2.50"), 0.25, DIGITS_38}, {Decimal("1"), Decimal("2.5"), Decimal("0.25"), DIGITS_38}),
        (frozenset({b"x", b"\x00"}), {b"x", b"\x00"}),
        ([], []),
        ({}, {}),
        ((1, "a"), [Decimal("1"), "a"]),
        (
            {"a": 1, "b": [1.5, "x", None, True, b"\x01"], "c": {"d": {"e": DIGITS_38}}, "s": {"x"}},
            {
                "a": Decimal("1"),
                "b": [Decimal("1.5"), "x", None, True, b"\x01"],
                "c": {"d": {"e": DIGITS_38}},
                "s": {"x"},
            },
        ),
        ({'we\'ird "key"': [[[]]]}, {'we\'ird "key"': [[[]]]}),
        (datetime.date(2024, 2, 29), "2024-02-29"),
        (datetime.datetime(2024, 2, 29, 13, 5, 7, 250000), "2024-02-29T13:05:07.250000"),
        (datetime.time(13, 5), "13:05:00"),
    ],
)
def test_round_trip(cur: dbapi.Cursor, stored: Table, value: Any, expected: Any) -> None:
    assert typed(round_trip(cur, stored, value)) == typed(expected)


def test_null_is_stored_and_differs_from_a_missing_attribute(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1", "nul": None})
    cur.execute(f'SELECT "pk" FROM {table.ref} WHERE "pk" = \'a\' AND "nul" IS NULL')
    assert cur.fetchall() == [("a",)]
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "nul": None}


def test_numbers_equal_in_dynamodb_are_one_element_of_a_set(cur: dbapi.Cursor, table: Table) -> None:
    """0.1 and Decimal("0.1") are two elements of a Python set, one number to DynamoDB, which
    refuses a number set that holds it twice ("Input collection contains duplicates")."""
    table.insert(cur, {"pk": "a", "sk": "1", "ns": {0.1, Decimal("0.1"), Decimal("1.50"), 1.5}})
    assert table.item(cur, "a", "1")["ns"] == {Decimal("0.1"), Decimal("1.5")}


@pytest.mark.parametrize(
    "name",
    ['a"b', "my-attr", "my attr", "$type", "order", "select", "O'Brien", "é😀", 'x"",y'],
)
def test_awkward_attribute_names(cur: dbapi.Cursor, stored: Table, name: str) -> None:
    """Names that need quoting in PartiQL: quotes, dashes, spaces, $, reserved words."""
    assert round_trip(cur, stored, "value", name) == "value"
    stored.insert(cur, {"pk": "ins", "sk": "1", name: Decimal("2.5")})
    assert stored.item(cur, "ins", "1") == {"pk": "ins", "sk": "1", name: Decimal("2.5")}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "cannot store NaN"),
        (float("inf"), "cannot store Infinity"),
        (float("-inf"), "cannot store -Infinity"),
        (Decimal("NaN"), "cannot store NaN"),
        (Decimal("-Infinity"), "cannot store -Infinity"),
        (Decimal("sNaN"), "cannot store sNaN"),
        (Decimal("1" * 39), "more than 38 significant digits"),
        (10**38 + 1, "more than 38 significant digits"),
        (Decimal("1." + "1" * 38), "more than 38 significant digits"),
        (Decimal("-0.0000" + "9" * 39), "more than 38 significant digits"),
        (Decimal("1E+126"), "outside DynamoDB's range"),
        (Decimal("-1E+126"), "outside DynamoDB's range"),
        (Decimal("9.99E-131"), "outside DynamoDB's range"),
        (1e300, "outside DynamoDB's range"),
        (5e-324, "outside DynamoDB's range"),
        (set(), "empty set"),
        (frozenset(), "empty set"),
        ({1, "a"}, "one kind of value"),
        ({True}, "cannot hold bool"),
        ({"m": [{"deep": float("nan")}]}, "cannot store NaN"),
        (object(), "cannot send a object"),
        ({"m": [complex(1, 2)]}, "cannot send a complex"),
    ],
)
def test_unstorable_values_are_data_errors_before_sending(
    cur: dbapi.Cursor, table: Table, calls: dict, value: Any, message: str
) -> None:
    for run in (
        lambda: table.insert(cur, {"pk": "a", "sk": "1", "v": value}),
        lambda: cur.executemany(table.insert_sql(["pk", "sk", "v"]), [["a", "2", 1], ["a", "3", value]]),
    ):
        with pytest.raises(dbapi.DataError, match=message):
            run()
    assert dict(calls) == {}


# Every decimal DynamoDB can store: up to 38 significant digits, magnitude 1E-130 .. 9.9...E+125.
storable_decimals = st.builds(
    lambda mantissa, exponent: Decimal(f"{mantissa}E{exponent}"),
    st.integers(-(10**38) + 1, 10**38 - 1),
    st.integers(-130, 88),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=storable_decimals)
def test_every_storable_decimal_round_trips_exactly(cur: dbapi.Cursor, stored: Table, value: Decimal) -> None:
    back = round_trip(cur, stored, value)
    assert type(back) is Decimal
    assert back == value  # Decimal equality is exact: no digit may be lost


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value=st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: f == 0 or 1e-130 <= abs(f) < 9e125
    )
)
def test_floats_are_sent_as_their_shortest_repr(cur: dbapi.Cursor, stored: Table, value: float) -> None:
    back = round_trip(cur, stored, value)
    assert back == Decimal(repr(value))
    assert float(back) == value


def test_items_read_from_dynamodb_json_equal_botocore_parsed_ones(
    cur: dbapi.Cursor, table: Table, client: Any
) -> None:
    """The cursor reads a page's Items from DynamoDB's JSON itself (values.deserialize_wire),
    not from botocore's parse; both readings give the same values, and the client's own calls
    still get botocore's parse."""
    item = {
        "pk": "wire",
        "sk": "1",
        "s": "café 😀",
        "n": DIGITS_38,
        "f": Decimal("-1.5E-100"),
        "b": b"\x00\xff",
        "e": b"",
        "t": True,
        "no": False,
        "null": None,
        "ss": {"a", "b"},
        "ns": {1, Decimal("2.5"), DIGITS_38},
        "bs": {b"x", b"\x00"},
        "m": {"l": [1, b"\x01", None, {"deep": [{"ss": {"x"}}]}], "empty": {}, "b": b"\xfe"},
        "l": [[], [Decimal("0.1")], "x"],
    }
    table.insert(cur, item)
    statement = f'SELECT * FROM {table.ref} WHERE "pk" = ? AND "sk" = ?'
    cur.execute(statement, ["wire", "1"])
    assert cur._pages.wire  # the fast path was taken
    (row,) = fetch_dicts(cur)
    response = client.execute_statement(Statement=statement, Parameters=[{"S": "wire"}, {"S": "1"}])
    assert WIRE_ITEMS not in response
    (parsed,) = response["Items"]
    assert parsed["b"] == {"B": b"\x00\xff"}  # botocore's reading, untouched
    assert typed(row) == typed({name: deserialize(value) for name, value in parsed.items()})
    numbers = {"ns": {Decimal(1), Decimal("2.5"), DIGITS_38}}
    nested = {"m": {**item["m"], "l": [Decimal(1), b"\x01", None, {"deep": [{"ss": {"x"}}]}]}}
    assert typed(row) == typed({**item, **numbers, **nested})
