"""The HTTP transports' own HTTP/1.1 connections, sync (http_pool.py) and asyncio
(asyncio_pool.py), against loopback servers that answer as scripted: keep-alive, the ways an
answer is framed or fails, proxies and TLS. The whole suite sends through the same pools to
DynamoDB Local, and tests/fault through a proxy that resets connections and loses answers."""

from __future__ import annotations

import asyncio
import base64
import gc
import socket
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import (
    ConnectionClosedError,
    EndpointConnectionError,
    ProxyConnectionError,
    ReadTimeoutError,
    SSLError,
)
from support.scripted_http import CA, LOSE, THEN_CLOSE, answer, connect_proxy, serving

from sa_dynamo import dbapi
from sa_dynamo.dbapi.transport.asyncio_pool import AsyncHTTPPool
from sa_dynamo.dbapi.transport.http11 import Answer
from sa_dynamo.dbapi.transport.http_pool import HTTPPool

# One answer, {"a": 12}, framed each way HTTP allows.
FRAMINGS = [
    b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n5;x=y\r\n: 12}\r\n0\r\nT: 1\r\n\r\n',
    b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{"a": 12}',
    b'HTTP/1.0 200 OK\r\n\r\n{"a": 12}',
]
FRAMING_IDS = ["chunked", "after an interim answer", "ended by the connection"]
HEADERS = {"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"}


class OnALoop:
    """An AsyncHTTPPool driven from a test, on an event loop of its own."""

    def __init__(self, *args: Any, **options: Any) -> None:
        self._pool = AsyncHTTPPool(*args, **options)
        self.loop = asyncio.new_event_loop()

    def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        return self.loop.run_until_complete(self._pool.post(headers, payload))

    def close(self) -> None:
        self._pool.close()
        self.loop.run_until_complete(asyncio.sleep(0))  # the transports' close callbacks


