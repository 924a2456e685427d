"""DDL: the control-plane requests CREATE/DROP compile to, what they build on DynamoDB Local, and
the errors for schemas DynamoDB cannot hold (raised before anything is sent)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    create_engine,
    inspect,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, CompileError, ProgrammingError
from sqlalchemy.schema import CreateTable

from sa_dynamo import NumberSet, StringSet


def ddl(construct: Any, engine: Engine) -> str:
    return str(construct.compile(dialect=engine.dialect))


def call(operation: str, request: dict[str, Any]) -> str:
    """How one control-plane call is rendered: its name, then its request as compact JSON."""
    return f"{operation} {json.dumps(request, ensure_ascii=False)}"


def keys(hash_name: str, range_name: str | None = None) -> list[dict[str, str]]:
    schema = [{"AttributeName": hash_name, "KeyType": "HASH"}]
    if range_name is not None:
        schema.append({"AttributeName": range_name, "KeyType": "RANGE"})
    return schema


def attributes(**types: str) -> list[dict[str, str]]:
    return [{"AttributeName": name, "AttributeType": code} for name, code in types.items()]


def orders(metadata: MetaData, name: str) -> Table:
    """Every table option at once: GSI with INCLUDE, LSI, TTL, provisioned billing."""
    return Table(
        name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", Integer, primary_key=True),
        Column("gsi1pk", String),
        Column("gsi1sk", LargeBinary),
        Column("created", DateTime),
        Column("expires", Integer),
        Column("note", String),
        Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="INCLUDE", dynamodb_include=["note"]),
        Index("by_created", "pk", "created", dynamodb_local=True, dynamodb_projection="KEYS_ONLY"),
        dynamodb_billing_mode="PROVISIONED",
        dynamodb_read_capacity=5,
        dynamodb_write_capacity=3,
        dynamodb_ttl="expires",
    )


def orders_request(name: str) -> dict[str, Any]:
    capacity = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 3}
    return {
        "TableName": name,
        "KeySchema": keys("pk", "sk"),
        "AttributeDefinitions": attributes(pk="S", sk="N", created="S", gsi1pk="S", gsi1sk="B"),
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": capacity,
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "gsi1",
                "KeySchema": keys("gsi1pk", "gsi1sk"),
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]},
                "ProvisionedThroughput": capacity,
            }
        ],
        "LocalSecondaryIndexes": [
            {
                "IndexName": "by_created",
                "KeySchema": keys("pk", "created"),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    }


def live_request(raw, name: str) -> dict[str, Any]:
    """DescribeTable in CreateTable's shape (attribute definitions sorted), to compare a live table
    with the request that made it."""
    table = raw.describe_table(TableName=name)["Table"]
    billing = table.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")

    def throughput(entry: dict[str, Any]) -> dict[str, Any]:
        if billing != "PROVISIONED":
            return {}
        provisioned = entry["ProvisionedThroughput"]
        return {
            "ProvisionedThroughput": {k: provisioned[k] for k in ("ReadCapacityUnits", "WriteCapacityUnits")}
        }

    request = {
        "TableName": name,
        "KeySchema": table["KeySchema"],
        "AttributeDefinitions": sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"]),
        "BillingMode": billing,
        **throughput(table),
    }
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        if kind in table:
            request[kind] = [
                {
                    "IndexName": index["IndexName"],
                    "KeySchema": index["KeySchema"],
                    "Projection": index["Projection"],
                    **(throughput(index) if kind == "GlobalSecondaryIndexes" else {}),
                }
                for index in sorted(table[kind], key=lambda i: i["IndexName"])
            ]
    return request


def sorted_attributes(request: dict[str, Any]) -> dict[str, Any]:
    return {
        **request,
        "AttributeDefinitions": sorted(request["AttributeDefinitions"], key=lambda a: a["AttributeName"]),
    }


def live_index_names(raw, name: str) -> list[str]:
    table = raw.describe_table(TableName=name)["Table"]
    indexes = table.get("GlobalSecondaryIndexes", []) + table.get("LocalSecondaryIndexes", [])
    return sorted(index["IndexName"] for index in indexes)


def test_create_table_request_with_gsi_lsi_ttl_and_provisioned_billing(engine, metadata, table_name):
    """The TTL is a second call (UpdateTimeToLive) once the table is ACTIVE; echo shows both."""
    ttl = {"TableName": table_name, "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "expires"}}
    assert ddl(CreateTable(orders(metadata, table_name)), engine) == "\n".join(
        [call("CreateTable", orders_request(table_name)), call("UpdateTimeToLive", ttl)]
    )


def test_live_table_is_what_the_request_asked_for(engine, metadata, raw, table_name):
    orders(metadata, table_name)
    metadata.create_all(engine)
    assert live_request(raw, table_name) == sorted_attributes(orders_request(table_name))
    assert raw.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED",
        "AttributeName": "expires",
    }


def test_create_all_and_drop_all_with_checkfirst(engine, metadata, raw, sent, table_name):
    """create_all makes the indexes inside CreateTable, so the CreateIndex that SQLAlchemy sends
    next is a comment; with checkfirst, a second create_all or drop_all sends nothing."""
    orders(metadata, table_name)
    created = ddl(CreateTable(metadata.tables[table_name]), engine)
    metadata.create_all(engine)
    metadata.create_all(engine)
    assert sent[0] == created
    assert sorted(sent[1:]) == [
        f"-- index by_created was created with table {table_name}",
        f"-- index gsi1 was created with table {table_name}",
    ]
    assert inspect(engine).has_table(table_name)
    sent.clear()
    metadata.drop_all(engine)
    metadata.drop_all(engine)
    assert sent == [call("DeleteTable", {"TableName": table_name})]
    assert table_name not in raw.list_tables()["TableNames"]


def test_echo_logs_each_ddl_call(endpoint_url, metadata, table_name, caplog):
    """``dynamodb+local://`` reuses the session's server (the fixture exports its endpoint)."""
    Table(table_name, metadata, Column("pk", String, primary_key=True), dynamodb_ttl="expires")
    echoing = create_engine("dynamodb+local://", echo=True)
    try:
        with caplog.at_level(logging.INFO, logger="sqlalchemy.engine"):
            metadata.create_all(echoing)
            metadata.drop_all(echoing)
    finally:
        echoing.dispose()
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("sqlalchemy.engine")]
    spec = {"Enabled": True, "AttributeName": "expires"}
    create = {
        "TableName": table_name,
        "KeySchema": keys("pk"),
        "AttributeDefinitions": attributes(pk="S"),
        "BillingMode": "PAY_PER_REQUEST",
    }
    rendered = [
        call("CreateTable", create)
        + "\n"
        + call("UpdateTimeToLive", {"TableName": table_name, "TimeToLiveSpecification": spec}),
        call("DeleteTable", {"TableName": table_name}),
    ]
    assert [message for message in logged if message in rendered] == rendered


