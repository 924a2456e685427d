"""The fault proxy itself: it answers as DynamoDB does, resets for real, repeats its faults for a
seed, counts what it did, and stops by itself."""

from __future__ import annotations

import errno
import http.client
import threading
import time
from collections import Counter
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError
from support.faultproxy import FaultProxy, Faults, ProxyLimitReached

from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS


def client(proxy: FaultProxy) -> Any:
    """A boto3 client through the proxy that never retries: each call is one request."""
    config = Config(retries={"mode": "standard", "max_attempts": 0})
    return boto3.client(
        "dynamodb",
        endpoint_url=proxy.endpoint_url,
        region_name="us-east-1",
        config=config,
        **LOCAL_CREDENTIALS,
    )


def test_throttling_and_server_errors_read_as_dynamodb_errors(proxy):
    proxy.script("ListTables", "throttle", "server_error")
    answers = []
    for _ in range(2):
        with pytest.raises(ClientError) as raised:
            client(proxy).list_tables()
        answers.append(
            (raised.value.response["ResponseMetadata"]["HTTPStatusCode"], raised.value.response["Error"])
        )
    assert answers == [
        (400, {"Code": "ThrottlingException", "Message": "Rate of requests exceeds the allowed throughput."}),
        (500, {"Code": "InternalServerError", "Message": "Internal server error"}),
    ]
    assert proxy.counts.forwarded == Counter()


def test_a_reset_after_forwarding_reaches_dynamodb_and_one_before_does_not(proxy):
    proxy.script("ListTables", "reset_before", "reset_after")
    for _ in range(2):
        with pytest.raises(ConnectionClosedError):
            client(proxy).list_tables()
    assert proxy.counts.forwarded == Counter({"ListTables": 1})
    assert proxy.counts.faults == Counter(
        {("reset_before", "ListTables"): 1, ("reset_after", "ListTables"): 1}
    )


def test_a_reset_is_an_rst_on_a_kept_alive_connection(proxy):
    """Not a clean close (FIN, which http.client reports as RemoteDisconnected, without errno)."""
    headers = {"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"}
    proxy.script("ListTables", "throttle", "reset_before")
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    try:
        connection.request("POST", "/", b"{}", headers)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 400  # answered, the connection stays open for the next request
        connection.request("POST", "/", b"{}", headers)
        with pytest.raises(ConnectionResetError) as raised:
            connection.getresponse()
        assert raised.value.errno == errno.ECONNRESET
    finally:
        connection.close()


def test_an_answer_cut_short_is_half_of_it_and_a_clean_close(proxy):
    """Forwarded, then half its body sent under the whole Content-Length, and a FIN."""
    headers = {"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"}
    proxy.script("ListTables", "cut_short")
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    try:
        connection.request("POST", "/", b"{}", headers)
        answer = connection.getresponse()
        length = int(answer.getheader("Content-Length"))
        with pytest.raises(http.client.IncompleteRead) as raised:
            answer.read()
        assert len(raised.value.partial) == length // 2
    finally:
        connection.close()
    assert proxy.counts.forwarded == Counter({"ListTables": 1})


def test_the_same_seed_gives_the_same_faults(endpoint_url):
    outcomes = []
    for _ in range(2):
        with FaultProxy(endpoint_url, Faults(throttle=0.4, server_error=0.2), seed=7) as proxy:
            outcomes.append(proxy_outcomes(proxy, 30))
    assert outcomes[0] == outcomes[1]
    assert set(outcomes[0]) == {"ok", "ThrottlingException", "InternalServerError"}


def proxy_outcomes(proxy: FaultProxy, requests: int) -> list[str]:
    tables = client(proxy)
    outcomes = []
    for _ in range(requests):
        try:
            tables.list_tables()
            outcomes.append("ok")
        except ClientError as error:
            outcomes.append(error.response["Error"]["Code"])
    return outcomes


def test_only_the_chosen_operations_are_faulted(proxy):
    proxy.faults = Faults(throttle=1.0, operations=frozenset({"DescribeLimits"}))
    tables = client(proxy)
    tables.list_tables()
    with pytest.raises(ClientError, match="ThrottlingException"):
        tables.describe_limits()
    assert proxy.counts.requests == Counter({"ListTables": 1, "DescribeLimits": 1})


def test_the_request_cap_stops_the_proxy(endpoint_url):
    with (
        pytest.raises(ProxyLimitReached, match="cap of 2 requests"),
        FaultProxy(endpoint_url, max_requests=2) as proxy,
    ):
        tables = client(proxy)
        tables.list_tables()
        tables.list_tables()
        with pytest.raises(ConnectionClosedError):
            tables.list_tables()
    assert_stopped(proxy)


def test_the_time_limit_stops_the_proxy(endpoint_url):
    with (
        pytest.raises(ProxyLimitReached, match="time limit"),
        FaultProxy(endpoint_url, time_limit=0.2) as proxy,
    ):
        deadline = time.monotonic() + 5
        while proxy.stopped_because is None and time.monotonic() < deadline:
            time.sleep(0.05)
    assert_stopped(proxy)


def assert_stopped(proxy: FaultProxy) -> None:
    assert f"fault-proxy:{proxy.port}" not in [thread.name for thread in threading.enumerate()]
    with pytest.raises(EndpointConnectionError):
        client(proxy).list_tables()


@pytest.mark.parametrize(
    "upstream", ["http://localhost:8000", "http://10.0.0.1:8000", "https://127.0.0.1:8000"]
)
def test_only_plain_http_on_127_0_0_1_is_a_target(upstream):
    with pytest.raises(ValueError, match="forwards only to"):
        FaultProxy(upstream)
