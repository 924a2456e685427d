"""The sync transport's HTTP: an engine's keep-alive HTTP/1.1 connections to its endpoint, each a
blocking socket; what is said on them is http11.py's."""

from __future__ import annotations

import select
import socket
from collections import deque

from .http11 import Answer, Endpoint


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
        self._endpoint = Endpoint(url, proxy, ca_bundle)
        self._size = size
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._idle: deque[socket.socket] = deque()
        self._closed = False

    def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        """The answer to a POST of ``payload`` with ``headers``: its status, its headers (names in
        lower case) and its body; botocore's exception for a connection refused, lost or timed out."""
        sock = self._take()
        try:
            sock.sendall(self._endpoint.request(headers, payload))
            answer = _read(sock, Answer())
        except Exception as exc:
            sock.close()
            raise self._endpoint.request_failure(exc) from None
        except BaseException:  # an interrupt: the answer's rest would be read as the next one's
            sock.close()
            raise
        if answer.reusable and not self._closed and len(self._idle) < self._size:
            self._idle.append(sock)
        else:
            sock.close()
        return answer.status, answer.headers, answer.body

    def close(self) -> None:
        """Close the idle connections; those in use close when their answer is read."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()

    def _take(self) -> socket.socket:
        """The most recently used idle connection the server has not closed meanwhile, or a new one."""
        while self._idle:
            try:
                sock = self._idle.pop()
            except IndexError:  # another thread took the last one
                break
            if _open(sock):
                return sock
            sock.close()
        return self._connect()

    def _connect(self) -> socket.socket:
        endpoint = self._endpoint
        try:
            sock = socket.create_connection(endpoint.address, timeout=self._connect_timeout)
        except OSError as exc:
            raise endpoint.connect_failure(exc) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if endpoint.tunnel:
                sock.sendall(endpoint.tunnel)
                endpoint.tunnelled(_read(sock, Answer(head_only=True)))
            if endpoint.tls:
                sock = endpoint.tls.wrap_socket(sock, server_hostname=endpoint.host)
            sock.settimeout(self._read_timeout)
        except Exception as exc:
            sock.close()
            raise endpoint.connect_failure(exc) from None
        return sock


def _read(sock: socket.socket, answer: Answer) -> Answer:
    """``answer`` read whole from ``sock``."""
    while True:
        data = sock.recv(65536)
        if not data:
            answer.end()
            return answer
        if answer.feed(data):
            return answer


def _open(sock: socket.socket) -> bool:
    """False when the server has closed an idle connection (or sent something unasked on it)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return not poller.poll(0)
