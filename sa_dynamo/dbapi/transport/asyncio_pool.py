"""The asyncio transport's HTTP: an engine's keep-alive HTTP/1.1 connections to its endpoint for
one event loop, each an asyncio protocol; what is said on them is http11.py's, as on the sync
connections (http_pool.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from .http11 import Answer, Pool, quiet

T = TypeVar("T")


class AsyncHTTPPool(Pool["_Connection"]):
    """An engine's connections for one event loop."""

    async def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        """The answer to a POST of ``payload`` with ``headers``, as ``HTTPPool.post`` gives it."""
        connection = self._reuse() or await self._connect()
        try:
            answer = await connection.exchange(
                self.endpoint.request(headers, payload), Answer(), self.read_timeout
            )
        except Exception as exc:
            connection.close()
            raise self.endpoint.request_failure(exc) from None
        except BaseException:  # cancelled: the answer's rest would be read as the next one's
            connection.close()
            raise
        self._keep(connection, answer)
        return answer.status, answer.headers, answer.body

    def _open(self, connection: _Connection) -> bool:
        return connection.open()

    async def _connect(self) -> _Connection:
        endpoint, loop = self.endpoint, asyncio.get_running_loop()
        try:
            transport, connection = await _within(
                loop.create_connection(_Connection, *endpoint.address), self.connect_timeout
            )
        except Exception as exc:
            raise endpoint.connect_failure(exc) from None
        try:
            if endpoint.tunnel:
                tunnelled = await connection.exchange(
                    endpoint.tunnel, Answer(head_only=True), self.connect_timeout
                )
                endpoint.tunnelled(tunnelled)
            if endpoint.tls:
                connection.transport = await _within(
                    loop.start_tls(transport, connection, endpoint.tls, server_hostname=endpoint.host),
                    self.connect_timeout,
                )
        except Exception as exc:
            connection.close()
            raise endpoint.connect_failure(exc) from None
        return connection


async def _within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """``awaitable``'s result; TimeoutError after ``seconds`` (asyncio's own before Python 3.11)."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise TimeoutError(f"not done within {seconds} s") from None


class _Connection(asyncio.Protocol):
    """One keep-alive connection: the answer it is reading, made whole by the bytes that arrive."""

    def __init__(self) -> None:
        self.transport: Any = None
        self._answer: Answer | None = None
        self._whole: asyncio.Future[None] | None = None
        self._lost = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        whole, answer = self._whole, self._answer
        if whole is None or answer is None or whole.done():
            self._lost = True  # bytes nobody asked for: the connection is not used again
            return
        try:
            if answer.feed(data):
                whole.set_result(None)
        except Exception as exc:
            whole.set_exception(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        whole, answer = self._whole, self._answer
        if whole is None or answer is None or whole.done():
            return
        if exc is not None:
            whole.set_exception(exc)
            return
        try:
            answer.end()
        except Exception as malformed:
            whole.set_exception(malformed)
        else:
            whole.set_result(None)

    async def exchange(self, request: bytes, answer: Answer, timeout: float | None) -> Answer:
        """``answer`` to ``request``, read whole; TimeoutError when ``timeout`` seconds pass first."""
        loop = asyncio.get_running_loop()
        self._answer, self._whole = answer, loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, self._time_out, timeout)
        try:
            self.transport.write(request)
            await self._whole
        finally:
            if timer is not None:
                timer.cancel()
            self._answer = self._whole = None
        return answer

    def _time_out(self, timeout: float) -> None:
        if self._whole is not None and not self._whole.done():
            self._whole.set_exception(TimeoutError(f"no answer within {timeout} s"))

    def open(self) -> bool:
        """False when the server has closed it (or sent something unasked) while it was idle,
        whether or not the event loop has run since to tell the protocol."""
        if self._lost or self.transport.is_closing():
            return False
        sock = self.transport.get_extra_info("socket")
        return sock is None or quiet(sock)

    def close(self) -> None:
        self._lost = True
        if self.transport is not None:
            # Its event loop closed first (asyncio.run() ended without the engine disposed):
            # the transport can no longer close, and asyncio reports it when it is collected.
            with contextlib.suppress(RuntimeError):
                self.transport.close()