def test_dynamodb_key_overrides_declaration_order(engine, metadata, table_name):
    """Attribute names are JSON-escaped as needed and otherwise shown as written."""
    table = Table(
        table_name,
        metadata,
        Column('it\'s "sk"', String, primary_key=True, dynamodb_key="range"),
        Column("ключ", Integer, primary_key=True),
    )
    expected = {
        "TableName": table_name,
        "KeySchema": keys("ключ", 'it\'s "sk"'),
        "AttributeDefinitions": attributes(**{"ключ": "N", 'it\'s "sk"': "S"}),
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert ddl(CreateTable(table), engine) == call("CreateTable", expected)


def test_provisioned_table_without_capacities_gives_its_indexes_one_unit(engine, metadata, raw, table_name):
    """DynamoDB refuses a provisioned table whose GSI has no ProvisionedThroughput."""
    Table(
        table_name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("g", String),
        Index("by_g", "g"),
        dynamodb_billing_mode="provisioned",
    )
    one = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    expected = {
        "TableName": table_name,
        "KeySchema": keys("pk"),
        "AttributeDefinitions": attributes(g="S", pk="S"),
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": one,
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "by_g",
                "KeySchema": keys("g"),
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": one,
            }
        ],
    }
    metadata.create_all(engine)
    assert live_request(raw, table_name) == expected


