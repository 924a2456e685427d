"""Reflection against DynamoDB Local: what the inspector reports for tables create_all made, and
ListTables paging."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    inspect,
)
from sqlalchemy.exc import NoSuchTableError
from sqlalchemy.schema import CreateTable

from sa_dynamo.dbapi import control_plane


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
    requests: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **kwargs: Any) -> None:
        requests.append(dict(params))

    with engine.connect() as conn:
        dbapi_connection = conn.connection.dbapi_connection
        events = dbapi_connection.client.meta.events
        events.register("provide-client-params.dynamodb.ListTables", record)
        try:
            paged = control_plane.list_tables(dbapi_connection, page_size=1)
        finally:
            events.unregister("provide-client-params.dynamodb.ListTables", record)
        assert paged == control_plane.list_tables(dbapi_connection) == inspect(conn).get_table_names()
    assert set(names) <= set(paged)
    assert requests[0] == {"Limit": 1}
    # The last full page may still carry LastEvaluatedTableName, costing one empty request.
    assert len(requests) in (len(paged), len(paged) + 1)
    assert [r["ExclusiveStartTableName"] for r in requests[1:]] == paged[: len(requests) - 1]
    assert all(r["Limit"] == 1 for r in requests)
