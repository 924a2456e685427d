"""Fixtures for the DBAPI tests: one boto3 client on the session's DynamoDB Local, fresh tables,
and a recorder of the API calls the driver makes (botocore event hooks, no mocks)."""

from __future__ import annotations

import copy
import uuid
from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from sa_dynamo import dbapi

from .support import Table


@pytest.fixture(scope="session")
def client(endpoint_url: str) -> Any:
    """One boto3 client for the session: connections wrap it instead of building their own."""
    return dbapi.connect(endpoint_url=endpoint_url).client


@pytest.fixture
def conn(client: Any) -> Iterator[dbapi.Connection]:
    connection = dbapi.connect(client=client, autocommit=True)
    yield connection
    connection.close()


@pytest.fixture
def tx_conn(client: Any) -> Iterator[dbapi.Connection]:
    """A connection that buffers writes until commit()."""
    connection = dbapi.connect(client=client, autocommit=False)
    yield connection
    connection.close()


@pytest.fixture
def cur(conn: dbapi.Connection) -> dbapi.Cursor:
    return conn.cursor()


@pytest.fixture
def table(client: Any, table_name: str) -> Iterator[Table]:
    client.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    yield Table(table_name)
    client.delete_table(TableName=table_name)


DATA_OPERATIONS = ("ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction", "BatchGetItem")


@pytest.fixture
def calls(client: Any) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """The parameters of every PartiQL call (and BatchGetItem) made during the test, by operation name (the
    table fixtures' control-plane calls are not statements and are left out)."""
    recorded: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        recorded[model.name].append(copy.deepcopy(params))

    hook_id = f"dbapi-test-calls-{uuid.uuid4().hex}"
    events = [f"before-parameter-build.dynamodb.{operation}" for operation in DATA_OPERATIONS]
    for event in events:
        client.meta.events.register(event, record, unique_id=f"{hook_id}-{event}")
    yield recorded
    for event in events:
        client.meta.events.unregister(event, unique_id=f"{hook_id}-{event}")


@pytest.fixture
def partition(cur: dbapi.Cursor, table: Table) -> list[tuple[str, Decimal]]:
    """Seven items in partition ``p`` (sk ``000``..``006``, ``n`` = 0..6), as (sk, n) in key order."""
    rows = [("p", f"{i:03}", i) for i in range(7)]
    cur.executemany(table.insert_sql(["pk", "sk", "n"]), rows)
    return [(sk, Decimal(n)) for _, sk, n in rows]


@pytest.fixture
def tx(tx_conn: dbapi.Connection) -> dbapi.Cursor:
    return tx_conn.cursor()
