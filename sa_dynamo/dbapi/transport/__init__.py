"""The driver's one door to DynamoDB: ``send(operation, body)`` returns the answer.

Everything above it (the cursor, paging, batches, the transaction buffer, the control plane)
reaches DynamoDB through a Transport and nothing else, so that how a request travels is one
room's business. The default sends DynamoDB's JSON API itself, signed as botocore's SigV4Auth
signs (sigv4.py), on keep-alive HTTP/1.1 connections of its own (http11.py): blocking sockets
(http.py, http_pool.py) or, for asyncio, asyncio protocols (asyncio_http.py, asyncio_pool.py),
the two sharing everything but the I/O (signed.py). ``transport="botocore"`` sends through
botocore's client instead (botocore.py), or aiobotocore's for asyncio (aiobotocore.py), for the
tracing libraries and test doubles that live in botocore. What the connections of one engine
share (one botocore session, one credential provider, endpoint and HTTP pool) is in shared.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import LOST_ANSWERS as LOST_ANSWERS  # set by the transports
from ..errors import InterfaceError

# Marks an answer whose Items are DynamoDB's JSON (binary values as base64 text): read them
# with ``values.deserialize_wire``, else with ``values.deserialize``.
WIRE_ITEMS = "sa_dynamo:wire_items"

# The transports a connection can send through: the driver's own HTTP (the default) or botocore.
TRANSPORTS = ("http", "botocore")
# Names the transport of every connection that does not name its own (e.g. botocore, to turn a
# tracing library on without changing code).
ENV_TRANSPORT = "SA_DYNAMO_TRANSPORT"

# Called after every ``send`` with the operation, the body as the driver gave it, and DynamoDB's
# answer (a dict) or the PEP 249 error the send raises.
Observer = Callable[[str, dict[str, Any], Any], None]


class Transport(Protocol):
    """What the driver needs of the way to DynamoDB."""

    # Where the requests go, as a message says it: "in region us-east-1 at http://...".
    where: str
    # Whether the server returns the pages of a read ordered by its sort key descending in that
    # order (DynamoDB does, DynamoDB Local does not): None until a read tells (paging.py).
    descending_pages: bool | None
    # Called after each send (``Observer``), in order; what tests and cost records watch,
    # the same on every transport. An observer's exception propagates from ``send``.
    observers: list[Observer]

    def send(self, operation: str, body: dict[str, Any], wire: bool = False) -> dict[str, Any]:
        """DynamoDB's answer to ``operation`` (its API name, "ExecuteStatement") with ``body``;
        a PEP 249 error (errors.py) naming the tables it is about when DynamoDB refuses. With
        ``wire``, an answer may carry its Items as DynamoDB's JSON (``WIRE_ITEMS``)."""
        ...

    def pause(self, seconds: float) -> None:
        """Wait (a batch's backoff, a table change's polls) as this transport's I/O waits: an
        event loop's must not block its loop."""
        ...

    def close(self) -> None: ...


def chosen(transport: str | None) -> str:
    """The transport a connection uses: the one it names, else ``SA_DYNAMO_TRANSPORT``'s, else
    "http"."""
    name = transport or os.environ.get(ENV_TRANSPORT) or TRANSPORTS[0]
    if name not in TRANSPORTS:
        source = "transport" if transport else ENV_TRANSPORT
        raise InterfaceError(f"{source} must be one of {', '.join(TRANSPORTS)}, not {name!r}")
    return name
