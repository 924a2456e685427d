"""The sync transport's HTTP: an engine's keep-alive HTTP/1.1 connections to its endpoint.

A DynamoDB request is always a POST of a small JSON body to one URL, and its answer always says
its length, so this does only that: the request written in one send, the answer read by its
Content-Length (or its chunks). Measured against DynamoDB Local, a request costs the client
about a fifth of the CPU urllib3's pool spends on it (docs/performance.md). Failures raise the
exceptions botocore raises for them, so that retries and errors are the same on every transport.

A proxy is an ``http://`` one: an ``https`` endpoint is reached through a CONNECT tunnel, an
``http`` one by sending the proxy the whole URL; a user and password in the proxy's URL are sent
as Basic authorization. A proxy spoken to over TLS (``https://``) needs botocore's client.
"""

from __future__ import annotations

import select
import socket
import ssl
from base64 import b64encode
from collections import deque
from typing import BinaryIO
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

_LINE_LIMIT = 65536  # the longest status or header line read; DynamoDB's are under 200 bytes


class HTTPPool:
    """At most ``size`` idle connections kept alive to ``url`` (through ``proxy``); more are opened
    while more requests are in flight, and closed when their answer is read."""

    def __init__(
        self,
        url: str,
        size: int,
        connect_timeout: float | None,
        read_timeout: float | None,
        proxy: str | None = None,
        ca_bundle: str | bool = True,
    ) -> None:
        parts = urlsplit(url)
        self._url = url
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._size = size
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._tls = None
        if parts.scheme == "https":
            self._tls = ssl.create_default_context(cafile=ca_bundle if isinstance(ca_bundle, str) else None)
        self._proxy = _Proxy(proxy) if proxy else None
        # The request's first lines, the same for every request: through a proxy to an http
        # endpoint the request names the whole URL, else the path (a CONNECT tunnel's too).
        target = (
            url
            if self._proxy and not self._tls
            else (parts.path or "/") + (parts.query and "?" + parts.query)
        )
        head = f"POST {target} HTTP/1.1\r\nHost: {sigv4.host(url)}\r\nAccept-Encoding: identity\r\n"
        if self._proxy and not self._tls and self._proxy.authorization:
            head += f"Proxy-Authorization: {self._proxy.authorization}\r\n"
        self._head = head
        self._idle: deque[_Connection] = deque()
        self._closed = False

    def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        """The answer to a POST of ``payload`` with ``headers``: its status, its headers (names in
        lower case) and its body; botocore's exception for a connection refused, lost or timed out."""
        connection = self._take()
        request = self._head + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request += f"Content-Length: {len(payload)}\r\n\r\n"
        try:
            connection.socket.sendall(request.encode("latin-1") + payload)
            status, answer_headers, body, reusable = _read_answer(connection.reader)
        except Exception as exc:
            connection.close()
            raise self._failure(exc) from None
        except BaseException:  # an interrupt: the answer's rest would be read as the next one's
            connection.close()
            raise
        if reusable and not self._closed and len(self._idle) < self._size:
            self._idle.append(connection)
        else:
            connection.close()
        return status, answer_headers, body

    def close(self) -> None:
        """Close the idle connections; those in use close when their answer is read."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()

    def _take(self) -> _Connection:
        """The most recently used idle connection the server has not closed meanwhile, or a new one."""
        while self._idle:
            try:
                connection = self._idle.pop()
            except IndexError:  # another thread took the last one
                break
            if connection.open():
                return connection
            connection.close()
        return self._connect()

    def _connect(self) -> _Connection:
        proxy = self._proxy
        address = (proxy.host, proxy.port) if proxy else (self._host, self._port)
        try:
            sock = socket.create_connection(address, timeout=self._connect_timeout)
        except TimeoutError as exc:
            raise ConnectTimeoutError(endpoint_url=self._url, error=exc) from None
        except OSError as exc:
            if proxy:
                raise ProxyConnectionError(proxy_url=proxy.masked, error=exc) from None
            raise EndpointConnectionError(endpoint_url=self._url, error=exc) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if proxy and self._tls:
                proxy.tunnel(sock, self._host, self._port)
            if self._tls:
                sock = self._tls.wrap_socket(sock, server_hostname=self._host)
            sock.settimeout(self._read_timeout)
        except ProxyConnectionError:
            sock.close()
            raise
        except ssl.SSLError as exc:
            sock.close()
            raise SSLError(endpoint_url=self._url, error=exc) from None
        except TimeoutError as exc:
            sock.close()
            raise ConnectTimeoutError(endpoint_url=self._url, error=exc) from None
        except OSError as exc:
            sock.close()
            raise EndpointConnectionError(endpoint_url=self._url, error=exc) from None
        return _Connection(sock)

    def _failure(self, exc: Exception) -> Exception:
        """botocore's exception for a request that failed once its connection was open."""
        if isinstance(exc, TimeoutError):
            return ReadTimeoutError(endpoint_url=self._url, error=exc)
        if isinstance(exc, ssl.SSLError):
            return SSLError(endpoint_url=self._url, error=exc)
        if isinstance(exc, OSError | _Malformed):
            return ConnectionClosedError(endpoint_url=self._url, error=exc)
        return HTTPClientError(error=exc)