@pytest.fixture(params=["sync", "asyncio"])
def pool(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``pool(url, **options)``: a pool of the parameter's kind, two idle connections at most."""
    loops: list[asyncio.AbstractEventLoop] = []

    def make(url: str, **options: Any) -> Any:
        settings = {"size": 2, "connect_timeout": 5, "read_timeout": 5, **options}
        if request.param == "sync":
            return HTTPPool(url, **settings)
        made = OnALoop(url, **settings)
        loops.append(made.loop)
        return made

    yield make
    for loop in loops:
        loop.run_until_complete(asyncio.sleep(0))  # close callbacks of connections that failed
        loop.close()


def test_requests_share_one_kept_alive_connection(pool: Callable[..., Any]) -> None:
    with serving(answer(200, b'{"a": 1}', "x-amzn-RequestId: r1"), answer(400, b'{"b": 2}')) as served:
        http = pool(served.url)
        first = http.post(HEADERS, b'{"TableName": "t"}')
        second = http.post(HEADERS, b"{}")
        http.close()
    assert first == (
        200,
        {"content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "r1", "content-length": "8"},
        b'{"a": 1}',
    )
    assert second[0] == 400 and second[2] == b'{"b": 2}'
    one, two = served.requests
    assert one.port == two.port
    assert one.line == "POST / HTTP/1.1"
    assert one.headers["host"] == served.url.removeprefix("http://").rstrip("/")
    assert one.headers["x-amz-target"] == "DynamoDB_20120810.ListTables"
    assert one.headers["content-length"] == "18" and one.body == b'{"TableName": "t"}'


def test_a_connection_the_server_closed_while_idle_is_not_sent_on(pool: Callable[..., Any]) -> None:
    with serving(answer(body=b"1"), THEN_CLOSE, answer(body=b"2")) as served:
        http = pool(served.url)
        assert http.post(HEADERS, b"{}")[2] == b"1"
        served.wait_closed(1)
        assert http.post(HEADERS, b"{}")[2] == b"2"
        http.close()
    assert served.requests[0].port != served.requests[1].port


def test_a_pool_nobody_closed_closes_its_idle_connections_when_collected(
    pool: Callable[..., Any],
) -> None:
    with serving(answer(body=b"1")) as served, warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        http = pool(served.url)
        assert http.post(HEADERS, b"{}")[2] == b"1"
        loop = getattr(http, "loop", None)
        del http
        gc.collect()
        if loop is not None:
            loop.run_until_complete(asyncio.sleep(0))  # the transport's close callback
        served.wait_closed(1)
    assert [str(w.message) for w in warned if issubclass(w.category, ResourceWarning)] == []


def test_a_pool_outliving_its_event_loop_is_collected_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    unraisable: list[Any] = []
    monkeypatch.setattr("sys.unraisablehook", unraisable.append)
    with serving(answer(body=b"1")) as served, warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # asyncio's, for the loop closed first
        http = OnALoop(served.url, size=2, connect_timeout=5, read_timeout=5)
        assert http.post(HEADERS, b"{}")[2] == b"1"
        http.loop.close()
        del http
        gc.collect()
    assert [repr(each.exc_value) for each in unraisable] == []


def test_an_answer_that_says_it_closes_its_connection_is_not_kept(pool: Callable[..., Any]) -> None:
    with serving(answer(200, b"1", "Connection: close"), answer(body=b"2")) as served:
        http = pool(served.url)
        assert http.post(HEADERS, b"{}")[2] == b"1"
        assert http.post(HEADERS, b"{}")[2] == b"2"
        http.close()
    assert served.requests[0].port != served.requests[1].port


@pytest.mark.parametrize("raw", FRAMINGS, ids=FRAMING_IDS)
def test_an_answer_is_read_whole_however_it_is_framed(raw: bytes, pool: Callable[..., Any]) -> None:
    script = [raw, THEN_CLOSE] if raw.startswith(b"HTTP/1.0") else [raw]
    with serving(*script, answer(body=b"next")) as served:
        http = pool(served.url)
        status, _, body = http.post(HEADERS, b"{}")
        assert (status, body) == (200, b'{"a": 12}')
        assert http.post(HEADERS, b"{}")[2] == b"next"
        http.close()


@pytest.mark.parametrize("piece", [1, 2, 7])
@pytest.mark.parametrize("raw", FRAMINGS, ids=FRAMING_IDS)
def test_an_answer_arriving_in_pieces_reads_as_one_arriving_whole(raw: bytes, piece: int) -> None:
    whole, in_pieces = Answer(), Answer()
    done = whole.feed(raw)
    for start in range(0, len(raw), piece):
        assert not in_pieces.feed(raw[start : start + piece]) or start + piece >= len(raw)
    if not done:  # read until the connection closes
        whole.end()
        in_pieces.end()
    assert (in_pieces.status, in_pieces.headers, in_pieces.body) == (whole.status, whole.headers, whole.body)
    assert whole.body == b'{"a": 12}'


def test_a_repeated_header_is_read_as_one_joined_by_commas(pool: Callable[..., Any]) -> None:
    with serving(answer(200, b"{}", "Vary: a", "Vary: b")) as served:
        http = pool(served.url)
        assert http.post(HEADERS, b"{}")[1]["vary"] == "a, b"
        http.close()


@pytest.mark.parametrize(
    "raw",
    [
        b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"cut',
        b"HTTP/1.1 200 OK\r\nContent-",
        LOSE,
        b"SSH-2.0\r\n",
    ],
    ids=["body cut short", "headers cut short", "no answer", "not HTTP"],
)
def test_a_connection_lost_mid_answer_is_botocore_s_closed_connection(
    raw: bytes | str, pool: Callable[..., Any]
) -> None:
    script = [raw] if raw == LOSE else [raw, THEN_CLOSE]
    with serving(*script, answer(body=b"after")) as served:
        http = pool(served.url)
        with pytest.raises(ConnectionClosedError, match=f'Connection was closed .* "{served.url}"'):
            http.post(HEADERS, b"{}")
        assert http.post(HEADERS, b"{}")[2] == b"after"  # on a new connection
        http.close()
    assert served.requests[0].port != served.requests[1].port


def test_an_answer_later_than_the_read_timeout_is_a_read_timeout(pool: Callable[..., Any]) -> None:
    with serving() as served:
        http = pool(served.url, read_timeout=0.3)
        with pytest.raises(ReadTimeoutError, match=f'Read timeout on endpoint URL: "{served.url}"'):
            http.post(HEADERS, b"{}")
        http.close()


def test_nothing_listening_is_an_endpoint_connection_error(pool: Callable[..., Any]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]
    http = pool(f"http://127.0.0.1:{port}/")
    with pytest.raises(EndpointConnectionError, match=f"http://127.0.0.1:{port}/"):
        http.post(HEADERS, b"{}")


def test_through_an_http_proxy_an_http_endpoint_is_named_whole(pool: Callable[..., Any]) -> None:
    endpoint = "http://dynamodb.invalid:8000/"
    with serving(answer(body=b"proxied")) as proxy:
        user = proxy.url.replace("http://", "http://me:s%40cret@")
        http = pool(endpoint, proxy=user)
        assert http.post(HEADERS, b"{}")[2] == b"proxied"
        http.close()
    (request,) = proxy.requests
    assert request.line == f"POST {endpoint} HTTP/1.1"
    assert request.headers["host"] == "dynamodb.invalid:8000"
    assert request.headers["proxy-authorization"] == "Basic " + base64.b64encode(b"me:s@cret").decode()


def test_tls_through_a_connect_tunnel(pool: Callable[..., Any]) -> None:
    with serving(answer(body=b"1"), answer(body=b"2"), tls=True) as served, connect_proxy(served) as proxy:
        http = pool(served.url, proxy=proxy, ca_bundle=CA)
        assert http.post(HEADERS, b'{"x": 1}')[2] == b"1"
        assert http.post(HEADERS, b"{}")[2] == b"2"
        http.close()
    (tunnel,) = served.tunnels  # one tunnel, kept alive for both requests
    port = served.url.rsplit(":", 1)[1].rstrip("/")
    assert tunnel.line == f"CONNECT localhost:{port} HTTP/1.1"
    assert tunnel.headers["proxy-authorization"] == "Basic " + base64.b64encode(b"user:pa ss").decode()
    assert [each.line for each in served.requests] == ["POST / HTTP/1.1"] * 2
    assert served.requests[0].body == b'{"x": 1}'


def test_a_certificate_no_trusted_authority_signed_is_an_ssl_error(pool: Callable[..., Any]) -> None:
    with serving(answer(), tls=True) as served:
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED"):
            pool(served.url).post(HEADERS, b"{}")
        http = pool(served.url, ca_bundle=CA)
        assert http.post(HEADERS, b"{}")[0] == 200
        http.close()


def test_a_proxy_that_refuses_the_tunnel_is_a_proxy_error(pool: Callable[..., Any]) -> None:
    with serving(answer(407, b"", "Proxy-Authenticate: Basic")) as proxy:
        http = pool("https://localhost:1/", proxy=proxy.url.replace("http://", "http://me:secret@"))
        with pytest.raises(ProxyConnectionError, match=r"127\.0\.0\.1") as raised:
            http.post(HEADERS, b"{}")
    assert "407" in str(raised.value.kwargs["error"])
    assert "secret" not in str(raised.value)
    assert proxy.requests[0].line == "CONNECT localhost:1 HTTP/1.1"


def test_a_proxy_spoken_to_over_tls_is_botocore_s(pool: Callable[..., Any]) -> None:
    with pytest.raises(dbapi.NotSupportedError, match="transport='botocore'") as raised:
        pool("https://dynamodb.us-east-1.amazonaws.com/", proxy="https://me:secret@proxy.invalid:3128")
    assert "secret" not in str(raised.value)


def test_a_connection_s_proxy_option_sends_its_requests_through_the_proxy() -> None:
    items = b'{"Items": [{"a": {"S": "x"}}]}'
    with serving(answer(200, items)) as proxy:
        connection = dbapi.connect(
            endpoint_url="http://dynamodb.invalid:8000",
            region_name="us-east-1",
            aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="secret",
            client_config={"proxies": {"http": proxy.url}},
            transport="http",
        )
        cursor = connection.cursor()
        cursor.execute('SELECT "a" FROM "t" WHERE "pk" = ?', ["p"])
        rows = cursor.fetchall()
        connection.close()
    assert rows == [("x",)]
    (request,) = proxy.requests
    assert request.line == "POST http://dynamodb.invalid:8000/ HTTP/1.1"
    assert request.headers["x-amz-target"] == "DynamoDB_20120810.ExecuteStatement"
