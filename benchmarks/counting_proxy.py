"""The loopback proxy every contender's requests pass through, so that requests and capacity are
counted the same way for all of them (boto3, PynamoDB, PyDynamoDB, aiobotocore, aiodynamo, the
raw-HTTP floor and sa_dynamo on each transport): by what arrives on the wire, not by each
client's own hooks. It runs in a process of its own, so its CPU is never the client's, and it
adds the same work to every request: read it, optionally hold it (W7's round-trip times),
forward it on a keep-alive connection, read the answer by its Content-Length, note its
ConsumedCapacity, hand it back.

``GET /counts`` (not forwarded, not counted) answers the requests forwarded so far and the
capacity units their answers reported.

    python -m benchmarks.counting_proxy UPSTREAM_URL [DELAY_SECONDS]   # prints its port
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from urllib.parse import urlsplit

from sa_dynamo.dbapi.capacity import Consumed

LOOPBACK = "127.0.0.1"
COUNTS = b"GET /counts "
_HEAD_END = b"\r\n\r\n"


@dataclass
class Counts:
    """Requests forwarded, and the capacity units (read and write) their answers reported;
    ``reported`` counts the answers that reported any (DynamoDB Local reports none for PartiQL)."""

    calls: int = 0
    units: float = 0.0
    reported: int = 0

    def since(self, before: Counts) -> Counts:
        return Counts(self.calls - before.calls, self.units - before.units, self.reported - before.reported)

    @property
    def capacity(self) -> float | None:
        """The units reported, or None when no answer reported any."""
        return self.units if self.reported else None


class CountingProxy:
    """The proxy's process, started on a free loopback port in front of ``upstream_url``; each
    request held ``delay`` seconds first."""

    def __init__(self, upstream_url: str, delay: float = 0.0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, upstream_url, str(delay)],
            stdin=subprocess.PIPE,  # closed when this process ends: the proxy ends with it
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.strip().isdigit():
            self.process.kill()
            raise RuntimeError(f"the counting proxy did not start: {line!r}")
        self.port = int(line)
        self.endpoint_url = f"http://{LOOPBACK}:{self.port}"
        self._control = http.client.HTTPConnection(LOOPBACK, self.port)

    def counts(self) -> Counts:
        """What the proxy has forwarded so far."""
        self._control.request("GET", "/counts")
        return Counts(**json.loads(self._control.getresponse().read()))

    @contextmanager
    def counting(self) -> Iterator[Counts]:
        """The requests of the block (and their capacity), filled in when it ends."""
        before, counted = self.counts(), Counts()
        try:
            yield counted
        finally:
            after = self.counts().since(before)
            counted.calls, counted.units, counted.reported = after.calls, after.units, after.reported

    def stop(self) -> None:
        self._control.close()
        if self.process.stdin is not None:
            self.process.stdin.close()
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> CountingProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Proxy:
    """The proxy's side: one upstream keep-alive connection per client connection."""

    def __init__(self, upstream_url: str, delay: float) -> None:
        parts = urlsplit(upstream_url)
        self.host, self.port = parts.hostname or LOOPBACK, parts.port or 80
        self.delay = delay
        self.counts = Counts()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                try:
                    head = await reader.readuntil(_HEAD_END)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                if head.startswith(COUNTS):
                    body = json.dumps(self.counts.__dict__).encode()
                    writer.write(_response_head(200, len(body)) + body)
                    continue
                request = head + await reader.readexactly(_length(head))
                if self.delay:
                    await asyncio.sleep(self.delay)
                answer, body, upstream = await self._forward(request, upstream)
                self._count(head, body)
                writer.write(answer)
                await writer.drain()
        finally:
            writer.close()
            if upstream is not None:
                upstream[1].close()

    async def _forward(
        self, request: bytes, upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None
    ) -> tuple[bytes, bytes, tuple[asyncio.StreamReader, asyncio.StreamWriter] | None]:
        """The upstream's whole answer as sent and its body; a reused connection the server
        closed is opened again."""
        while True:
            reused = upstream is not None
            if upstream is None:
                upstream = await asyncio.open_connection(self.host, self.port)
            up_reader, up_writer = upstream
            try:
                up_writer.write(request)
                head = await up_reader.readuntil(_HEAD_END)
            except (asyncio.IncompleteReadError, ConnectionError):
                up_writer.close()
                upstream = None
                if reused:
                    continue
                raise
            raw, body = await _body(up_reader, head)
            if b"\r\nconnection: close" in head.lower():
                up_writer.close()
                upstream = None
            return head + raw, body, upstream

    def _count(self, head: bytes, body: bytes) -> None:
        self.counts.calls += 1
        if b'"ConsumedCapacity"' not in body:
            return
        operation = _header(head, b"x-amz-target").rpartition(".")[2]
        consumed = Consumed()
        consumed.add(operation, {}, json.loads(body))
        if consumed.reported:
            self.counts.units += consumed.read_units + consumed.write_units
            self.counts.reported += 1


def _header(head: bytes, name: bytes) -> str:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode()
    return ""


async def _body(reader: asyncio.StreamReader, head: bytes) -> tuple[bytes, bytes]:
    """An answer's body as sent (DynamoDB Local sends some in chunks) and as its bytes."""
    if _header(head, b"transfer-encoding").lower() != "chunked":
        body = await reader.readexactly(_length(head))
        return body, body
    raw, chunks = [], []
    while True:
        size_line = await reader.readline()
        size = int(size_line.split(b";")[0], 16)
        chunk = await reader.readexactly(size + 2)  # and its CRLF
        raw += [size_line, chunk]
        if not size:
            return b"".join(raw), b"".join(chunks)  # no trailers from DynamoDB Local
        chunks.append(chunk[:-2])


def _length(head: bytes) -> int:
    return int(_header(head, b"content-length") or 0)


def _response_head(status: int, length: int) -> bytes:
    return (
        f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode()
    )


async def _main(upstream_url: str, delay: float) -> None:
    # the benchmark's end closes stdin, however it ends
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    proxy = _Proxy(upstream_url, delay)
    server = await asyncio.start_server(proxy.serve, LOOPBACK, 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> None:
    with suppress(KeyboardInterrupt):  # Ctrl-C reaches the whole process group
        asyncio.run(_main(argv[0], float(argv[1]) if len(argv) > 1 else 0.0))


if __name__ == "__main__":
    main(sys.argv[1:])
