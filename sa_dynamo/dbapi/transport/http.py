"""The driver's default transport: DynamoDB's JSON API on a urllib3 connection pool (keep-alive),
one pool per engine, sized like the engine's pool; everything but the I/O is signed.py's."""

from __future__ import annotations

import socket
import time
from typing import Any
from urllib.parse import urlsplit

import urllib3
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ProxyConnectionError,
    ReadTimeoutError,
    SSLError,
)
from botocore.httpsession import create_urllib3_context, mask_proxy_url
from urllib3.exceptions import ConnectTimeoutError as URLLib3ConnectTimeoutError
from urllib3.exceptions import HTTPError, NewConnectionError, ProtocolError, ProxyError
from urllib3.exceptions import ReadTimeoutError as URLLib3ReadTimeoutError
from urllib3.exceptions import SSLError as URLLib3SSLError

from . import shared, signed
from .endpoint import listening_check

# The routes of the engines, by connect arguments.
ROUTES: shared.Shared[signed.Route] = shared.Shared()


class HTTPTransport(signed.SignedTransport):
    """A connection's requests on its engine's urllib3 pool."""

    def __init__(self, route: signed.Route, give_back: Any, first_request: Any = None):
        super().__init__(route, give_back, first_request)
        # Through a proxy urllib3 wants the whole URL; to a pool of the endpoint's, the path.
        self._target = route.url if route.proxy else urlsplit(route.url).path
        self._timeout = urllib3.Timeout(connect=route.connect_timeout, read=route.read_timeout)

    def _exchange(self, headers: dict[str, str], payload: bytes) -> tuple[int, Any, bytes]:
        url = self.route.url
        try:
            answer = self.route.pool.urlopen(
                "POST",
                self._target,
                body=payload,
                headers=headers,
                retries=False,
                redirect=False,
                assert_same_host=False,
                timeout=self._timeout,
                preload_content=True,
                decode_content=False,
            )
        # botocore's exceptions for the same failures (botocore.httpsession.URLLib3Session.send)
        except URLLib3SSLError as exc:
            raise SSLError(endpoint_url=url, error=exc) from None
        except (NewConnectionError, socket.gaierror) as exc:
            raise EndpointConnectionError(endpoint_url=url, error=exc) from None
        except ProxyError as exc:
            raise ProxyConnectionError(proxy_url=mask_proxy_url(self.route.proxy), error=exc) from None
        except URLLib3ConnectTimeoutError as exc:
            raise ConnectTimeoutError(endpoint_url=url, error=exc) from None
        except URLLib3ReadTimeoutError as exc:
            raise ReadTimeoutError(endpoint_url=url, error=exc) from None
        except ProtocolError as exc:
            raise ConnectionClosedError(error=exc, endpoint_url=url) from None
        except (HTTPError, OSError) as exc:
            raise HTTPClientError(error=exc) from None
        return answer.status, answer.headers, answer.data

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)


def _pool(route: signed.Route) -> Any:
    """The engine's connection pool to its endpoint (through its proxy, if it has one): at most
    ``pool_size`` idle connections kept alive; more are opened when more are in use at once,
    and closed when given back, as the engine's own overflow connections are."""
    options: dict[str, Any] = {"maxsize": route.pool_size, "block": False}
    if urlsplit(route.endpoint_url).scheme == "https" or route.proxy:
        context = create_urllib3_context()
        if route.ca_bundle:
            context.load_verify_locations(route.ca_bundle)
        options.update(ssl_context=context, cert_reqs="CERT_REQUIRED", ca_certs=route.ca_bundle)
    if route.proxy:
        proxy = urllib3.util.parse_url(route.proxy)
        headers = urllib3.util.make_headers(proxy_basic_auth=proxy.auth) if proxy.auth else None
        return urllib3.ProxyManager(route.proxy, num_pools=1, proxy_headers=headers, **options)
    return urllib3.connection_from_url(route.endpoint_url, **options)


def transport(to: shared.Destination) -> HTTPTransport:
    """A connection's transport on its engine's route (made by its first connection, its pool
    closed after its last)."""
    key = to.key()

    def make() -> signed.Route:
        route = signed.route(to)
        route.pool = _pool(route)
        return route

    route = ROUTES.take(key, make)

    def give_back() -> None:
        if ROUTES.give_back(key):
            if isinstance(route.pool, urllib3.PoolManager):
                route.pool.clear()
            else:
                route.pool.close()

    return HTTPTransport(route, give_back, listening_check(to.endpoint_url))
