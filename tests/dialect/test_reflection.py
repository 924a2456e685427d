"""Reflection against DynamoDB Local: what the inspector reports for tables create_all made,
ListTables paging, and the non-key attributes found in a sample of the items."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pandas
import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    event,
    inspect,
    select,
    text,
)
from sqlalchemy.exc import ArgumentError, NoSuchTableError
from sqlalchemy.schema import CreateTable
from sqlalchemy.types import NullType
from support.sent import observed

from sa_dynamo import BinarySet, NumberSet, StringSet
from sa_dynamo.dbapi import control_plane
from sa_dynamo.dbapi.own_tables import is_own_table


def indexed(metadata: MetaData, name: str) -> Table:
    """Keys of all three attribute types, a GSI with INCLUDE and a KEYS_ONLY LSI."""
    return Table(
        name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", Integer, primary_key=True),
        Column("gsi1pk", LargeBinary),
        Column("gsi1sk", String),
        Column("rank", Numeric),
        Column("note", String),
        Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="INCLUDE", dynamodb_include=["note"]),
        Index("by_rank", "pk", "rank", dynamodb_local=True, dynamodb_projection="KEYS_ONLY"),
    )


def test_inspector_after_create_all(engine, metadata, table_name):
    """Only key attributes have types DynamoDB knows: table keys first, then index keys."""
    indexed(metadata, table_name)
    metadata.create_all(engine)
    inspector = inspect(engine)
    columns = [(c["name"], type(c["type"]), c["nullable"]) for c in inspector.get_columns(table_name)]
    assert columns == [
        ("pk", String, False),
        ("sk", Numeric, False),
        ("rank", Numeric, True),
        ("gsi1pk", LargeBinary, True),
        ("gsi1sk", String, True),
    ]
    assert inspector.get_pk_constraint(table_name) == {"constrained_columns": ["pk", "sk"], "name": None}
    assert sorted(inspector.get_indexes(table_name), key=lambda i: i["name"]) == [
        {
            "name": "by_rank",
            "column_names": ["pk", "rank"],
            "unique": False,
            "dialect_options": {"dynamodb_projection": "KEYS_ONLY", "dynamodb_local": True},
        },
        {
            "name": "gsi1",
            "column_names": ["gsi1pk", "gsi1sk"],
            "unique": False,
            "dialect_options": {
                "dynamodb_projection": "INCLUDE",
                "dynamodb_local": False,
                "dynamodb_include": ["note"],
            },
        },
    ]


def test_reflected_table_compiles_to_the_request_that_created_it(engine, metadata, table_name):
    """Keys, attribute types and index options survive reflection (via metadata.reflect, which
    also proves get_table_names lists the table)."""
    original = indexed(metadata, table_name)
    metadata.create_all(engine)
    reflected = MetaData()
    reflected.reflect(engine, only=[table_name])
    table = reflected.tables[table_name]
    assert str(CreateTable(table).compile(engine)) == str(CreateTable(original).compile(engine))


@pytest.mark.parametrize(
    ("options", "reflected"),
    [
        ({}, {"dynamodb_billing_mode": "PAY_PER_REQUEST"}),
        (
            {"dynamodb_read_capacity": 3, "dynamodb_write_capacity": 4, "dynamodb_ttl": "expires"},
            {
                "dynamodb_billing_mode": "PROVISIONED",
                "dynamodb_read_capacity": 3,
                "dynamodb_write_capacity": 4,
                "dynamodb_ttl": "expires",
            },
        ),
    ],
)
def test_billing_and_ttl_are_reflected(engine, metadata, table_name, options, reflected):
    original = Table(
        table_name, metadata, Column("pk", String, primary_key=True), Column("expires", Integer), **options
    )
    metadata.create_all(engine)
    assert inspect(engine).get_table_options(table_name) == reflected
    again = Table(table_name, MetaData(), autoload_with=engine)
    assert str(CreateTable(again).compile(engine)) == str(CreateTable(original).compile(engine))


def test_has_table_and_a_missing_table(engine, metadata, table_name):
    Table(table_name, metadata, Column("pk", String, primary_key=True))
    inspector = inspect(engine)
    assert inspector.has_table(table_name) is False
    with pytest.raises(NoSuchTableError, match=table_name):
        inspector.get_columns(table_name)
    metadata.create_all(engine)
    assert inspect(engine).has_table(table_name) is True


def test_dynamodb_local_url_reflects_the_session_server(endpoint_url, engine, metadata, table_name):
    """The fixture exports the session server's endpoint, so ``dynamodb+local://`` sees its tables."""
    Table(table_name, metadata, Column("pk", String, primary_key=True))
    metadata.create_all(engine)
    local = create_engine("dynamodb+local://")
    try:
        assert table_name in inspect(local).get_table_names()
    finally:
        local.dispose()


