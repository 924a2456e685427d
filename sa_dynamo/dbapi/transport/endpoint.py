"""Where requests go: what an endpoint on this machine (DynamoDB Local) gets that AWS does not.

DynamoDB Local accepts any credentials and serves any region, so an endpoint on this machine
gets placeholders when none are configured; and nothing listening there is said at once, where
an HTTP client would retry a refused connection for half a minute.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from ..errors import OperationalError

# DynamoDB Local accepts any key made of letters and digits only.
LOCAL_CREDENTIALS = {"aws_access_key_id": "sadynamolocal", "aws_secret_access_key": "sadynamolocal"}
LOCAL_REGION = "us-east-1"


def is_loopback(endpoint_url: str | None) -> bool:
    """True for an endpoint on this machine (DynamoDB Local), where any credentials are accepted."""
    if not endpoint_url:
        return False
    host = urlparse(endpoint_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_defaults(
    endpoint_url: str | None,
    region_name: str | None,
    credentials: dict[str, Any],
    configured_credentials: Callable[[], Any],
) -> tuple[str | None, dict[str, Any]]:
    """The region and credentials a client gets: on a loopback endpoint (DynamoDB Local), a
    region and placeholder credentials when none are given or configured
    (``configured_credentials``: the credential chain's, None when it finds none)."""
    if is_loopback(endpoint_url):
        region_name = region_name or LOCAL_REGION
        if not credentials and configured_credentials() is None:
            credentials = dict(LOCAL_CREDENTIALS)
    return region_name, credentials


def listening_check(endpoint_url: str | None) -> Callable[[], None] | None:
    """What a transport runs before its first request to a loopback endpoint: fail at once when
    nothing listens there. Connecting itself sends nothing (``sa-dynamo explain --models``
    needs no server at all)."""
    if not is_loopback(endpoint_url):
        return None
    return lambda: _check_listening(endpoint_url)


def _check_listening(endpoint_url: str) -> None:
    address = urlparse(endpoint_url)
    port = address.port or (443 if address.scheme == "https" else 80)
    try:
        socket.create_connection((address.hostname, port), timeout=2).close()
    except ConnectionRefusedError:
        raise OperationalError(
            f"nothing is listening on {address.hostname}:{port}: start DynamoDB Local there "
            f"(sa-dynamo local start --port {port}), or use dynamodb+local:// for an embedded one"
        ) from None
    except OSError:  # a firewall or a slow start: the transport's retries and message apply
        pass
