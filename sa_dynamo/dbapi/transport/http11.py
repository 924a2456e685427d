"""HTTP/1.1 as the driver's HTTP transports speak it, without the I/O: where requests go (an
endpoint, or an http:// proxy in front of it), a request's bytes, an answer read from bytes as
they arrive, and the botocore exception for each way a request fails. The sync connections
(http_pool.py) and the asyncio ones (asyncio_pool.py) differ only in how bytes move.

A DynamoDB request is always a POST of a small JSON body to one URL, and its answer always says
its length, so this does only that: the request written at once, the answer read by its
Content-Length (or its chunks, or until the connection closes, as HTTP allows). Measured against
DynamoDB Local, a signed request cost the client 133 us of CPU, against 460 on urllib3's pool
(docs/performance.md).

A proxy is an ``http://`` one: an ``https`` endpoint is reached through a CONNECT tunnel, an
``http`` one by sending the proxy the whole URL; a user and password in the proxy's URL are sent
as Basic authorization. A proxy spoken to over TLS (``https://``) needs botocore's client.
"""

from __future__ import annotations

import select
import ssl
import weakref
from base64 import b64encode
from collections import deque
from typing import Generic, Protocol, TypeVar
from urllib.parse import unquote, urlsplit

from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ProxyConnectionError,
    ReadTimeoutError,
    SSLError,
)
from botocore.httpsession import mask_proxy_url

from ..errors import NotSupportedError
from . import sigv4

_HEAD_LIMIT = 65536  # the longest head read; DynamoDB's are under 1 KB


class Malformed(Exception):
    """An answer that is not HTTP/1.x, or ends before its length."""


class Answer:
    """One answer, read from the bytes given to ``feed`` (and ``end``, when the connection
    closes) until it is whole: its status, headers (names in lower case, repeated ones joined
    by commas), body, and whether its connection can carry another request. ``head_only``: an
    answer that has no body (a proxy's to CONNECT)."""

    def __init__(self, head_only: bool = False) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.reusable = True
        self._head_only = head_only
        self._buffer = bytearray()
        self._length: int | None = None  # the body's, once the head is read; -1: until closed
        self._chunked = False

    def feed(self, data: bytes) -> bool:
        """Take the next bytes of the answer; True once it is whole."""
        self._buffer += data
        while self._length is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > _HEAD_LIMIT:
                    raise Malformed("the answer's head is too long")
                return False
            self._read_head(bytes(self._buffer[:end]))
            del self._buffer[: end + 4]
        if self._chunked:
            return self._read_chunks()
        if self._length < 0:
            return False
        if len(self._buffer) < self._length:
            return False
        if len(self._buffer) > self._length:
            self.reusable = False  # bytes nobody asked for
        self.body = bytes(self._buffer[: self._length])
        return True

    def end(self) -> None:
        """The connection closed: the answer is whole if its length was "until closed"."""
        if self._length == -1 and not self._chunked:
            self.body, self.reusable = bytes(self._buffer), False
            return
        if self._length is None and not self._buffer and self.status == 0:
            raise Malformed("the server closed the connection without answering")
        raise Malformed("the connection closed before the answer was whole")

    def _read_head(self, head: bytes) -> None:
        status_line, *lines = head.decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        if not version.startswith("HTTP/1.") or not rest[:3].isdigit():
            raise Malformed(f"not an HTTP/1.x status line: {status_line[:40]!r}")
        status = int(rest[:3])
        if status < 200:  # an interim answer: the real one follows
            return
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        connection = headers.get("connection", "").lower()
        self.status, self.headers = status, headers
        self.reusable = connection != "close" and (version != "HTTP/1.0" or connection == "keep-alive")
        if self._head_only:
            self._length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked, self._length = True, -1
        elif "content-length" in headers:
            self._length = int(headers["content-length"])
        else:
            self._length, self.reusable = -1, False

    def _read_chunks(self) -> bool:
        """The chunked body, if all its chunks are here (read again from its start each time:
        DynamoDB's answers are not chunked, a proxy's could be)."""
        buffer, position, chunks = self._buffer, 0, []
        while True:
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                return False
            try:
                size = int(bytes(buffer[position:line_end]).split(b";", 1)[0], 16)
            except ValueError:
                raise Malformed(f"not a chunk's size: {bytes(buffer[position:line_end][:40])!r}") from None
            position = line_end + 2
            if size == 0:
                if buffer[position : position + 2] != b"\r\n" and buffer.find(b"\r\n\r\n", position) < 0:
                    return False  # trailers, not yet all here
                self.body = b"".join(chunks)
                return True
            if len(buffer) < position + size + 2:
                return False
            chunks.append(bytes(buffer[position : position + size]))
            position += size + 2


class Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=Closable)