def test_table_names_follow_list_tables_paging(engine, metadata, new_table_name):
    """With one name per page, each request starts after the last name of the page before."""
    names = sorted(new_table_name() for _ in range(3))
    for name in names:
        Table(name, metadata, Column("pk", String, primary_key=True))
    metadata.create_all(engine)
    with engine.connect() as conn:
        dbapi_connection = conn.connection.dbapi_connection
        with observed(dbapi_connection, lambda operation, body, answer: (dict(body), answer)) as sent:
            paged = control_plane.list_tables(dbapi_connection.transport, page_size=1)
        assert paged == control_plane.list_tables(dbapi_connection.transport)
        assert inspect(conn).get_table_names() == paged
    assert set(names) <= set(paged)
    requests = [request for request, _ in sent]
    assert requests[0] == {"Limit": 1}
    # Each request starts after the page before; the last full page may still carry
    # LastEvaluatedTableName, costing one empty request. (sa_dynamo's own tables are listed, then left out.)
    answers = [answer for _, answer in sent]
    assert "LastEvaluatedTableName" not in answers[-1]
    starts = [answer["LastEvaluatedTableName"] for answer in answers[:-1]]
    assert [r["ExclusiveStartTableName"] for r in requests[1:]] == starts
    assert [name for answer in answers for name in answer["TableNames"] if not is_own_table(name)] == paged
    assert all(r["Limit"] == 1 for r in requests)


# -- non-key attributes, from a sample of the items ------------------------------------------


@pytest.fixture
def scans(engine):
    """The Scan requests the engine's connections send from now on."""
    requests: list[dict[str, Any]] = []

    def record(operation: str, body: dict[str, Any], answer: Any) -> None:
        if operation == "Scan":
            requests.append(dict(body))

    def watch(dbapi_connection: Any, connection_record: Any) -> None:
        dbapi_connection.transport.observers.append(record)

    engine.pool.dispose()  # connections made from now on are watched
    event.listen(engine, "connect", watch)
    yield requests
    event.remove(engine, "connect", watch)
    engine.pool.dispose()


def _put(raw, table: str, *items: dict[str, Any]) -> None:
    for item in items:
        raw.put_item(TableName=table, Item=item)


def test_non_key_attributes_are_reflected_from_a_sample_with_their_types(engine, raw, metadata, table_name):
    Table(
        table_name, metadata, Column("pk", String, primary_key=True), Column("sk", Integer, primary_key=True)
    )
    metadata.create_all(engine)
    _put(
        raw,
        table_name,
        {
            "pk": {"S": "A"},
            "sk": {"N": "1"},
            "note": {"S": "hi"},
            "total": {"N": "2.5"},
            "blob": {"B": b"\x00"},
            "paid": {"BOOL": True},
            "doc": {"M": {"k": {"S": "v"}}},
            "tags": {"SS": ["x"]},
            "sizes": {"NS": ["1"]},
            "codes": {"BS": [b"k"]},
            "mixed": {"N": "1"},
            "empty": {"NULL": True},
        },
        {"pk": {"S": "A"}, "sk": {"N": "2"}, "doc": {"L": [{"N": "1"}]}, "mixed": {"S": "one"}},
    )
    reflected = Table(table_name, MetaData(), autoload_with=engine)
    assert [(c.name, type(c.type), c.nullable) for c in reflected.columns] == [
        ("pk", String, False),
        ("sk", Numeric, False),
        ("blob", LargeBinary, True),
        ("codes", BinarySet, True),
        ("doc", JSON, True),
        ("empty", NullType, True),
        ("mixed", NullType, True),  # a number in one item, a string in the other
        ("note", String, True),
        ("paid", Boolean, True),
        ("sizes", NumberSet, True),
        ("tags", StringSet, True),
        ("total", Numeric, True),
    ]
    with engine.connect() as conn:
        rows = conn.execute(select(reflected).where(reflected.c.pk == "A")).all()
    assert [tuple(row) for row in rows] == [
        ("A", 1, b"\x00", {b"k"}, {"k": "v"}, None, 1, "hi", True, {1}, {"x"}, Decimal("2.5")),
        ("A", 2, None, None, [1], None, "one", None, None, None, None, None),
    ]
    frame = pandas.read_sql_table(table_name, engine.execution_options(dynamodb_scan="allow"))
    assert list(frame.columns) == [c.name for c in reflected.columns]
    assert frame["note"][0] == "hi" and pandas.isna(frame["note"][1])
    assert frame["total"][0] == 2.5