class _Connection:
    """One keep-alive connection: its socket, and the buffered reader its answers are read from."""

    def __init__(self, sock: socket.socket) -> None:
        self.socket = sock
        self.reader: BinaryIO = sock.makefile("rb")

    def open(self) -> bool:
        """False when the server has closed it (or sent something unasked) while it was idle."""
        poller = select.poll()
        poller.register(self.socket, select.POLLIN)
        return not poller.poll(0)

    def close(self) -> None:
        self.reader.close()
        self.socket.close()


class _Proxy:
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

    def tunnel(self, sock: socket.socket, host: str, port: int) -> None:
        """Ask the proxy on ``sock`` to connect it to ``host``:``port``."""
        request = f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        if self.authorization:
            request += f"Proxy-Authorization: {self.authorization}\r\n"
        try:
            sock.sendall((request + "\r\n").encode("latin-1"))
            reader = sock.makefile("rb")
            status, _ = _read_head(reader)
            reader.close()  # the tunnel's first bytes are the TLS handshake's, not yet sent
        except (OSError, _Malformed) as exc:
            raise ProxyConnectionError(proxy_url=self.masked, error=exc) from None
        if status != 200:
            raise ProxyConnectionError(
                proxy_url=self.masked, error=f"the proxy answered CONNECT with {status}"
            )


class _Malformed(Exception):
    """An answer that is not HTTP/1.x, or ends before its length."""


def _read_head(reader: BinaryIO) -> tuple[int, dict[str, str]]:
    """An answer's status and headers (names in lower case; repeated ones joined by commas),
    after any interim (1xx) answers."""
    while True:
        line = reader.readline(_LINE_LIMIT)
        if not line:
            raise _Malformed("the server closed the connection without answering")
        version, _, rest = line.partition(b" ")
        if not version.startswith(b"HTTP/1.") or not rest[:3].isdigit():
            raise _Malformed(f"not an HTTP/1.x status line: {line[:40]!r}")
        status = int(rest[:3])
        headers: dict[str, str] = {}
        while True:
            line = reader.readline(_LINE_LIMIT)
            if line in (b"\r\n", b"\n"):
                break
            if not line.endswith(b"\n"):
                raise _Malformed("the answer's headers ended early")
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if status >= 200:
            if version == b"HTTP/1.0" and "keep-alive" not in headers.get("connection", "").lower():
                headers.setdefault("connection", "close")
            return status, headers


def _read_answer(reader: BinaryIO) -> tuple[int, dict[str, str], bytes, bool]:
    """An answer's status, headers and body, and whether its connection can carry another."""
    status, headers = _read_head(reader)
    reusable = headers.get("connection", "").lower() != "close"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _read_chunks(reader)
    elif "content-length" in headers:
        body = _read_exactly(reader, int(headers["content-length"]))
    else:  # the answer ends where the connection does
        body, reusable = reader.read(), False
    return status, headers, body, reusable


def _read_exactly(reader: BinaryIO, length: int) -> bytes:
    body = reader.read(length)
    if len(body) != length:
        raise _Malformed(f"the connection closed {len(body)} bytes into an answer of {length}")
    return body


def _read_chunks(reader: BinaryIO) -> bytes:
    chunks = []
    while True:
        size_line = reader.readline(_LINE_LIMIT)
        try:
            size = int(size_line.split(b";", 1)[0], 16)
        except ValueError:
            raise _Malformed(f"not a chunk's size: {size_line[:40]!r}") from None
        if size == 0:
            break
        chunks.append(_read_exactly(reader, size))
        _read_exactly(reader, 2)  # the chunk's CRLF
    while reader.readline(_LINE_LIMIT) not in (b"\r\n", b"\n", b""):  # trailers
        pass
    return b"".join(chunks)
