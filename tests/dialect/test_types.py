"""Every SQLAlchemy type through Core INSERT and SELECT on DynamoDB Local: the value that comes
back (and its Python type), and the AttributeValue really stored."""

from __future__ import annotations

import datetime
import enum
import re
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Date,
    DateTime,
    Enum,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    Time,
    Uuid,
    select,
)
from sqlalchemy.exc import DataError

from sa_dynamo import BinarySet, NumberSet, StringSet

UTC = datetime.timezone.utc


class Size(enum.Enum):
    small = "small"
    large = "large"


@pytest.fixture(scope="module")
def typed(engine) -> Iterator[Table]:
    """One column per type; each test writes items under its own partition key."""
    metadata = MetaData()
    table = Table(
        f"types_{uuid.uuid4().hex[:12]}",
        metadata,
        Column("pk", String, primary_key=True),
        Column("string", String),
        Column("integer", Integer),
        Column("numeric", Numeric),
        Column("money", Numeric(38, 2)),
        Column("float", Float),
        Column("boolean", Boolean),
        Column("binary", LargeBinary),
        Column("naive", DateTime),
        Column("aware", DateTime(timezone=True)),
        Column("date", Date),
        Column("time", Time),
        Column("uuid", Uuid),
        Column("doc", JSON),
        Column("size", Enum(Size)),
        Column("tags", StringSet),
        Column("scores", NumberSet),
        Column("blobs", BinarySet),
    )
    metadata.create_all(engine)
    yield table
    metadata.drop_all(engine)


@pytest.fixture
def key(request) -> str:
    """A partition key only this test (and parameter set) writes to the shared table."""
    return request.node.name


def insert(engine, table: Table, *rows: dict[str, Any]) -> None:
    with engine.begin() as conn:
        conn.execute(table.insert(), list(rows))


def read(engine, table: Table, pk: str) -> dict[str, Any]:
    with engine.connect() as conn:
        return dict(conn.execute(select(table).where(table.c.pk == pk)).one()._mapping)


def stored(raw, table: Table, pk: str) -> dict[str, Any] | None:
    """The item as DynamoDB holds it (low-level AttributeValues), or None when there is none."""
    return raw.get_item(TableName=table.name, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")


def typed_like(value: Any) -> Any:
    """The value with the type of every part spelled out, so 1 == 1.0 == True cannot pass for each other."""
    if isinstance(value, dict):
        return {k: typed_like(v) for k, v in value.items()}
    if isinstance(value, (list, set, frozenset)):
        parts = [typed_like(v) for v in value]
        return (type(value), sorted(parts, key=repr) if isinstance(value, (set, frozenset)) else parts)
    return (type(value), value)


def as_sets(item: dict[str, Any]) -> dict[str, Any]:
    """SS/NS/BS lists in a low-level item as sets: DynamoDB keeps no order inside a set."""
    return {
        name: {code: set(v) for code, v in value.items()} if value.keys() & {"SS", "NS", "BS"} else value
        for name, value in item.items()
    }


AWARE = datetime.datetime(
    2024, 2, 29, 23, 59, 58, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))
)
TEXT = "héllo \"double\" it's 😀 \\n ''"
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")

