"""The sync transport's HTTP: an engine's keep-alive HTTP/1.1 connections to its endpoint, each a
blocking socket; what is said on them is http11.py's."""

from __future__ import annotations

import socket

from .http11 import Answer, Pool, quiet


class HTTPPool(Pool[socket.socket]):
    """An engine's connections, used by one thread at a time each."""

    def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        """The answer to a POST of ``payload`` with ``headers``: its status, its headers (names in
        lower case) and its body; botocore's exception for a connection refused, lost or timed out."""
        sock = self._reuse() or self._connect()
        try:
            sock.sendall(self.endpoint.request(headers, payload))
            answer = _read(sock, Answer())
        except Exception as exc:
            sock.close()
            raise self.endpoint.request_failure(exc) from None
        except BaseException:  # an interrupt: the answer's rest would be read as the next one's
            sock.close()
            raise
        self._keep(sock, answer)
        return answer.status, answer.headers, answer.body

    def _open(self, connection: socket.socket) -> bool:
        return quiet(connection)

    def _connect(self) -> socket.socket:
        endpoint = self.endpoint
        try:
            sock = socket.create_connection(endpoint.address, timeout=self.connect_timeout)
        except OSError as exc:
            raise endpoint.connect_failure(exc) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if endpoint.tunnel:
                sock.sendall(endpoint.tunnel)
                endpoint.tunnelled(_read(sock, Answer(head_only=True)))
            if endpoint.tls:
                sock = endpoint.tls.wrap_socket(sock, server_hostname=endpoint.host)
            sock.settimeout(self.read_timeout)
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
