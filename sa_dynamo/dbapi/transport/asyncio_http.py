"""The default transport for asyncio: http.py's requests on the driver's own keep-alive
connections for the event loop (asyncio_pool.py, one pool per engine and event loop, sized like
the engine's pool), each awaited by the event loop.

The driver is synchronous code (paging, batching, the transaction buffer, validation, retries);
under asyncio it runs inside a bridge that lets synchronous code await, such as SQLAlchemy's
greenlet bridge, which the caller hands in as ``await_`` (this driver imports no SQLAlchemy).
Only the I/O differs from the sync transport: signing, retries, errors and answers are
signed.py's, what is said on the connections http11.py's. What could block the event loop runs
in a worker thread instead: building the engine's route (the botocore session, the credential
chain) and refreshing credentials.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from botocore.credentials import RefreshableCredentials

from . import shared, signed
from .asyncio_pool import AsyncHTTPPool
from .endpoint import listening_check

Await = Callable[[Awaitable[Any]], Any]  # the awaitable's result, awaited by the running loop

# The routes of the engines, by connect arguments and event loop (a connection serves one loop).
ROUTES: shared.Shared[signed.Route] = shared.Shared()


class AsyncHTTPTransport(signed.SignedTransport):
    """A connection's requests on its engine's pool for the event loop; ``awaited`` counts the awaits."""

    def __init__(self, route: signed.Route, give_back: Any, await_: Await, first_request: Any = None):
        super().__init__(route, give_back, first_request)
        self.awaited = 0
        self._await = await_

    def _exchange(self, headers: dict[str, str], payload: bytes) -> tuple[int, Any, bytes]:
        self.awaited += 1
        return self._await(self.route.pool.post(headers, payload))

    def _frozen_credentials(self) -> Any:
        """The credentials to sign with; refreshing them (an STS or metadata request) runs in a
        worker thread while the event loop goes on."""
        credentials = self.route.credentials
        if isinstance(credentials, RefreshableCredentials) and credentials.refresh_needed():
            self.awaited += 1
            return self._await(asyncio.to_thread(credentials.get_frozen_credentials))
        return super()._frozen_credentials()

    def pause(self, seconds: float) -> None:
        self.awaited += 1
        self._await(asyncio.sleep(seconds))


def transport(to: shared.Destination, await_: Await, can_await: Callable[[], bool]) -> AsyncHTTPTransport:
    """A connection's transport on its engine's route for the running event loop: made (in a
    worker thread) by its first connection, its connections closed after its last."""
    key = to.key(asyncio.get_running_loop())
    route = ROUTES.find(key)
    if route is None:
        route = await_(asyncio.to_thread(ROUTES.take, key, lambda: signed.route(to, AsyncHTTPPool)))

    def give_back() -> None:
        if ROUTES.give_back(key) and can_await():  # else the loop is gone, and with it its connections
            route.pool.close()

    return AsyncHTTPTransport(route, give_back, await_, listening_check(to.endpoint_url))
