"""The botocore options the driver sets on the clients it builds (``dbapi.lean_client_config``):
no parameter validation (the driver checks what it sends itself), a User-Agent built once, and
a user's ``client_config`` winning over both. Neither they nor the bodies the driver encodes
itself on such a client (wire.py) may change one byte that goes to DynamoDB: the same
statements are sent through a validating client, whose bodies botocore serializes, and through
the driver's, and their request bodies compared."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError, ParamValidationError
from support.sent import requests_sent

from sa_dynamo import dbapi


def test_the_driver_s_clients_skip_botocore_s_parameter_validation(endpoint_url: str) -> None:
    """An out-of-range Limit reaches DynamoDB, which refuses it, instead of botocore refusing it."""
    lean = dbapi.connect(endpoint_url=endpoint_url).client
    with pytest.raises(ClientError, match="greater than or equal to 1"):
        lean.list_tables(Limit=0)
    assert lean.meta.config.user_agent.startswith("Boto3/")  # boto3's own string, built once


def test_a_user_s_client_config_wins(endpoint_url: str) -> None:
    client = dbapi.connect(
        endpoint_url=endpoint_url, client_config={"parameter_validation": True, "user_agent": "mine/1"}
    ).client
    with pytest.raises(ParamValidationError):
        client.list_tables(Limit=0)
    assert client.meta.config.user_agent.startswith("mine/1")
    assert "sa-dynamo/" not in client.meta.config.user_agent


def bodies_sent(connection: dbapi.Connection, work: Any) -> list[tuple[str, bytes]]:
    """(operation, body) of every request ``work(connection)`` makes, as they go out."""
    with requests_sent(connection.client) as sent:
        work(connection)
    return sent


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
def test_requests_are_the_same_bytes_with_and_without_validation(
    endpoint_url: str, table: Any, autocommit: bool
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

    validating = dbapi.connect(
        endpoint_url=endpoint_url, autocommit=autocommit, client_config={"parameter_validation": True}
    )
    lean = dbapi.connect(endpoint_url=endpoint_url, autocommit=autocommit)
    assert validating.client.meta.config.parameter_validation is True
    with_validation = bodies_sent(validating, work)
    without = bodies_sent(lean, work)
    # A commit's ClientRequestToken is fresh each time: the rest of its body must match.
    assert [_without_token(target, body) for target, body in without] == [
        _without_token(target, body) for target, body in with_validation
    ]
    assert {target for target, _ in without} >= (
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
    """On a client connect() made without validation the driver encodes a statement's body
    itself (wire.py): botocore's serializer and a ``before-parameter-build`` hook see a stand-in
    with its lists empty. A validating client gets the request itself."""
    select = f'SELECT * FROM "{table.name}" WHERE "pk" = ? AND "sk" = ?'
    seen = []

    def before_serializing(params: dict, **_: Any) -> None:
        seen.append(params)

    for connection in (
        dbapi.connect(endpoint_url=endpoint_url),
        dbapi.connect(endpoint_url=endpoint_url, client_config={"parameter_validation": True}),
    ):
        events = connection.client.meta.events
        events.register("before-parameter-build.dynamodb.ExecuteStatement", before_serializing)
        connection.cursor().execute(select, ("k", "s")).fetchall()
    assert seen == [
        {"Statement": select, "Parameters": [], "ReturnConsumedCapacity": "TOTAL"},
        {"Statement": select, "Parameters": [{"S": "k"}, {"S": "s"}], "ReturnConsumedCapacity": "TOTAL"},
    ]
