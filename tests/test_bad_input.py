"""Bad input on every write path is refused before the first request, and nothing is stored.

Each case writes a row DynamoDB (or the column's declared type) would refuse, alone or among
good rows: one AUTOCOMMIT statement, an AUTOCOMMIT executemany (the bad row 17th of 30, as a
batch would have written the 16 before it), a transaction's statements, a transaction's
executemany, a chunked commit of 150 rows, an upsert, SQL text through text() and
exec_driver_sql. Each asserts the exception's type and words, that the engine's clients sent
no request (a botocore event handler counts them; SQL text may read the table's description,
DescribeTable, to learn its key schema) and that a raw boto3 scan finds the table as it was.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    bindparam,
    create_engine,
    event,
    insert,
    text,
    update,
)
from sqlalchemy.exc import DataError, IntegrityError, StatementError

import sa_dynamo

AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}
DESCRIPTION_READS = {"DescribeTable", "DescribeTimeToLive"}


def nested(levels: int, kind: type = dict) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value} if kind is dict else [value]
    return value


# name: (the bad row's values, exception class, words of the message, also through SQL text)
BAD_INPUT: dict[str, tuple[dict[str, Any], type, str, bool]] = {
    "empty partition key": ({"pk": ""}, DataError, "key attribute 'pk' of table .* is empty", True),
    "empty sort key": ({"sk": ""}, DataError, "key attribute 'sk' of table .* is empty", True),
    "no sort key": ({"sk": None}, DataError, "has no 'sk': every item needs its key attributes", True),
    "partition key of 2,049 bytes": ({"pk": "x" * 2049}, DataError, "2049 bytes .* at most 2048", True),
    "partition key of 2,050 UTF-8 bytes": ({"pk": "é" * 1025}, DataError, "2050 bytes .* at most 2048", True),
    "sort key of 1,025 bytes": (
        {"sk": "x" * 1025},
        DataError,
        "1025 bytes .* at most 1024 bytes in a sort",
        True,
    ),
    "empty index key": ({"gpk": ""}, DataError, "key attribute 'gpk' of index 'by_g' .* is empty", True),
    "index key of 2,049 bytes": ({"gpk": "x" * 2049}, DataError, "'gpk' of index 'by_g' .* 2049 bytes", True),
    "index sort key of 1,025 bytes": ({"gsk": "x" * 1025}, DataError, "'gsk' of index 'by_g' .* 1025", True),
    "number in a string key": (
        {"pk": 123},
        DataError,
        "'pk' .* is String, which takes a string; got a number",
        True,
    ),
    "number in a string index key": ({"gpk": 5}, DataError, "'gpk' .* takes a string; got a number", True),
    "item over 400 KB": ({"name": "x" * 410_000}, DataError, "over DynamoDB's 400 KB item limit", True),
    "item over 400 KB in parts": (
        {"doc": {f"part{i}": "x" * 90_000 for i in range(5)}},
        DataError,
        "over DynamoDB's 400 KB item limit .*largest attribute: 'doc'",
        True,
    ),
    "map 33 levels deep": ({"doc": nested(32)}, DataError, "nested more than 32 levels deep", True),
    "list 33 levels deep": ({"doc": nested(32, list)}, DataError, "nested more than 32 levels deep", True),
    "map nested 2,000 deep": ({"doc": nested(2000)}, DataError, "nested more than 32 levels deep", True),
    "39 significant digits": (
        {"amount": Decimal("1" * 39)},
        DataError,
        "more than 38 significant digits",
        True,
    ),
    "number over 9.9E+125": ({"amount": Decimal("1E+126")}, DataError, "outside DynamoDB's range", True),
    "number under 1E-130": ({"amount": Decimal("1E-131")}, DataError, "outside DynamoDB's range", True),
    "NaN": ({"amount": float("nan")}, DataError, "cannot store NaN", True),
    "infinity in a document": ({"doc": {"x": [math.inf]}}, DataError, "cannot store Infinity", True),
    "empty key in a document": ({"doc": {"": 1}}, DataError, "empty attribute name", True),
    "empty set": ({"doc": set()}, DataError, "empty set", True),
    # what decoding bytes that are not UTF-8 with errors="surrogateescape" leaves
    "lone surrogate in a string": ({"name": "ok\udcff"}, DataError, "lone surrogate at character 2", True),
    "lone surrogate in a key": ({"pk": "\udcff"}, DataError, "lone surrogate at character 0", True),
    "lone surrogate in a document's key": ({"doc": {"k\udcff": 1}}, DataError, "lone surrogate", True),
    "lone surrogate in a set": ({"doc": {"a", "b\ud800"}}, DataError, "lone surrogate", True),
    "Numeric(10, 2) given 1e20": (
        {"price": 1e20},
        DataError,
        "numeric field overflow: column 'price'",
        False,
    ),
    "Numeric(10, 2) rounding past 10^8": (
        {"price": Decimal("99999999.995")},
        DataError,
        "numeric field overflow",
        False,
    ),
    "String given a number": (
        {"name": 123},
        DataError,
        "column 'name' .* takes a string; got a number",
        False,
    ),
    "String given bytes": ({"name": b"raw"}, DataError, "column 'name' .* takes a string; got binary", False),
    "String given a list": ({"name": ["a"]}, DataError, "column 'name' .* got a list", False),
    "String given a dict": ({"name": {"a": 1}}, DataError, "column 'name' .* got a map", False),
    "Numeric given text": (
        {"amount": "abc"},
        DataError,
        "column 'amount' .* takes a number; got a string",
        False,
    ),
    "Float given text": (
        {"ratio": "1.5"},
        DataError,
        "column 'ratio' .* is Float, which takes a number; got a string",
        False,
    ),
    "JSON given a set": ({"doc": {"a", "b"}}, DataError, "column 'doc' .* got a string set", False),
    "Integer given a fraction": (
        {"n": 1.5},
        DataError,
        "column 'n' of table .* is Integer, which takes whole numbers; got 1.5: use Numeric",
        False,
    ),
    "Integer given text": ({"n": "12"}, DataError, "column 'n' .* is Integer, which takes a number", False),
    "Boolean given text": (
        {"flag": "yes"},
        DataError,
        "column 'flag' .* is Boolean, which takes a boolean",
        False,
    ),
    "Boolean given 2": ({"flag": 2}, DataError, "column 'flag' .* takes a boolean; got a number", False),
    "attribute named ':a'": (
        {":a": "v"},
        DataError,
        "starts with ':': DynamoDB stores such an attribute",
        False,
    ),
    "attribute named '#b'": ({"#b": "v"}, DataError, "starts with '#'", False),
    "None in a NOT NULL column": (
        {"label": None},
        IntegrityError,
        "NOT NULL constraint failed: column 'label' of table .* is nullable=False",
        True,
    ),
}

ROWS = 30
BAD_ROW = 17
CHUNKED_ROWS = 150


@pytest.fixture(scope="module")
def things(requests: tuple[Any, list[str]]) -> Iterator[Table]:
    """The table, created by the engine the tests write through: SQL text is checked against
    the Table the engine created (its NOT NULL column too)."""
    table = Table(
        f"bad_{uuid.uuid4().hex[:10]}",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("gpk", String),
        Column("gsk", String),
        Column("name", String),
        Column("n", Integer),
        Column("amount", Numeric),
        Column("price", Numeric(10, 2)),
        Column("ratio", Float),
        Column("flag", Boolean),
        Column("doc", JSON),
        Column(":a", String),
        Column("#b", String),
        Column("label", String, nullable=False),
        Index("by_g", "gpk", "gsk"),
    )
    table.create(requests[0])
    yield table
    table.drop(requests[0])


@pytest.fixture(scope="module")
def requests(endpoint_url: str) -> Iterator[tuple[Any, list[str]]]:
    """An engine (chunked commits allowed) and the names of the requests its clients send."""
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_chunked_commit=True)
    sent: list[str] = []

    def count(operation: str, body: Any, answer: Any) -> None:
        sent.append(operation)

    @event.listens_for(engine, "connect")
    def watch(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.transport.observers.append(count)

    yield engine, sent
    engine.dispose()


def scan(raw: Any, table: Table) -> list[dict[str, Any]]:
    return sorted(raw.scan(TableName=table.name, ConsistentRead=True)["Items"], key=repr)


@pytest.fixture
def emptied(raw: Any, things: Table) -> Iterator[None]:
    """The table is empty before the test and emptied after it, so that a failure (a row
    written after all) does not spill into the next case."""
    assert scan(raw, things) == []
    yield
    for item in raw.scan(TableName=things.name)["Items"]:
        raw.delete_item(TableName=things.name, Key={"pk": item["pk"], "sk": item["sk"]})


def rows(count: int, bad: dict[str, Any], at: int) -> list[dict[str, Any]]:
    """``count`` good rows with the bad values in row ``at``; every row has the same keys."""
    good = [
        {"pk": "p", "sk": f"{i:03}", "gpk": "g", "gsk": f"{i:03}", "name": f"row {i}", "label": "l"}
        for i in range(count)
    ]
    for row in good:
        row.update({name: None for name in bad if name not in row})
    good[at].update(bad)
    return good


def autocommit_single(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(table), rows(1, bad, 0))


def autocommit_executemany(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(table), rows(ROWS, bad, BAD_ROW))


def transaction_statements(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    with engine.begin() as conn:
        for row in rows(BAD_ROW + 1, bad, BAD_ROW):
            conn.execute(insert(table), row)


def transaction_executemany(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    with engine.begin() as conn:
        conn.execute(insert(table), rows(ROWS, bad, BAD_ROW))


def chunked_commit(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    with engine.begin() as conn:
        conn.execute(insert(table), rows(CHUNKED_ROWS, bad, CHUNKED_ROWS - 1))


def upsert(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(sa_dynamo.upsert(table), rows(ROWS, bad, BAD_ROW))


def _sql(table: Table, names: list[str], marker: Callable[[str], str]) -> str:
    return f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join(map(marker, names))})"


def text_statement(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    (row,) = rows(1, bad, 0)
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(text(_sql(table, list(row), lambda n: f":{n}")), row)


def text_executemany(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    many = rows(ROWS, bad, BAD_ROW)
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(text(_sql(table, list(many[0]), lambda n: f":{n}")), many)


def driver_sql_executemany(engine: Any, table: Table, bad: dict[str, Any]) -> None:
    many = rows(ROWS, bad, BAD_ROW)
    with engine.begin() as conn:
        conn.exec_driver_sql(_sql(table, list(many[0]), lambda n: "?"), [tuple(r.values()) for r in many])


PATHS = [autocommit_single, autocommit_executemany, transaction_statements, transaction_executemany]
PATHS += [chunked_commit, upsert]
TEXT_PATHS = [text_statement, text_executemany, driver_sql_executemany]
# An executemany's error names the row, as the caller numbers them.
ROW_NAMED = {
    path: f"row {BAD_ROW} of {ROWS}: " for path in [autocommit_executemany, transaction_executemany, upsert]
}
ROW_NAMED |= {
    text_executemany: f"row {BAD_ROW} of {ROWS}: ",
    driver_sql_executemany: f"row {BAD_ROW} of {ROWS}: ",
}
ROW_NAMED[chunked_commit] = f"row {CHUNKED_ROWS - 1} of {CHUNKED_ROWS}: "
CASES = [
    pytest.param(path, name, id=f"{path.__name__}-{name}")
    for name, (*_, through_text) in BAD_INPUT.items()
    for path in PATHS + (TEXT_PATHS if through_text else [])
]


@pytest.mark.parametrize(("path", "name"), CASES)
def test_bad_input_is_refused_before_anything_is_sent(requests, raw, things, emptied, path, name) -> None:
    engine, sent = requests
    bad, cls, words, _ = BAD_INPUT[name]
    sent.clear()
    with pytest.raises(StatementError) as raised:
        path(engine, things, bad)
    assert type(raised.value) is cls
    assert re.search(words, str(raised.value.orig)), raised.value.orig
    assert str(raised.value) and repr(raised.value)  # printable, however deep the value
    if path in ROW_NAMED:
        assert str(raised.value.orig).startswith(ROW_NAMED[path]), raised.value.orig
    assert [name for name in sent if name not in DESCRIPTION_READS] == []
    assert scan(raw, things) == []


def test_the_request_counter_sees_what_is_sent(requests, raw, things, emptied) -> None:
    engine, sent = requests
    sent.clear()
    upsert(engine, things, {})
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(things), [dict(row, pk="other") for row in rows(ROWS, {}, 0)])
    assert "BatchWriteItem" in sent and "BatchExecuteStatement" in sent
    assert len(scan(raw, things)) == 2 * ROWS


# -- updates of stored items -------------------------------------------------------------------

BAD_UPDATES: dict[str, tuple[dict[str, Any], str]] = {
    "String given a number": ({"name": 7}, "column 'name' .* takes a string"),
    "set over 400 KB": ({"name": "x" * 410_000}, "at least its key and the values it sets"),
    "set 33 levels deep": ({"doc": nested(32)}, "nested more than 32 levels deep"),
    "empty index key": ({"gpk": ""}, "'gpk' of index 'by_g' .* is empty"),
    "39 significant digits": ({"amount": Decimal("1" * 39)}, "more than 38 significant digits"),
    "Numeric(10, 2) overflow": ({"price": Decimal("123456789")}, "numeric field overflow"),
    "Integer given a fraction": ({"n": Decimal("2.5")}, "column 'n' .* takes whole numbers; got 2.5"),
    "Boolean given text": ({"flag": "no"}, "column 'flag' .* takes a boolean; got a string"),
    "attribute named ':a'": ({":a": "v"}, "starts with ':'"),
    "None in a NOT NULL column": ({"label": None}, "NOT NULL constraint failed: column 'label'"),
}


def update_one(conn: Any, table: Table, values: dict[str, Any]) -> None:
    conn.execute(update(table).where(table.c.pk == "u", table.c.sk == "000").values(values))


def update_many(conn: Any, table: Table, values: dict[str, Any]) -> None:
    """Five rows, the bad values in the fourth; the others set good values (or none: None)."""
    names = {f"v{i}": name for i, name in enumerate(values)}
    statement = update(table).where(table.c.pk == "u", table.c.sk == bindparam("key"))
    statement = statement.values({name: bindparam(param) for param, name in names.items()})
    many = [{"key": f"{i:03}", **dict.fromkeys(names)} for i in range(5)]
    many[3].update({param: values[name] for param, name in names.items()})
    conn.execute(statement, many)


@pytest.mark.parametrize("isolation", ["AUTOCOMMIT", "SERIALIZABLE"])
@pytest.mark.parametrize("write", [update_one, update_many])
@pytest.mark.parametrize(("values", "words"), BAD_UPDATES.values(), ids=BAD_UPDATES.keys())
def test_bad_updates_are_refused_before_anything_is_sent(
    requests, raw, things, emptied, isolation, write, values, words
) -> None:
    engine, sent = requests
    for i in range(5):
        raw.put_item(TableName=things.name, Item={"pk": {"S": "u"}, "sk": {"S": f"{i:03}"}, "n": {"N": "1"}})
    before = scan(raw, things)
    sent.clear()
    with (
        pytest.raises((DataError, IntegrityError), match=words),
        engine.connect().execution_options(isolation_level=isolation) as conn,
    ):
        write(conn, things, values)
        conn.commit()
    assert [name for name in sent if name not in DESCRIPTION_READS] == []
    assert scan(raw, things) == before
