"""The botocore options the driver sets on the requests it sends (``lean_client_config``): no
parameter validation (the driver checks what it sends itself), a User-Agent built once, and a
user's ``client_config`` winning over both. Neither they, nor the bodies the driver encodes itself
(wire.py), nor the transport may change one byte that goes to DynamoDB: the same statements are
sent through a validating botocore client, whose bodies botocore serializes, through the
driver's lean botocore client and through the driver's own HTTP transport, and the request bodies
that reach DynamoDB (through the fault proxy, which records them) are compared."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from support.faultproxy import FaultProxy

from sa_dynamo import dbapi
from sa_dynamo.dbapi.transport import TRANSPORTS


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_driver_s_requests_skip_botocore_s_parameter_validation(
    endpoint_url: str, transport: str
) -> None:
    """An out-of-range Limit reaches DynamoDB, which refuses it, instead of botocore refusing it."""
    connection = dbapi.connect(endpoint_url=endpoint_url, transport=transport)
    with pytest.raises(dbapi.ProgrammingError, match=r"ValidationException: .*greater than or equal to 1"):
        connection.transport.send("ListTables", {"Limit": 0})


def test_the_driver_s_botocore_client_is_lean(endpoint_url: str) -> None:
    transport = dbapi.connect(endpoint_url=endpoint_url, transport="botocore").transport
    assert transport.encode_bodies  # it validates no parameters, so the driver encodes bodies
    assert transport.client.meta.config.user_agent.startswith("Boto3/")  # boto3's own string, built once


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_user_s_client_config_wins(proxy: FaultProxy, transport: str) -> None:
    connection = dbapi.connect(
        endpoint_url=proxy.endpoint_url,
        transport=transport,
        client_config={"parameter_validation": True, "user_agent": "mine/1"},
    )
    with pytest.raises(dbapi.ProgrammingError, match="Parameter validation failed"):
        connection.transport.send("ListTables", {"Limit": 0})
    assert proxy.received == []
    connection.transport.send("ListTables", {"Limit": 1})
    ((_, headers, _),) = proxy.received
    assert headers["User-Agent"].startswith("mine/1")
    assert "sa-dynamo/" not in headers["User-Agent"]


def bodies_received(proxy: FaultProxy, connection: dbapi.Connection, work: Any) -> list[tuple[str, bytes]]:
    """(operation, body) of every request ``work(connection)`` makes, as the proxy received them."""
    before = len(proxy.received)
    work(connection)
    return [(operation, body) for operation, _, body in proxy.received[before:]]


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
def test_requests_are_the_same_bytes_on_every_transport_with_and_without_validation(
    proxy: FaultProxy, table: Any, autocommit: bool
) -> None:
    row = (
        "k",
        "s",
        Decimal("1.5"),
        b"\x00\xff",
        {"m": [1, "x \u00fc\U0001f600", None, True, b"\x01"]},
        {"a", "b"},
    )

    def work(connection: dbapi.Connection) -> None:
        cur = connection.cursor()
        insert = f"INSERT INTO \"{table.name}\" VALUE {{'pk': ?, 'sk': ?, 'n': ?, 'b': ?, 'm': ?, 'ss': ?}}"
        cur.execute(insert, row)
        cur.executemany(insert, [(f"k{i}", "s", Decimal(i), b"x", {}, {"c"}) for i in range(30)])
        connection.commit()
        if autocommit:  # PUT writes at once, outside transactions
            put = f"PUT INTO \"{table.name}\" VALUE {{'pk': ?, 'sk': ?, 'b': ?}}"
            cur.executemany(put, [(f"p{i}", "s", b"\x01") for i in range(30)])
        cur.execute(f'UPDATE "{table.name}" SET "n" = ? WHERE "pk" = ? AND "sk" = ?', (Decimal(2), "k1", "s"))
        cur.execute(f'SELECT * FROM "{table.name}" WHERE "pk" = ? AND "sk" = ?', ("k", "s"))
        assert cur.fetchall()
        connection.commit()
        cur.execute(f'DELETE FROM "{table.name}" WHERE "pk" = ? AND "sk" = ?', ("k", "s"))
        cur.executemany(
            f'DELETE FROM "{table.name}" WHERE "pk" = ? AND "sk" = ?', [(f"k{i}", "s") for i in range(30)]
        )
        connection.commit()

    sent = {}
    for name, options in {
        "botocore, validating": {"transport": "botocore", "client_config": {"parameter_validation": True}},
        "botocore": {"transport": "botocore"},
        "http": {"transport": "http"},
    }.items():
        connection = dbapi.connect(endpoint_url=proxy.endpoint_url, autocommit=autocommit, **options)
        # A commit's ClientRequestToken is fresh each time: the rest of its body must match.
        sent[name] = [_without_token(*request) for request in bodies_received(proxy, connection, work)]
        connection.close()
    assert sent["botocore"] == sent["botocore, validating"]
    assert sent["http"] == sent["botocore, validating"]
    assert {target for target, _ in sent["http"]} >= (
        {"ExecuteStatement", "BatchExecuteStatement", "BatchWriteItem"}
        if autocommit
        else {"ExecuteTransaction", "BatchGetItem"}
    )


def _without_token(target: str, body: bytes) -> tuple[str, bytes]:
    if target == "ExecuteTransaction":
        data = json.loads(body)
        assert len(data.pop("ClientRequestToken")) == 32
        return target, json.dumps(data).encode()
    return target, body


def test_botocore_serializes_a_stand_in_on_the_driver_s_client(endpoint_url: str, table: Any) -> None:
    """On a botocore client connect() made without validation the driver encodes a statement's body
    itself (wire.py): botocore's serializer and a ``before-parameter-build`` hook see a stand-in
    with its lists empty. A validating client gets the request itself."""
    select = f'SELECT * FROM "{table.name}" WHERE "pk" = ? AND "sk" = ?'
    seen = []

    def before_serializing(params: dict, **_: Any) -> None:
        seen.append(params)

    for connection in (
        dbapi.connect(endpoint_url=endpoint_url, transport="botocore"),
        dbapi.connect(
            endpoint_url=endpoint_url, transport="botocore", client_config={"parameter_validation": True}
        ),
    ):
        events = connection.client.meta.events
        events.register("before-parameter-build.dynamodb.ExecuteStatement", before_serializing)
        connection.cursor().execute(select, ("k", "s")).fetchall()
    assert seen == [
        {"Statement": select, "Parameters": [], "ReturnConsumedCapacity": "INDEXES"},
        {"Statement": select, "Parameters": [{"S": "k"}, {"S": "s"}], "ReturnConsumedCapacity": "INDEXES"},
    ]