def test_the_sample_is_one_scan_of_n_items(engine, raw, metadata, table_name, scans):
    """Items of one partition come in sort-key order: the attribute of the third is not in a
    sample of two, nor read."""
    Table(
        table_name, metadata, Column("pk", String, primary_key=True), Column("sk", Integer, primary_key=True)
    )
    metadata.create_all(engine)
    _put(
        raw,
        table_name,
        {"pk": {"S": "A"}, "sk": {"N": "1"}, "first": {"S": "x"}},
        {"pk": {"S": "A"}, "sk": {"N": "2"}, "second": {"S": "x"}},
        {"pk": {"S": "A"}, "sk": {"N": "3"}, "third": {"S": "x"}},
    )
    two = Table(table_name, MetaData(), autoload_with=engine, dynamodb_reflect_sample=2)
    assert [c.name for c in two.columns] == ["pk", "sk", "first", "second"]
    # it asks for its consumed capacity like every other read
    assert scans == [{"TableName": table_name, "Limit": 2, "ReturnConsumedCapacity": "INDEXES"}]
    assert [c.name for c in Table(table_name, MetaData(), autoload_with=engine).columns] == [
        "pk",
        "sk",
        "first",
        "second",
        "third",
    ]
    assert scans[1] == {"TableName": table_name, "Limit": 100, "ReturnConsumedCapacity": "INDEXES"}


def test_a_sample_of_zero_reads_no_item(endpoint_url, engine, raw, metadata, table_name, scans):
    Table(table_name, metadata, Column("pk", String, primary_key=True))
    metadata.create_all(engine)
    _put(raw, table_name, {"pk": {"S": "A"}, "note": {"S": "x"}})
    assert [
        c.name for c in Table(table_name, MetaData(), autoload_with=engine, dynamodb_reflect_sample=0).columns
    ] == ["pk"]
    keys_only = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_reflect_sample=0)
    try:
        assert [c["name"] for c in inspect(keys_only).get_columns(table_name)] == ["pk"]
        # the Table's own option wins over the engine's
        one = Table(table_name, MetaData(), autoload_with=keys_only, dynamodb_reflect_sample=1)
        assert [c.name for c in one.columns] == ["pk", "note"]
    finally:
        keys_only.dispose()
    assert len(scans) == 0  # keys_only's connections are not watched; engine's sent none


def test_sql_text_reads_the_key_schema_only(engine, raw, metadata, table_name, scans):
    """Every text() statement reflects its table: that must never cost a Scan."""
    Table(table_name, metadata, Column("pk", String, primary_key=True))
    metadata.create_all(engine)
    _put(raw, table_name, {"pk": {"S": "A"}, "note": {"S": "x"}})
    with engine.connect() as conn:
        assert conn.execute(text(f"SELECT note FROM {table_name} WHERE pk = 'A'")).all() == [("x",)]
        assert conn.exec_driver_sql(f"SELECT pk FROM {table_name} WHERE pk = ?", ("A",)).all() == [("A",)]
    assert scans == []


@pytest.mark.parametrize("size", [-1, "100", 2.5, True])
def test_the_sample_size_is_a_whole_number(endpoint_url, engine, metadata, table_name, size):
    message = r"dynamodb_reflect_sample is the number of items reflection reads .* not "
    with pytest.raises(ArgumentError, match=message):
        create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_reflect_sample=size)
    Table(table_name, metadata, Column("pk", String, primary_key=True))
    metadata.create_all(engine)
    with pytest.raises(ArgumentError, match=message):
        Table(table_name, MetaData(), autoload_with=engine, dynamodb_reflect_sample=size)
