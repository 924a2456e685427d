"""The driver's default transport: DynamoDB's JSON API on the driver's own keep-alive HTTP/1.1
connections (http_pool.py), one pool per engine, sized like the engine's pool; everything but
the I/O is signed.py's."""

from __future__ import annotations

import time
from typing import Any

from . import shared, signed
from .endpoint import listening_check
from .http_pool import HTTPPool

# The routes of the engines, by connect arguments.
ROUTES: shared.Shared[signed.Route] = shared.Shared()


class HTTPTransport(signed.SignedTransport):
    """A connection's requests on its engine's pool."""

    def _exchange(self, headers: dict[str, str], payload: bytes) -> tuple[int, Any, bytes]:
        return self.route.pool.post(headers, payload)

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)


def transport(to: shared.Destination) -> HTTPTransport:
    """A connection's transport on its engine's route (made by its first connection, its pool
    closed after its last)."""
    key = to.key()

    route = ROUTES.take(key, lambda: signed.route(to, HTTPPool))

    def give_back() -> None:
        if ROUTES.give_back(key):
            route.pool.close()

    return HTTPTransport(route, give_back, listening_check(to.endpoint_url))