BAD_KEYS = {
    "three key columns": (
        [Column(n, String, primary_key=True) for n in "abc"],
        "table {t!r} has 3 primary-key columns (a, b, c); a DynamoDB key is a partition key plus at most one sort key",
    ),
    "boolean partition key": (
        [Column("pk", Boolean, primary_key=True)],
        "table {t!r}: key column 'pk' has type Boolean(), which a DynamoDB key cannot hold; a key attribute "
        "is a string, number or binary (String, Integer, Numeric, Float, LargeBinary, DateTime, Date, Time, "
        "Uuid, Enum)",
    ),
    "JSON sort key": (
        [Column("pk", String, primary_key=True), Column("doc", JSON, primary_key=True)],
        "table {t!r}: key column 'doc' has type JSON(), which a DynamoDB key cannot hold;",
    ),
    "string set key": (
        [Column("tags", StringSet, primary_key=True)],
        "table {t!r}: key column 'tags' has type StringSet(), which a DynamoDB key cannot hold;",
    ),
    "number set index key": (
        [Column("pk", String, primary_key=True), Column("ns", NumberSet), Index("by_ns", "ns")],
        "index 'by_ns': key column 'ns' has type NumberSet(), which a DynamoDB key cannot hold;",
    ),
    "two range keys": (
        [
            Column("a", String, primary_key=True, dynamodb_key="range"),
            Column("b", String, primary_key=True, dynamodb_key="range"),
        ],
        "table {t!r} marks both key columns dynamodb_key='range'; one must be 'hash' and the other 'range'",
    ),
    "dynamodb_key off the primary key": (
        [Column("pk", String, primary_key=True), Column("sk", String, dynamodb_key="range")],
        "column 'sk' of table {t!r} has dynamodb_key but is not part of the primary key: add primary_key=True",
    ),
}


