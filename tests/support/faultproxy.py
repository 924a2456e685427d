"""A fault-injecting HTTP proxy between botocore and DynamoDB Local, on 127.0.0.1 only.

botocore talks to the proxy as if it were DynamoDB; each request is forwarded to DynamoDB Local
unless a fault intervenes. The faults are the ones production sees and DynamoDB Local never
produces: throttling and 500s (answered by the proxy, nothing forwarded), delays, and connection
resets either before forwarding (the request never arrived) or after it (DynamoDB applied the
request and the answer was lost: the case that makes a retry dangerous).

Random faults come from one seeded sequence, drawn in the order requests arrive, so a client
that sends one request at a time meets the same faults on every run. Scripted faults hit the
next requests of one operation exactly. The proxy is bounded: it stops when its ``with`` block
ends, after ``max_requests`` requests or after ``time_limit`` seconds, whichever comes first.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import socket
import struct
import sys
import threading
import time
import uuid
import zlib
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
# The faults that exclude each other, in the order a random draw tests them; a delay is drawn on
# its own and may precede any of them.
FAULTS = ("throttle", "server_error", "reset_before", "reset_after")
# Faults only a script gives: "delay" (forwarded late), "bad_checksum" (forwarded, and answered
# with an x-amz-crc32 header that does not match the body, as a corrupted answer would be),
# "cut_short" (forwarded, and half the answer sent before the connection is closed cleanly, as
# a server or a middlebox that fails mid-answer leaves it).
SCRIPTED = ("delay", "bad_checksum", "cut_short")
# The answers the proxy gives instead of forwarding: (HTTP status, DynamoDB error code, message).
_ANSWERS = {
    "throttle": (400, "ThrottlingException", "Rate of requests exceeds the allowed throughput."),
    "server_error": (500, "InternalServerError", "Internal server error"),
}
# Framing headers of the upstream response: the proxy sets its own.
_FRAMING = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})


class ProxyLimitReached(RuntimeError):
    """The proxy stopped itself (request cap or time limit) before its ``with`` block ended."""


@dataclass(frozen=True)
class Faults:
    """The chance of each fault per request. The FAULTS exclude each other (their chances sum to
    at most 1); a delay of ``delay_seconds`` before forwarding is drawn independently. Only
    requests for ``operations`` (names from X-Amz-Target) are faulted; every one when None."""

    throttle: float = 0.0
    server_error: float = 0.0
    reset_before: float = 0.0
    reset_after: float = 0.0
    delay: float = 0.0
    delay_seconds: float = 0.05
    operations: frozenset[str] | None = None

    def __post_init__(self) -> None:
        exclusive = [getattr(self, name) for name in FAULTS]
        if any(not 0 <= p <= 1 for p in [*exclusive, self.delay]) or sum(exclusive) > 1:
            raise ValueError(f"chances must lie in [0, 1] and those of {FAULTS} sum to at most 1: {self}")

    def draw(self, rng: random.Random, operation: str) -> tuple[str | None, bool]:
        """The fault for one request and whether it is delayed. Two numbers are drawn for every
        request, faulted or not, so that the sequence depends only on the order of requests."""
        fault_draw, delay_draw = rng.random(), rng.random()
        if self.operations is not None and operation not in self.operations:
            return None, False
        delayed = delay_draw < self.delay
        for name in FAULTS:
            chance = getattr(self, name)
            if fault_draw < chance:
                return name, delayed
            fault_draw -= chance
        return None, delayed


@dataclass
class Counts:
    """What the proxy did, by DynamoDB operation (the X-Amz-Target name, e.g. "ExecuteStatement")."""

    requests: Counter[str] = field(default_factory=Counter)  # received
    forwarded: Counter[str] = field(default_factory=Counter)  # seen by DynamoDB Local
    faults: Counter[tuple[str, str]] = field(default_factory=Counter)  # (fault or "delay", operation)

    def of(self, fault: str) -> int:
        """How many requests of any operation got ``fault``."""
        return sum(n for (name, _), n in self.faults.items() if name == fault)


class FaultProxy:
    """The proxy; use it as a context manager: ``with FaultProxy(endpoint_url) as proxy: ...``.

    ``faults`` may be replaced while it runs (e.g. after setting up tables without faults).
    """

    def __init__(
        self,
        upstream: str,
        faults: Faults | None = None,
        seed: int = 0,
        max_requests: int = 10_000,
        time_limit: float = 120.0,
        upstream_timeout: float = 30.0,
    ):
        parts = urlsplit(upstream)
        if parts.scheme != "http" or parts.hostname != LOOPBACK or parts.port is None:
            raise ValueError(f"the fault proxy forwards only to http://{LOOPBACK}:PORT, not {upstream}")
        self.upstream = (parts.hostname, parts.port)
        self.upstream_timeout = upstream_timeout
        self.faults = faults or Faults()
        self.max_requests = max_requests
        self.counts = Counts()
        # Every request as it arrived: (operation, headers, body).
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.stopped_because: str | None = None
        self._rng = random.Random(seed)
        self._script: defaultdict[str, deque[str]] = defaultdict(deque)
        self._handled = 0
        self._lock = threading.Lock()
        self._clients: set[socket.socket] = set()
        self._stopping = threading.Lock()
        self._stopped = False
        self._server = _Server((LOOPBACK, 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fault-proxy:{self.port}",
            daemon=True,
        )
        self._timer = threading.Timer(time_limit, self._expire, args=(time_limit,))
        self._timer.daemon = True

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def endpoint_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def script(self, operation: str, *faults: str) -> None:
        """Give the next requests of ``operation`` these faults, one each, before random ones:
        one of FAULTS or SCRIPTED ("delay": forwarded after ``faults.delay_seconds``)."""
        unknown = set(faults) - {*FAULTS, *SCRIPTED}
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; choose from {FAULTS} or {SCRIPTED}")
        with self._lock:
            self._script[operation].extend(faults)

    def unscript(self) -> dict[str, list[str]]:
        """Drop the scripted faults no request has met yet, and return them by operation."""
        with self._lock:
            left = {operation: list(faults) for operation, faults in self._script.items() if faults}
            self._script.clear()
        return left

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if self.stopped_because is not None:
            # Raised even over another error: that one is most likely the client finding no proxy.
            raise ProxyLimitReached(f"the fault proxy stopped itself: {self.stopped_because}")

    def stop(self) -> None:
        """Stop serving and cut every open connection; returns once the server thread has ended,
        also when another thread (the time limit, the request cap) is stopping it. Idempotent."""
        with self._stopping:
            if self._stopped:
                return
            self._timer.cancel()
            started = self._thread.ident is not None  # shutdown() waits for a serve_forever() loop
            if started:
                self._server.shutdown()
            self._server.server_close()
            with self._lock:
                clients = list(self._clients)
            for client in clients:
                with contextlib.suppress(OSError):
                    client.shutdown(socket.SHUT_RDWR)
            if started:
                self._thread.join()
            self._stopped = True

    def _expire(self, time_limit: float) -> None:
        self.stopped_because = f"still running after its time limit of {time_limit} s"
        self.stop()

    # -- called by the handler threads -----------------------------------------------------

    def _opened(self, client: socket.socket) -> None:
        with self._lock:
            self._clients.add(client)

    def _closed(self, client: socket.socket) -> None:
        with self._lock:
            self._clients.discard(client)

    def _handle(self, handler: _Handler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length", 0)))
        operation = handler.headers.get("X-Amz-Target", "").rpartition(".")[2]
        with self._lock:
            self.received.append((operation, dict(handler.headers.items()), body))
        decision = self._decide(operation)
        if decision is None:
            handler.reset()
            self.stop()
            return
        fault, delayed = decision
        if delayed:
            time.sleep(self.faults.delay_seconds)
        if fault in _ANSWERS:
            handler.answer_error(*_ANSWERS[fault])
        elif fault == "reset_before":
            handler.reset()
        else:
            status, headers, payload = self._forward(handler, body)
            with self._lock:
                self.counts.forwarded[operation] += 1
            if fault == "reset_after":
                handler.reset()
            elif fault == "bad_checksum":
                wrong = str((zlib.crc32(payload) + 1) & 0xFFFFFFFF)
                kept = [(name, value) for name, value in headers if name.lower() != "x-amz-crc32"]
                handler.relay(status, [*kept, ("x-amz-crc32", wrong)], payload)
            elif fault == "cut_short":
                handler.relay(status, headers, payload, cut=len(payload) // 2)
            else:
                handler.relay(status, headers, payload)

    def _decide(self, operation: str) -> tuple[str | None, bool] | None:
        """Count the request and choose its fault; None once the request cap is exceeded."""
        with self._lock:
            self.counts.requests[operation] += 1
            self._handled += 1
            if self._handled > self.max_requests:
                self.stopped_because = f"received more than its cap of {self.max_requests} requests"
                return None
            script = self._script[operation]
            if script:
                fault = script.popleft()
                fault, delayed = (None, True) if fault == "delay" else (fault, False)
            else:
                fault, delayed = self.faults.draw(self._rng, operation)
            if fault is not None:
                self.counts.faults[fault, operation] += 1
            if delayed:
                self.counts.faults["delay", operation] += 1
            return fault, delayed

    def _forward(self, handler: _Handler, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """Send the request to DynamoDB Local on a fresh connection and read the whole answer. A
        fresh connection per request: a reused one that DynamoDB Local had closed while idle
        would fail in a way that no fault explains."""
        upstream = http.client.HTTPConnection(*self.upstream, timeout=self.upstream_timeout)
        try:
            upstream.request(handler.command, handler.path, body, dict(handler.headers.items()))
            response = upstream.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            upstream.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: FaultProxy

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away (it timed out, or the proxy was stopped) is part of the game."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """One client connection; HTTP/1.1 so that botocore's keep-alive connections are served."""

    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds an idle keep-alive connection stays open
    # The headers and the body go out in two writes: with Nagle's algorithm the body would wait
    # for the client's delayed ACK of the headers (40 ms on Linux) on every answer.
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.proxy._opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.proxy._closed(self.connection)

    def do_POST(self) -> None:
        self.server.proxy._handle(self)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: thousands of requests per test would bury pytest's output."""

    def answer_error(self, status: int, code: str, message: str) -> None:
        """Answer as DynamoDB does: the JSON error body plus the x-amzn-ErrorType header."""
        payload = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message})
        headers = [
            ("Content-Type", "application/x-amz-json-1.0"),
            ("x-amzn-RequestId", uuid.uuid4().hex),
            ("x-amzn-ErrorType", code),
        ]
        self.relay(status, headers, payload.encode())

    def relay(
        self, status: int, headers: list[tuple[str, str]], payload: bytes, cut: int | None = None
    ) -> None:
        """Answer with ``payload``; or, ``cut``, only its first bytes under a Content-Length that
        announces them all, then close the connection (a FIN: no error for the client to see)."""
        self.send_response_only(status)
        for name, value in headers:
            if name.lower() not in _FRAMING:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload if cut is None else payload[:cut])
        if cut is not None:
            self.close_connection = True

    def reset(self) -> None:
        """Drop the connection without answering: SO_LINGER 0 makes the close an RST."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # The socket closes for real once no file made from it is open.
        self.rfile.close()
        self.connection.close()
