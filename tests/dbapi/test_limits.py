"""The driver's limits are DynamoDB's own, at the exact boundary: what DynamoDB Local accepts the
driver sends, and one byte (or level) more is refused by both, by the driver before sending."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sa_dynamo import dbapi
from sa_dynamo.dbapi.limits import MAX_ITEM_BYTES
from sa_dynamo.dbapi.validate import attribute_size
from sa_dynamo.dbapi.values import serialize

from .support import Table, quote

SHAPES: dict[str, dict[str, Any]] = {
    "strings": {"s": "é😀 text"},
    "a fraction": {"n": Decimal("1.5")},
    "a negative number": {"n": -12345},
    "zero": {"n": 0},
    "38 digits": {"n": Decimal("1234567890123456789012345678.9012345678")},
    "a tiny number": {"n": Decimal("1E-130")},
    "binary": {"b": b"\x00\x01\x02"},
    "a boolean and a null": {"t": True, "z": None},
    "a list": {"l": ["x", 1, [], {}]},
    "a map": {"m": {"k": "x", "kk": [1, {"deep": Decimal("-0.5")}]}},
    "sets": {"ss": {"a", "bb"}, "ns": {1, 12345}, "bs": {b"xy"}},
}


def item_size(values: dict[str, Any]) -> int:
    return sum(len(name.encode()) + attribute_size(serialize(v)) for name, v in values.items())


@pytest.mark.parametrize("extra", SHAPES.values(), ids=SHAPES.keys())
def test_the_item_size_is_counted_as_dynamodb_counts_it(
    cur: dbapi.Cursor, client: Any, table: Table, calls: Any, extra: dict[str, Any]
) -> None:
    """A filler attribute makes the item exactly 400 KB by the driver's count: DynamoDB takes
    it, and refuses one byte more, which the driver refuses before sending."""
    values = {"pk": "a", "sk": "b", **extra, "f": ""}
    room = MAX_ITEM_BYTES - item_size(values)
    fits, too_big = {**values, "f": "x" * room}, {**values, "f": "x" * (room + 1)}
    with pytest.raises(dbapi.DataError, match="over DynamoDB's 400 KB item limit"):
        table.insert(cur, too_big)
    assert dict(calls) == {}
    with pytest.raises(ClientError, match="Item size has exceeded the maximum allowed size"):
        client.put_item(TableName=table.name, Item={name: serialize(v) for name, v in too_big.items()})
    table.insert(cur, fits)
    assert len(table.item(cur, "a", "b")["f"]) == room


@pytest.mark.parametrize(("name", "limit"), [("pk", 2048), ("sk", 1024)])
@pytest.mark.parametrize("unit", ["x", "é"])
def test_key_sizes(
    cur: dbapi.Cursor, client: Any, table: Table, calls: Any, name: str, limit: int, unit: str
):
    width = len(unit.encode())
    fits = {"pk": "a", "sk": "b", name: unit * (limit // width)}
    over = {**fits, name: fits[name] + "x"}
    with pytest.raises(dbapi.DataError, match=f"is {limit + 1} bytes .* at most {limit} bytes"):
        table.insert(cur, over)
    assert dict(calls) == {}
    with pytest.raises(ClientError, match="primary key values must be under"):
        client.put_item(TableName=table.name, Item={k: {"S": v} for k, v in over.items()})
    table.insert(cur, fits)
    assert table.item(cur, fits["pk"], fits["sk"]) == fits


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = {"k": value} if level % 2 else [value]
    return value


def nested_attribute(levels: int) -> dict[str, Any]:
    """The same as an AttributeValue, built without the driver (which refuses it)."""
    value: dict[str, Any] = {"S": "leaf"}
    for level in range(levels):
        value = {"M": {"k": value}} if level % 2 else {"L": [value]}
    return value


def test_nesting(cur: dbapi.Cursor, client: Any, table: Table, calls: Any) -> None:
    """DynamoDB stores 32 levels, the attribute counting as the first: 31 maps and lists inside
    it. PutItem refuses a 32nd; PartiQL's INSERT takes it, but the item then refuses every
    UPDATE. The driver refuses it on every write."""
    insert = table.insert_sql(["pk", "sk", "d"])
    update = f'UPDATE {table.ref} SET "e" = ? WHERE "pk" = ? AND "sk" = ?'
    too_deep, deepest = dbapi_value(nested_attribute(32)), dbapi_value(nested_attribute(31))
    for statement, parameters in [(insert, ["a", "1", too_deep]), (update, [too_deep, "a", "1"])]:
        with pytest.raises(dbapi.DataError, match="nested more than 32 levels deep"):
            cur.execute(statement, parameters)
    assert dict(calls) == {}
    item = {"pk": {"S": "a"}, "sk": {"S": "2"}}
    with pytest.raises(ClientError, match="Nesting Levels have exceeded supported limits"):
        client.put_item(TableName=table.name, Item={**item, "d": nested_attribute(32)})
    client.execute_statement(Statement=insert, Parameters=[*item.values(), nested_attribute(32)])
    with pytest.raises(ClientError, match="Nesting Levels have exceeded supported limits"):
        client.execute_statement(Statement=update, Parameters=[{"S": "x"}, *item.values()])
    cur.execute(insert, ["a", "1", deepest])
    cur.execute(update, [deepest, "a", "1"])
    assert table.item(cur, "a", "1")["e"] == nested(31)


def dbapi_value(attribute: dict[str, Any]) -> Any:
    """An AttributeValue as the Python value the driver takes (``nested`` for a nested one)."""
    ((kind, inner),) = attribute.items()
    if kind == "S":
        return inner
    return {k: dbapi_value(v) for k, v in inner.items()} if kind == "M" else [dbapi_value(v) for v in inner]


@pytest.mark.parametrize("name", [":a", "#a", ":"])
def test_names_dynamodb_stores_but_cannot_read(
    cur: dbapi.Cursor, client: Any, table: Table, calls: Any, name: str
):
    with pytest.raises(dbapi.DataError, match=f"starts with '{name[0]}'"):
        table.insert(cur, {"pk": "a", "sk": "1", name: "v"})
    assert dict(calls) == {}
    client.put_item(TableName=table.name, Item={"pk": {"S": "a"}, "sk": {"S": "1"}, name: {"S": "v"}})
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", name: "v"}  # SELECT * reads it
    with pytest.raises(
        dbapi.ProgrammingError, match="An expression attribute name used in the document path"
    ):
        cur.execute(f'SELECT {quote(name)} FROM {table.ref} WHERE "pk" = ? AND "sk" = ?', ["a", "1"])
    table.insert(cur, {"pk": "a", "sk": "2", "m": {name: "v"}, "a:b#c": "v"})  # elsewhere, fine
    cur.execute(f'SELECT "a:b#c", "m" FROM {table.ref} WHERE "pk" = ? AND "sk" = ?', ["a", "2"])
    assert cur.fetchall() == [("v", {name: "v"})]