class Pool(Generic[C]):
    """What the sync and asyncio pools share: at most ``size`` idle connections (``C``) kept
    alive to ``url`` (through ``proxy``); more are opened while more requests are in flight, and
    closed when their answer is read."""

    def __init__(
        self,
        url: str,
        size: int,
        connect_timeout: float | None,
        read_timeout: float | None,
        proxy: str | None = None,
        ca_bundle: str | bool = True,
    ) -> None:
        self.endpoint = Endpoint(url, proxy, ca_bundle)
        self.size = size
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._idle: deque[C] = deque()
        self._closed = False
        # A pool nobody closed (an engine never disposed) still closes its sockets when it is
        # collected or the interpreter exits, rather than leaving them to ResourceWarnings.
        self._finalizer = weakref.finalize(self, _close_all, self._idle)

    def close(self) -> None:
        """Close the idle connections; those in use close when their answer is read."""
        self._closed = True
        self._finalizer()

    def _reuse(self) -> C | None:
        """The most recently used idle connection the server has not closed meanwhile."""
        while self._idle:
            try:
                connection = self._idle.pop()
            except IndexError:  # another thread took the last one
                break
            if self._open(connection):
                return connection
            connection.close()
        return None

    def _open(self, connection: C) -> bool:
        """False when the server has closed an idle connection (or sent something unasked)."""
        raise NotImplementedError

    def _keep(self, connection: C, answer: Answer) -> None:
        """Keep ``connection`` for another request if its answer allows and there is room."""
        if answer.reusable and not self._closed and len(self._idle) < self.size:
            self._idle.append(connection)
        else:
            connection.close()


def _close_all(idle: deque[Closable]) -> None:
    while idle:
        idle.pop().close()


def quiet(sock: object) -> bool:
    """True when nothing has arrived on an idle connection's socket: neither the server's close
    nor bytes nobody asked for (either way the connection is not sent on again)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)  # type: ignore[arg-type]
    return not poller.poll(0)


class Endpoint:
    """Where an HTTP transport's requests go and what never changes between them: the host and
    port to connect to (the proxy's, through an http:// proxy), TLS, the CONNECT tunnel a proxy
    is asked for, and the first lines of every request."""

    def __init__(self, url: str, proxy: str | None, ca_bundle: str | bool) -> None:
        parts = urlsplit(url)
        self.url = url
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self.tls = ssl.create_default_context(cafile=ca_bundle if isinstance(ca_bundle, str) else None)
        self.proxy = Proxy(proxy) if proxy else None
        self.address = (self.proxy.host, self.proxy.port) if self.proxy else (self.host, self.port)
        self.tunnel: bytes | None = None
        target = (parts.path or "/") + (parts.query and "?" + parts.query)
        head = f"Host: {sigv4.host(url)}\r\nAccept-Encoding: identity\r\n"
        if self.proxy and self.tls:
            self.tunnel = self.proxy.connect(self.host, self.port)
        elif self.proxy:
            target = url  # an http endpoint through a proxy: the proxy is told the whole URL
            if self.proxy.authorization:
                head += f"Proxy-Authorization: {self.proxy.authorization}\r\n"
        self._head = f"POST {target} HTTP/1.1\r\n{head}"

    def request(self, headers: dict[str, str], payload: bytes) -> bytes:
        """A POST of ``payload`` with ``headers``, as it is written to the connection."""
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return f"{self._head}{lines}Content-Length: {len(payload)}\r\n\r\n".encode("latin-1") + payload

    def connect_failure(self, exc: Exception) -> Exception:
        """botocore's exception for a connection that could not be opened."""
        if isinstance(exc, ProxyConnectionError):
            return exc
        if isinstance(exc, ssl.SSLError):
            return SSLError(endpoint_url=self.url, error=exc)
        if isinstance(exc, TimeoutError):
            return ConnectTimeoutError(endpoint_url=self.url, error=exc)
        if self.proxy and isinstance(exc, OSError | Malformed):
            return ProxyConnectionError(proxy_url=self.proxy.masked, error=exc)
        return EndpointConnectionError(endpoint_url=self.url, error=exc)

    def request_failure(self, exc: Exception) -> Exception:
        """botocore's exception for a request that failed once its connection was open."""
        if isinstance(exc, TimeoutError):
            return ReadTimeoutError(endpoint_url=self.url, error=exc)
        if isinstance(exc, ssl.SSLError):
            return SSLError(endpoint_url=self.url, error=exc)
        if isinstance(exc, OSError | Malformed):
            return ConnectionClosedError(endpoint_url=self.url, error=exc)
        return HTTPClientError(error=exc)

    def tunnelled(self, answer: Answer) -> None:
        """Check the proxy's answer to CONNECT."""
        if answer.status != 200:
            assert self.proxy is not None
            raise ProxyConnectionError(
                proxy_url=self.proxy.masked, error=f"the proxy answered CONNECT with {answer.status}"
            )


class Proxy:
    """An ``http://`` proxy: where it listens, what it is told of the user, its URL as messages
    show it (the password masked)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.masked = mask_proxy_url(url)
        if parts.scheme != "http":
            raise NotSupportedError(
                f"the proxy {self.masked} is spoken to over {parts.scheme}, which only botocore's "
                "client does: give an http:// proxy, or connect with transport='botocore' "
                "(?transport=botocore in the URL)"
            )
        self.host = parts.hostname or ""
        self.port = parts.port or 80
        self.authorization = None
        if parts.username is not None:
            user = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            self.authorization = "Basic " + b64encode(user.encode()).decode()

    def connect(self, host: str, port: int) -> bytes:
        """The CONNECT request that asks for a tunnel to ``host``:``port``."""
        request = f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        if self.authorization:
            request += f"Proxy-Authorization: {self.authorization}\r\n"
        return (request + "\r\n").encode("latin-1")
