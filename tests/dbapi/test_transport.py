"""The transports behave alike where it shows: what they retry and how often, the x-amz-crc32
check, the errors DynamoDB's refusals become, the botocore options they honour and refuse, and
how a connection chooses one. Requests pass the fault proxy, which counts what it receives."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import boto3
import botocore.retries.standard
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from support.faultproxy import FaultProxy

from sa_dynamo import dbapi
from sa_dynamo.dbapi.transport import LOST_ANSWERS, TRANSPORTS
from sa_dynamo.dbapi.transport.botocore import BotocoreTransport
from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS, LOCAL_REGION
from sa_dynamo.dbapi.transport.http import HTTPTransport

from .support import Table

pytestmark = pytest.mark.parametrize("transport", TRANSPORTS)


def through(proxy: FaultProxy, transport: str, **options: Any) -> dbapi.Connection:
    return dbapi.connect(endpoint_url=proxy.endpoint_url, transport=transport, autocommit=True, **options)


def attempts(total: int, mode: str = "legacy") -> dict[str, Any]:
    return {"client_config": {"retries": {"mode": mode, "total_max_attempts": total}}}


def test_throttled_requests_are_sent_again_as_botocore_does(proxy: FaultProxy, transport: str) -> None:
    """botocore's default (legacy) rules for DynamoDB: up to 10 attempts, 50 ms, 100 ms, ... apart."""
    proxy.script("ListTables", "throttle", "throttle", "throttle")
    assert "TableNames" in through(proxy, transport).transport.send("ListTables", {"Limit": 1})
    assert proxy.counts.requests["ListTables"] == 4


@pytest.mark.parametrize("mode", ["legacy", "standard"])
@pytest.mark.parametrize("fault", ["throttle", "server_error", "reset_before", "bad_checksum"])
def test_a_failing_request_is_sent_as_often_as_botocore_s_own_client_sends_it(
    proxy: FaultProxy, transport: str, mode: str, fault: str
) -> None:
    """Not a copied table: boto3's client, with the same retry options through the same faults,
    is the measure of how often each transport sends. (Whether the request then fails is not
    compared: in standard mode botocore's client returns the last answer that failed its
    checksum, where the driver's HTTP transport raises.)"""
    retries = {"mode": mode, "total_max_attempts": 3}
    proxy.script("ListTables", *[fault] * 3)
    boto3_client = boto3.client(
        "dynamodb",
        endpoint_url=proxy.endpoint_url,
        region_name=LOCAL_REGION,
        config=Config(retries=retries),
        **LOCAL_CREDENTIALS,
    )
    with contextlib.suppress(ClientError, BotoCoreError):
        boto3_client.list_tables(Limit=1)
    sent_by_boto3 = proxy.counts.requests["ListTables"]
    proxy.script("ListTables", *[fault] * 3)
    connection = through(proxy, transport, client_config={"retries": retries})
    with contextlib.suppress(dbapi.OperationalError):
        connection.transport.send("ListTables", {"Limit": 1})
    assert proxy.counts.requests["ListTables"] - sent_by_boto3 == sent_by_boto3 == 3