# column, value written, AttributeValue stored, value read back
ROUND_TRIPS = {
    "string": ("string", TEXT, {"S": TEXT}, TEXT),
    "38-digit integer": ("integer", 10**38 - 1, {"N": "9" * 38}, 10**38 - 1),
    "38-digit decimal": (
        "numeric",
        Decimal("-1234567890.123456789012345678901234567"),
        {"N": "-1234567890.123456789012345678901234567"},
        Decimal("-1234567890.123456789012345678901234567"),
    ),
    "tiny decimal": ("numeric", Decimal("1E-130"), {"N": "0." + "0" * 129 + "1"}, Decimal("1E-130")),
    "38-digit decimal at scale 2": (
        "money",
        Decimal("123456789012345678901234567890123456.70"),
        {"N": "123456789012345678901234567890123456.7"},
        Decimal("123456789012345678901234567890123456.70"),
    ),
    # PostgreSQL's numeric(p, s): rounded to the scale, ties away from zero.
    "more places than the scale": ("money", Decimal("0.125"), {"N": "0.13"}, Decimal("0.13")),
    "a negative tie": ("money", Decimal("-1.005"), {"N": "-1.01"}, Decimal("-1.01")),
    "float": ("float", 0.1, {"N": "0.1"}, 0.1),
    "true": ("boolean", True, {"BOOL": True}, True),
    "false": ("boolean", False, {"BOOL": False}, False),
    "binary": ("binary", bytes(range(256)), {"B": bytes(range(256))}, bytes(range(256))),
    "empty binary": ("binary", b"", {"B": b""}, b""),
    "naive datetime": (
        "naive",
        datetime.datetime(2024, 2, 29, 23, 59, 58),
        {"S": "2024-02-29T23:59:58.000000"},
        datetime.datetime(2024, 2, 29, 23, 59, 58),
    ),
    "aware datetime in +05:30": (
        "aware",
        AWARE,
        {"S": "2024-02-29T18:29:58.000005+00:00"},
        AWARE.astimezone(UTC),
    ),
    "date": ("date", datetime.date(1999, 12, 31), {"S": "1999-12-31"}, datetime.date(1999, 12, 31)),
    "time": ("time", datetime.time(0, 0, 1), {"S": "00:00:01.000000"}, datetime.time(0, 0, 1)),
    "uuid": ("uuid", UUID, {"S": "12345678-1234-5678-1234-567812345678"}, UUID),
    "nested JSON": (
        "doc",
        {"a": [1, 2.5, {"b": None, "ü 'q'": "x"}], "t": True, "deep": {"er": [[], {}]}},
        {
            "M": {
                "a": {"L": [{"N": "1"}, {"N": "2.5"}, {"M": {"b": {"NULL": True}, "ü 'q'": {"S": "x"}}}]},
                "t": {"BOOL": True},
                "deep": {"M": {"er": {"L": [{"L": []}, {"M": {}}]}}},
            }
        },
        {"a": [1, 2.5, {"b": None, "ü 'q'": "x"}], "t": True, "deep": {"er": [[], {}]}},
    ),
    "JSON list": (
        "doc",
        [1, "two", None],
        {"L": [{"N": "1"}, {"S": "two"}, {"NULL": True}]},
        [1, "two", None],
    ),
    "enum": ("size", Size.large, {"S": "large"}, Size.large),
    "string set": ("tags", {"a", "b'c", "😀"}, {"SS": {"a", "b'c", "😀"}}, {"a", "b'c", "😀"}),
    "number set": ("scores", {1, Decimal("2.5")}, {"NS": {"1", "2.5"}}, {Decimal(1), Decimal("2.5")}),
    "binary set": ("blobs", {b"\x00", b"\xff"}, {"BS": {b"\x00", b"\xff"}}, {b"\x00", b"\xff"}),
}


@pytest.mark.parametrize(
    ("column", "value", "attribute", "expected"), ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys()
)
def test_round_trip(engine, raw, typed, key, column, value, attribute, expected):
    insert(engine, typed, {"pk": key, column: value})
    assert as_sets(stored(raw, typed, key)) == {"pk": {"S": key}, column: attribute}
    assert typed_like(read(engine, typed, key)[column]) == typed_like(expected)


def test_scaled_decimal_read_back_finds_its_item(engine, typed, key):
    """The value is stored rounded to the scale, so what was read finds its item."""
    insert(engine, typed, {"pk": key, "money": Decimal("2") / 3})
    back = read(engine, typed, key)["money"]
    with engine.connect() as conn:
        found = conn.scalars(select(typed.c.pk).where(typed.c.pk == key, typed.c.money == back)).all()
    assert (back, found) == (Decimal("0.67"), [key])


def test_aware_datetime_comes_back_in_utc(engine, typed, key):
    insert(engine, typed, {"pk": key, "aware": AWARE})
    back = read(engine, typed, key)["aware"]
    assert (back, back.tzinfo) == (AWARE, UTC)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        (
            "aware",
            datetime.datetime(2024, 1, 1),
            "DateTime(timezone=True) needs an aware datetime, got naive 2024-01-01T00:00:00: attach a tzinfo "
            "(e.g. datetime.timezone.utc)",
        ),
        (
            "naive",
            datetime.datetime(2024, 1, 1, tzinfo=UTC),
            "DateTime() stores naive datetimes, got aware 2024-01-01T00:00:00+00:00: declare "
            "DateTime(timezone=True) or pass a naive value",
        ),
        ("naive", "2024-01-01", "expected a datetime, got str"),
        ("date", datetime.datetime(2024, 1, 1), "expected a date, got datetime"),
        ("tags", {1}, "a string set holds only str values, got {1}"),
        ("scores", {True}, "a number set holds only int, float or Decimal values, got {True}"),
    ],
    ids=[
        "naive into aware",
        "aware into naive",
        "text into DateTime",
        "datetime into Date",
        "number in a string set",
        "bool in a number set",
    ],
)
def test_values_of_the_wrong_kind_are_refused(engine, raw, typed, key, column, value, message):
    """A DataError before anything is sent, as for every other value DynamoDB cannot store."""
    with pytest.raises(DataError) as raised:
        insert(engine, typed, {"pk": key, column: value})
    assert str(raised.value.orig) == message
    assert stored(raw, typed, key) is None


