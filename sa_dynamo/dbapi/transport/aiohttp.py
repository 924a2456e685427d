"""The default transport for asyncio: http.py's requests on an aiohttp session (one per engine and
event loop, its connector sized like the engine's pool), each awaited by the event loop.

The driver is synchronous code (paging, batching, the transaction buffer, validation, retries);
under asyncio it runs inside a bridge that lets synchronous code await, such as SQLAlchemy's
greenlet bridge, which the caller hands in as ``await_`` (this driver imports no SQLAlchemy).
Only the I/O differs from the sync transport: signing, retries, errors and answers are
signed.py's. What could block the event loop runs in a worker thread instead: building the
engine's route (the botocore session, the credential chain) and refreshing credentials.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from botocore.credentials import RefreshableCredentials
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

from . import shared, signed
from .endpoint import listening_check

Await = Callable[[Awaitable[Any]], Any]  # the awaitable's result, awaited by the running loop

# The routes of the engines, by connect arguments and event loop (an aiohttp session serves one loop).
ROUTES: shared.Shared[signed.Route] = shared.Shared()


class AiohttpTransport(signed.SignedTransport):
    """A connection's requests on its engine's aiohttp session; ``awaited`` counts the awaits."""

    def __init__(self, route: signed.Route, give_back: Any, await_: Await, first_request: Any = None):
        super().__init__(route, give_back, first_request)
        self.awaited = 0
        self._await = await_
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=route.connect_timeout, sock_read=route.read_timeout
        )

    def _exchange(self, headers: dict[str, str], payload: bytes) -> tuple[int, Any, bytes]:
        self.awaited += 1
        return self._await(self._post(headers, payload))

    async def _post(self, headers: dict[str, str], payload: bytes) -> tuple[int, Any, bytes]:
        route = self.route
        headers["Accept-Encoding"] = "identity"  # x-amz-crc32 is the checksum of the body as sent
        try:
            async with _session(route).post(
                route.url, data=payload, headers=headers, proxy=route.proxy, timeout=self._timeout
            ) as answer:
                return answer.status, answer.headers, await answer.read()
        # botocore's exceptions for the same failures, as http.py raises them
        except aiohttp.ClientProxyConnectionError as exc:
            raise ProxyConnectionError(proxy_url=mask_proxy_url(route.proxy), error=exc) from None
        except aiohttp.ClientSSLError as exc:
            raise SSLError(endpoint_url=route.url, error=exc) from None
        except aiohttp.ClientConnectorError as exc:
            raise EndpointConnectionError(endpoint_url=route.url, error=exc) from None
        except aiohttp.ConnectionTimeoutError as exc:
            raise ConnectTimeoutError(endpoint_url=route.url, error=exc) from None
        except (aiohttp.ServerTimeoutError, asyncio.TimeoutError) as exc:
            raise ReadTimeoutError(endpoint_url=route.url, error=exc) from None
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientOSError) as exc:
            raise ConnectionClosedError(error=exc, endpoint_url=route.url) from None
        except aiohttp.ClientError as exc:
            raise HTTPClientError(error=exc) from None

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


def _session(route: signed.Route) -> aiohttp.ClientSession:
    """The route's aiohttp session, made on first use (on the loop that runs it)."""
    if route.pool is None:
        context: ssl.SSLContext | bool = False
        if urlsplit(route.endpoint_url).scheme == "https":
            context = ssl.create_default_context(cafile=route.ca_bundle or None)
        route.pool = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=route.pool_size, ssl=context),
            auto_decompress=False,
        )
    return route.pool


def transport(to: shared.Destination, await_: Await, can_await: Callable[[], bool]) -> AiohttpTransport:
    """A connection's transport on its engine's route for the running event loop: made (in a
    worker thread) by its first connection, its aiohttp session closed after its last."""
    key = to.key(asyncio.get_running_loop())
    route = ROUTES.find(key)
    if route is None:
        route = await_(asyncio.to_thread(ROUTES.take, key, lambda: signed.route(to)))

    def give_back() -> None:
        if ROUTES.give_back(key) and route.pool is not None:
            session, route.pool = route.pool, None
            if can_await():  # else (a connection garbage-collected) aiohttp warns of it
                await_(session.close())

    return AiohttpTransport(route, give_back, await_, listening_check(to.endpoint_url))
