"""Loopback servers that answer HTTP requests as a test scripts them, byte for byte: what DynamoDB
Local never does (an answer cut short, chunked, never sent, a connection closed while idle), and
a CONNECT proxy. Each listens on 127.0.0.1 only and stops when its ``with`` block ends; a server
that waits on a socket waits at most ``TIME_LIMIT`` seconds.

tls/: a test CA (ca.pem; its key was thrown away once it signed) and the certificate it signed
for localhost and 127.0.0.1 (server.pem, server-key.pem), valid until 2126.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

LOOPBACK = "127.0.0.1"
TIME_LIMIT = 10.0
TLS = Path(__file__).parent / "tls"
CA = str(TLS / "ca.pem")

# Script words besides an answer's bytes: close the connection instead of answering (the answer
# lost), or answer and then close it without saying so (as a server drops an idle connection).
LOSE = "lose"
THEN_CLOSE = "then close"


@dataclass
class Request:
    """A request as the server read it: the client's port, its request line, its headers (names
    in lower case) and its body."""

    port: int
    line: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Served:
    url: str
    requests: list[Request] = field(default_factory=list)
    tunnels: list[Request] = field(default_factory=list)  # a proxy's CONNECT requests
    closed: int = 0  # the connections the server has closed
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_closed(self, count: int) -> None:
        """Wait until the server has closed ``count`` connections."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.closed >= count, TIME_LIMIT)


def answer(status: int = 200, body: bytes = b"{}", *extra: str) -> bytes:
    """An HTTP/1.1 answer with a Content-Length and the ``extra`` header lines."""
    lines = [f"HTTP/1.1 {status} X", "Content-Type: application/x-amz-json-1.0", *extra]
    return ("\r\n".join([*lines, f"Content-Length: {len(body)}", "", ""])).encode() + body


def _read_request(reader: BinaryIO, port: int) -> Request | None:
    line = reader.readline()
    if not line:
        return None
    headers = {}
    while (header := reader.readline()) not in (b"\r\n", b""):
        name, _, value = header.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = reader.read(int(headers.get("content-length", 0)))
    return Request(port, line.decode().strip(), headers, body)


@contextlib.contextmanager
def serving(*script: bytes | str, tls: bool = False) -> Iterator[Served]:
    """A server that answers the requests it reads with ``script``'s answers in turn (bytes, or
    bytes followed by THEN_CLOSE, or LOSE); a request past the script's end is not answered."""
    listener = _listener()
    port = listener.getsockname()[1]
    served = Served(f"{'https' if tls else 'http'}://{'localhost' if tls else LOOPBACK}:{port}/")
    steps = list(script)
    lock = threading.Lock()
    context = None
    if tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(TLS / "server.pem"), str(TLS / "server-key.pem"))

    def converse(sock: socket.socket) -> None:
        peer = sock.getpeername()[1]
        sock.settimeout(TIME_LIMIT)
        try:
            if context is not None:
                sock = context.wrap_socket(sock, server_side=True)
            with sock.makefile("rb") as reader:
                while (request := _read_request(reader, peer)) is not None:
                    with lock:
                        served.requests.append(request)
                        step = steps.pop(0) if steps else None
                        close = bool(steps) and steps[0] == THEN_CLOSE
                        if close:
                            steps.pop(0)
                    if step is None:
                        sock.recv(1)  # wait, answering nothing, until the client gives up
                        return
                    if step == LOSE:
                        return
                    sock.sendall(step.encode() if isinstance(step, str) else step)
                    if close:
                        return
        except OSError:
            pass
        finally:
            sock.close()
            with served.changed:
                served.closed += 1
                served.changed.notify_all()

    with _accepting(listener, converse):
        yield served


@contextlib.contextmanager
def connect_proxy(served: Served) -> Iterator[str]:
    """An http:// proxy's URL (with a user and password) whose CONNECT tunnels reach ``served``."""
    listener = _listener()
    target_port = int(served.url.rsplit(":", 1)[1].rstrip("/"))

    def tunnel(client: socket.socket) -> None:
        with contextlib.suppress(OSError), client:
            client.settimeout(TIME_LIMIT)
            with client.makefile("rb") as reader:
                request = _read_request(reader, client.getpeername()[1])
            if request is None:
                return
            served.tunnels.append(request)
            with socket.create_connection((LOOPBACK, target_port), timeout=TIME_LIMIT) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
                back.start()
                _pipe(client, upstream)
                back.join(TIME_LIMIT)

    with _accepting(listener, tunnel):
        yield f"http://user:pa%20ss@{LOOPBACK}:{listener.getsockname()[1]}"


def _listener() -> socket.socket:
    listener = socket.create_server((LOOPBACK, 0))
    listener.settimeout(0.05)  # how soon its acceptor sees the block end
    return listener


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def _accepting(listener: socket.socket, handle: Callable[[socket.socket], None]) -> Iterator[None]:
    """Each connection ``listener`` accepts handled by ``handle`` in a thread of its own, until
    the block ends."""
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=handle, args=(sock,), daemon=True).start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield
    finally:
        stop.set()
        listener.close()
        acceptor.join(TIME_LIMIT)