@pytest.mark.parametrize("column", ["naive", "aware"])
def test_a_datetime_of_the_wrong_kind_in_a_where_is_refused_before_sending(engine, typed, key, sent, column):
    value = AWARE if column == "naive" else AWARE.replace(tzinfo=None)
    with engine.connect() as conn, pytest.raises(DataError, match="DateTime"):
        conn.execute(select(typed.c.pk).where(typed.c.pk == key, typed.c[column] == value))
    assert not any(statement.startswith("SELECT") for statement in sent)


@pytest.fixture
def events(engine, metadata, table_name) -> Table:
    table = Table(
        table_name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("at", DateTime(timezone=True), primary_key=True),
        Column("local", DateTime),
    )
    metadata.create_all(engine)
    return table


def test_datetimes_sort_in_time_order_as_stored_strings(engine, raw, events):
    """Sort keys compare the stored strings; fixed-width UTC text makes that time order."""
    tz = datetime.timezone
    times = [
        datetime.datetime(2023, 12, 31, 23, 30, tzinfo=tz(datetime.timedelta(hours=-5))),  # 04:30Z
        datetime.datetime(2024, 1, 1, 3, 0, 0, 500000, tzinfo=UTC),  # 03:00:00.5Z
        datetime.datetime(2024, 1, 1, 10, 0, tzinfo=tz(datetime.timedelta(hours=9))),  # 01:00Z
        datetime.datetime(2024, 1, 1, 3, 0, tzinfo=UTC),  # 03:00Z
    ]
    insert(engine, events, *({"pk": "A", "at": at, "local": at.replace(tzinfo=None)} for at in times))
    with engine.connect() as conn:
        ordered = conn.scalars(select(events.c.at).where(events.c.pk == "A").order_by(events.c.at)).all()
    assert ordered == sorted(times)
    items = raw.query(
        TableName=events.name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "A"}},
    )["Items"]
    assert [item["at"]["S"] for item in items] == [
        "2024-01-01T01:00:00.000000+00:00",
        "2024-01-01T03:00:00.000000+00:00",
        "2024-01-01T03:00:00.500000+00:00",
        "2024-01-01T04:30:00.000000+00:00",
    ]
    local = sorted(item["local"]["S"] for item in items)
    assert [datetime.datetime.fromisoformat(s) for s in local] == sorted(
        t.replace(tzinfo=None) for t in times
    )


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        (
            "float",
            float("nan"),
            "DynamoDB cannot store NaN: store None (attribute absent) or a finite number",
        ),
        (
            "float",
            float("-inf"),
            "DynamoDB cannot store -Infinity: store None (attribute absent) or a finite number",
        ),
        (
            "numeric",
            Decimal("Infinity"),
            "DynamoDB cannot store Infinity: store None (attribute absent) or a finite number",
        ),
        (
            "doc",
            {"x": [float("nan")]},
            "DynamoDB cannot store NaN: store None (attribute absent) or a finite number",
        ),
        (
            "scores",
            {float("inf")},
            "DynamoDB cannot store Infinity: store None (attribute absent) or a finite number",
        ),
        (
            "numeric",
            Decimal("1" * 39),
            "a number with more than 38 significant digits (39): DynamoDB keeps 38 exactly",
        ),
    ],
    ids=["float NaN", "float -inf", "Decimal infinity", "NaN in JSON", "inf in a number set", "39 digits"],
)
def test_unstorable_numbers_are_refused_and_nothing_is_written(
    engine, raw, typed, key, column, value, message
):
    """The transaction's earlier, valid insert is not written either. The message names the
    attribute and quotes the start of its value."""
    finite, valid, unstorable = f"{key}/finite", f"{key}/valid", f"{key}/unstorable"
    insert(engine, typed, {"pk": finite, "numeric": 1})
    with pytest.raises(DataError) as raised, engine.begin() as conn:
        conn.execute(typed.insert(), {"pk": valid, "string": "fine"})
        conn.execute(typed.insert(), {"pk": unstorable, column: value})
    assert re.fullmatch(rf"attribute '{column}' \(.{{1,35}}\): {re.escape(message)}", str(raised.value.orig))
    assert (stored(raw, typed, valid), stored(raw, typed, unstorable)) == (None, None)
    with pytest.raises(DataError), engine.begin() as conn:
        conn.execute(typed.update().where(typed.c.pk == finite).values({column: value}))
    assert stored(raw, typed, finite) == {"pk": {"S": finite}, "numeric": {"N": "1"}}


