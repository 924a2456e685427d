"""Fixtures for the DBAPI tests: connections on the session's DynamoDB Local (on the transport
the run tests: SA_DYNAMO_TRANSPORT), fresh tables made behind the driver's back, and a recorder
of the requests the driver's connections send (the transports' observers, no mocks)."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from sa_dynamo import dbapi

from .support import Table


@pytest.fixture(scope="session")
def client(raw: Any) -> Any:
    """A plain boto3 client, to make tables and write behind the driver's back."""
    return raw


@pytest.fixture
def connect(endpoint_url: str) -> Iterator[Callable[..., dbapi.Connection]]:
    """``connect(**options)``: a new driver connection on the session's server, closed afterwards."""
    made: list[dbapi.Connection] = []

    def make(**options: Any) -> dbapi.Connection:
        made.append(dbapi.connect(endpoint_url=endpoint_url, **options))
        return made[-1]

    yield make
    for connection in made:
        connection.close()


@pytest.fixture
def conn(connect: Callable[..., dbapi.Connection]) -> dbapi.Connection:
    return connect(autocommit=True)


@pytest.fixture
def tx_conn(connect: Callable[..., dbapi.Connection]) -> dbapi.Connection:
    """A connection that buffers writes until commit()."""
    return connect(autocommit=False)


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


class Calls(defaultdict):
    """The bodies of every PartiQL request (and BatchGetItem) the watched connections send, by
    operation name (control-plane requests are not statements and are left out)."""

    def __init__(self) -> None:
        super().__init__(list)

    def watch(self, connection: dbapi.Connection) -> None:
        connection.transport.observers.append(self._record)

    def _record(self, operation: str, body: dict[str, Any], answer: Any) -> None:
        if operation in DATA_OPERATIONS:
            self[operation].append(copy.deepcopy(body))


@pytest.fixture
def calls(conn: dbapi.Connection, tx_conn: dbapi.Connection) -> Calls:
    """What ``conn`` and ``tx_conn`` send during the test (``calls.watch(connection)`` adds another)."""
    recorded = Calls()
    recorded.watch(conn)
    recorded.watch(tx_conn)
    return recorded


@pytest.fixture
def partition(cur: dbapi.Cursor, table: Table) -> list[tuple[str, Decimal]]:
    """Seven items in partition ``p`` (sk ``000``..``006``, ``n`` = 0..6), as (sk, n) in key order."""
    rows = [("p", f"{i:03}", i) for i in range(7)]
    cur.executemany(table.insert_sql(["pk", "sk", "n"]), rows)
    return [(sk, Decimal(n)) for _, sk, n in rows]


@pytest.fixture
def tx(tx_conn: dbapi.Connection) -> dbapi.Cursor:
    return tx_conn.cursor()