def test_botocore_s_next_retry_rules_are_followed_as_they_come(
    proxy: FaultProxy, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """botocore's coming rules (AWS_NEW_RETRIES_2026) give DynamoDB 4 attempts in standard mode
    where today's give 3: the driver follows whichever rules its botocore has."""
    monkeypatch.setattr(botocore.retries.standard, "NEW_RETRIES_ENABLED", True)
    proxy.script("ListTables", *["server_error"] * 5)
    connection = through(proxy, transport, client_config={"retries": {"mode": "standard"}})
    with pytest.raises(dbapi.OperationalError, match="InternalServerError"):
        connection.transport.send("ListTables", {"Limit": 1})
    assert proxy.counts.requests["ListTables"] == 4


def test_attempts_run_out_with_dynamodb_s_error(proxy: FaultProxy, transport: str) -> None:
    proxy.script("ListTables", "throttle", "throttle", "throttle")
    connection = through(proxy, transport, **attempts(3))
    with pytest.raises(dbapi.OperationalError, match=r"^ThrottlingException: Rate of requests") as raised:
        connection.transport.send("ListTables", {"Limit": 1})
    assert proxy.counts.requests["ListTables"] == 3
    response = raised.value.response
    assert response["Error"] == {
        "Code": "ThrottlingException",
        "Message": "Rate of requests exceeds the allowed throughput.",
    }
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert re.fullmatch(r"[0-9a-f]{32}", response["ResponseMetadata"]["RequestId"])  # the proxy's uuid4().hex
    assert response["ResponseMetadata"]["RetryAttempts"] == 2


@pytest.mark.parametrize("mode", ["legacy", "standard"])
def test_an_answer_that_fails_its_checksum_is_asked_for_again(
    proxy: FaultProxy, table: Table, transport: str, mode: str
) -> None:
    connection = through(proxy, transport, **attempts(3, mode))
    cursor = connection.cursor()
    table.insert(cursor, {"pk": "a", "sk": "1", "v": "x"})
    proxy.script("ExecuteStatement", "bad_checksum")
    assert table.item(cursor, "a", "1") == {"pk": "a", "sk": "1", "v": "x"}
    assert proxy.counts.faults["bad_checksum", "ExecuteStatement"] == 1
    assert proxy.counts.requests["ExecuteStatement"] == 3  # the INSERT, the read twice


def test_an_answer_that_never_passes_its_checksum_is_an_error(
    proxy: FaultProxy, table: Table, transport: str
) -> None:
    cursor = through(proxy, transport, **attempts(2)).cursor()
    proxy.script("ExecuteStatement", "bad_checksum", "bad_checksum")
    with pytest.raises(dbapi.OperationalError, match="crc32"):
        cursor.execute(f'SELECT * FROM {table.ref} WHERE "pk" = ? AND "sk" = ?', ["a", "1"])
    assert proxy.counts.requests["ExecuteStatement"] == 2


@pytest.mark.parametrize("mode", ["legacy", "standard"])
def test_an_answer_cut_short_is_lost_and_never_taken_for_whole(
    proxy: FaultProxy, table: Table, transport: str, mode: str
) -> None:
    """Half an answer, then a clean close: a page (its x-amz-crc32 fails too) and an error
    (DynamoDB Local sends none with it) are asked for again, and are errors if no whole answer
    comes, never an empty page or an error's JSON cut in two."""
    cursor = through(proxy, transport, **attempts(2, mode)).cursor()
    table.insert(cursor, {"pk": "a", "sk": "1", "v": "x"})
    proxy.script("ExecuteStatement", "cut_short")
    assert table.item(cursor, "a", "1") == {"pk": "a", "sk": "1", "v": "x"}
    proxy.script("ExecuteStatement", "cut_short", "cut_short")
    with pytest.raises(dbapi.OperationalError, match=r"Connection was closed before we received|crc32"):
        table.item(cursor, "a", "1")
    proxy.script("ExecuteStatement", "cut_short")  # a duplicate key's answer, cut and asked again
    with pytest.raises(dbapi.IntegrityError, match="the stored item differs from this row"):
        table.insert(cursor, {"pk": "a", "sk": "1", "v": "y"})
    proxy.script("ExecuteStatement", "cut_short", "cut_short")
    with pytest.raises(
        dbapi.OperationalError, match=r"^connection to DynamoDB failed: Connection was closed"
    ):
        table.insert(cursor, {"pk": "a", "sk": "1", "v": "y"})
    assert table.item(cursor, "a", "1") == {"pk": "a", "sk": "1", "v": "x"}


def test_an_answer_says_how_many_attempts_before_it_lost_theirs(proxy: FaultProxy, transport: str) -> None:
    """A reset or a 500 may hide a request that was applied; a throttle was a refusal."""
    proxy.script("ListTables", "reset_after", "throttle", "server_error")
    answer = through(proxy, transport, **attempts(4)).transport.send("ListTables", {"Limit": 1})
    assert answer["ResponseMetadata"]["RetryAttempts"] == 3
    assert answer["ResponseMetadata"][LOST_ANSWERS] == 2


def test_a_cancelled_transaction_carries_its_reasons(endpoint_url: str, table: Table, transport: str) -> None:
    connection = dbapi.connect(endpoint_url=endpoint_url, transport=transport)
    cursor = connection.cursor()
    table.insert(cursor, {"pk": "a", "sk": "1"})
    connection.commit()
    table.insert(cursor, {"pk": "b", "sk": "1"})
    table.insert(cursor, {"pk": "a", "sk": "1"})
    with pytest.raises(dbapi.IntegrityError) as raised:
        connection.commit()
    assert raised.value.code == "TransactionCanceledException"
    first, second = raised.value.response["CancellationReasons"]  # botocore's modeled error fields
    assert first == {"Code": "None"}
    assert "duplicate primary key" in second["Message"].lower()
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_a_connection_chooses_its_transport(
    endpoint_url: str, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    kinds = {"http": HTTPTransport, "botocore": BotocoreTransport}
    other = next(name for name in TRANSPORTS if name != transport)
    monkeypatch.setenv("SA_DYNAMO_TRANSPORT", transport)
    assert type(dbapi.connect(endpoint_url=endpoint_url).transport) is kinds[transport]
    assert type(dbapi.connect(endpoint_url=endpoint_url, transport=other).transport) is kinds[other]
    monkeypatch.setenv("SA_DYNAMO_TRANSPORT", "urllib3")
    with pytest.raises(
        dbapi.InterfaceError, match="SA_DYNAMO_TRANSPORT must be one of http, botocore, not 'urllib3'"
    ):
        dbapi.connect(endpoint_url=endpoint_url)


@pytest.mark.parametrize(("option", "value"), [("tcp_keepalive", True), ("retries", {"mode": "adaptive"})])
def test_what_only_botocore_honours_is_refused_by_the_http_transport(
    proxy: FaultProxy, transport: str, option: str, value: Any
) -> None:
    """Refused at connect, with the advice to use botocore's client, not silently ignored."""
    options = {"client_config": {option: value}}
    if transport == "botocore":
        through(proxy, transport, **options).transport.send("ListTables", {"Limit": 1})
        return
    with pytest.raises(dbapi.NotSupportedError, match=r"transport.botocore"):
        through(proxy, transport, **options)
    assert proxy.received == []