@pytest.mark.parametrize(("columns", "message"), BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_keys_dynamodb_cannot_hold_fail_at_create(engine, metadata, raw, table_name, columns, message):
    Table(table_name, metadata, *columns)
    with pytest.raises(ArgumentError) as raised:
        metadata.create_all(engine)
    assert str(raised.value).startswith(message.format(t=table_name))
    assert table_name not in raw.list_tables()["TableNames"]


def pk() -> Column:
    return Column("pk", String, primary_key=True)


BAD_OPTIONS = {
    "unknown billing mode": (
        [pk()],
        {"dynamodb_billing_mode": "ON_DEMAND"},
        "table {t!r}: dynamodb_billing_mode must be one of PAY_PER_REQUEST, PROVISIONED, not 'ON_DEMAND'",
    ),
    "capacity with PAY_PER_REQUEST": (
        [pk()],
        {"dynamodb_billing_mode": "PAY_PER_REQUEST", "dynamodb_write_capacity": 5},
        "table {t!r} bills PAY_PER_REQUEST, which takes no capacities: drop dynamodb_read_capacity/"
        "dynamodb_write_capacity or use dynamodb_billing_mode='PROVISIONED'",
    ),
    "three index columns": (
        [pk(), Column("a", String), Column("b", String), Column("c", String), Index("by_abc", "a", "b", "c")],
        {},
        "index 'by_abc' must name one or two columns (partition key, then optional sort key)",
    ),
    "unknown projection": (
        [pk(), Column("g", String), Index("by_g", "g", dynamodb_projection="SOME")],
        {},
        "index 'by_g': dynamodb_projection must be one of ALL, KEYS_ONLY, INCLUDE",
    ),
    "INCLUDE without attributes": (
        [pk(), Column("g", String), Index("by_g", "g", dynamodb_projection="INCLUDE")],
        {},
        "index 'by_g': INCLUDE projection needs dynamodb_include=[attribute names]",
    ),
    "attributes without INCLUDE": (
        [pk(), Column("g", String), Index("by_g", "g", dynamodb_include=["x"])],
        {},
        "index 'by_g': dynamodb_include needs dynamodb_projection='INCLUDE' (the projection is ALL)",
    ),
    "local index on another partition key": (
        [
            pk(),
            Column("sk", String, primary_key=True),
            Column("g", String),
            Index("lsi", "g", "sk", dynamodb_local=True),
        ],
        {},
        "local index 'lsi' must be (pk, <sort attribute>): an LSI shares the table's partition key",
    ),
    "local index without a table sort key": (
        [pk(), Column("l", String), Index("lsi", "pk", "l", dynamodb_local=True)],
        {},
        "local index 'lsi': table {t!r} has no sort key, and DynamoDB allows local indexes only on tables "
        "with one; use a global index",
    ),
    "TTL on a DateTime": (
        [pk(), Column("expires", DateTime)],
        {"dynamodb_ttl": "expires"},
        "table {t!r}: the dynamodb_ttl column 'expires' has type DateTime(), but DynamoDB expires items only "
        "by a number of epoch seconds: declare it Integer",
    ),
    "server default": (
        [pk(), Column("n", Integer, server_default="0")],
        {},
        "column {t}.n has a server-side default (server_default, Computed or Identity); DynamoDB computes "
        "no values: use default= (applied by SQLAlchemy) instead",
    ),
    "check constraint": (
        [pk(), Column("n", Integer), CheckConstraint("n > 0")],
        {},
        "table {t!r} has a check constraint; DynamoDB enforces none: drop it (or check the values in the "
        "application, e.g. with a @validates method)",
    ),
    "schema": ([pk()], {"schema": "other"}, "table {t!r}: DynamoDB has no schemas; drop schema="),
}


@pytest.mark.parametrize(("items", "options", "message"), BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_options_dynamodb_cannot_honour_are_compile_errors(engine, table_name, items, options, message):
    table = Table(table_name, MetaData(), *items, **options)
    with pytest.raises(CompileError) as raised:
        ddl(CreateTable(table), engine)
    assert str(raised.value) == message.format(t=table_name)


def test_standalone_gsi_is_added_and_dropped_with_update_table(engine, metadata, raw, sent, table_name):
    table = Table(table_name, metadata, pk(), Column("sk", Integer, primary_key=True), Column("g", String))
    metadata.create_all(engine)
    gsi = Index("by_g", table.c.g, table.c.sk, dynamodb_projection="KEYS_ONLY")
    sent.clear()
    gsi.create(engine)
    gsi.create(engine, checkfirst=True)
    create = {
        "TableName": table_name,
        "AttributeDefinitions": attributes(g="S", sk="N"),
        "GlobalSecondaryIndexUpdates": [
            {
                "Create": {
                    "IndexName": "by_g",
                    "KeySchema": keys("g", "sk"),
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            }
        ],
    }
    assert sent == [call("UpdateTable", create)]
    described = raw.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"]
    assert [(i["IndexName"], i["IndexStatus"], i["Projection"]) for i in described] == [
        ("by_g", "ACTIVE", {"ProjectionType": "KEYS_ONLY"})
    ]
    sent.clear()
    gsi.drop(engine)
    drop = {"TableName": table_name, "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "by_g"}}]}
    assert sent == [call("UpdateTable", drop)]
    assert live_index_names(raw, table_name) == []


def test_local_index_is_neither_added_nor_dropped_alone(engine, metadata, raw, table_name):
    table = Table(table_name, metadata, pk(), Column("sk", String, primary_key=True), Column("l", String))
    metadata.create_all(engine)
    lsi = Index("by_l", table.c.pk, table.c.l, dynamodb_local=True)
    with pytest.raises(ProgrammingError) as added:
        lsi.create(engine)
    assert str(added.value.orig) == (
        f"local index by_l can only be created with table {table_name}: recreate the table to add it"
    )
    with pytest.raises(CompileError) as dropped:
        lsi.drop(engine)
    assert str(dropped.value) == (
        f"local index 'by_l' lives as long as table {table_name!r}: DynamoDB cannot drop it alone; "
        "recreate the table without it"
    )
    assert live_index_names(raw, table_name) == []


def test_index_recreated_after_a_lone_create_table_statement(engine, metadata, raw, table_name):
    table = Table(table_name, metadata, pk(), Column("g", String), Index("by_g", "g"))
    (gsi,) = table.indexes
    with engine.begin() as conn:
        conn.execute(CreateTable(table))
        gsi.drop(conn)
        gsi.create(conn)
    assert live_index_names(raw, table_name) == ["by_g"]