def test_none_and_empty_sets_leave_attributes_absent(engine, raw, sent, typed, key):
    """INSERT omits them, UPDATE REMOVEs them: a missing attribute is SQL NULL (a JSON column's
    None is JSON's null, a value: test_json_null.py)."""
    nothing = {"string": None, "aware": None, "tags": set(), "scores": None}
    insert(engine, typed, {"pk": key, "integer": 1, **nothing})
    assert stored(raw, typed, key) == {"pk": {"S": key}, "integer": {"N": "1"}}
    assert {name: read(engine, typed, key)[name] for name in nothing} == dict.fromkeys(nothing)
    with engine.begin() as conn:
        conn.execute(
            typed.update().where(typed.c.pk == key).values(string="x", aware=AWARE, tags={"t"}, scores={2})
        )
    sent.clear()
    with engine.begin() as conn:
        conn.execute(typed.update().where(typed.c.pk == key).values(integer=2, **nothing))
    assert sent == [
        f'UPDATE "{typed.name}" SET "integer" = ? REMOVE "string" REMOVE "aware" REMOVE "tags" '
        'REMOVE "scores" WHERE "pk" = ?'
    ]
    assert stored(raw, typed, key) == {"pk": {"S": key}, "integer": {"N": "2"}}


@pytest.fixture
def awkward(engine, metadata, table_name) -> Table:
    """Names PartiQL reserves or that need escaping, as table key, index key and plain attributes."""
    table = Table(
        table_name,
        metadata,
        Column('it\'s "x"', String, primary_key=True),
        Column("order", Integer, primary_key=True),
        Column("$type", String),
        Column("naïve ключ", String),
        Column("value", JSON),
        Index("by_label", "naïve ключ", "$type"),
    )
    metadata.create_all(engine)
    return table


def test_quotes_and_unicode_in_names_and_values(engine, raw, awkward):
    quoted, order, kind, label, _ = awkward.c
    text = 'O\'Brien "quoted" ключ 😀'
    row = {quoted.name: text, "order": 1, "$type": "T'1", label.name: text, "value": {"$k": text}}
    insert(engine, awkward, row)
    with engine.connect() as conn:
        through_index = conn.execute(select(awkward).where(label == text, kind == "T'1")).all()
    assert [tuple(r) for r in through_index] == [(text, 1, "T'1", text, {"$k": text})]
    with engine.begin() as conn:
        conn.execute(
            awkward.update().where(quoted == text, order == 1).values({label.name: "ü", "value": None})
        )
    with engine.connect() as conn:
        assert tuple(conn.execute(select(awkward).where(quoted == text)).one()) == (text, 1, "T'1", "ü", None)
    item = raw.get_item(TableName=awkward.name, Key={quoted.name: {"S": text}, "order": {"N": "1"}})["Item"]
    assert item == {
        quoted.name: {"S": text},
        "order": {"N": "1"},
        "$type": {"S": "T'1"},
        label.name: {"S": "ü"},
        "value": {"NULL": True},  # a JSON column's None: JSON's null
    }


def test_an_integer_column_refuses_fractions_and_reads_foreign_ones_exactly(
    engine, metadata, raw, table_name
):
    from decimal import Decimal

    from sqlalchemy import Column, Integer, String, Table, select
    from sqlalchemy.exc import DataError

    table = Table(table_name, metadata, Column("id", String, primary_key=True), Column("n", Integer))
    metadata.create_all(engine)
    with (
        engine.begin() as conn,
        pytest.raises(DataError, match=r"column 'n' .* takes whole numbers; got 1\.5"),
    ):
        conn.execute(table.insert(), {"id": "a", "n": 1.5})
    raw.put_item(TableName=table_name, Item={"id": {"S": "b"}, "n": {"N": "2.5"}})
    with engine.begin() as conn:
        conn.execute(table.insert(), {"id": "c", "n": 3.0})
    with engine.connect() as conn:
        assert dict(conn.execute(select(table.c.id, table.c.n).where(table.c.id.in_(["b", "c"]))).all()) == {
            "b": Decimal("2.5"),
            "c": 3,
        }
