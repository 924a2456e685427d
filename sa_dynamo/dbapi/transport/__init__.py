"""The driver's one door to DynamoDB: ``send(operation, body)`` returns the answer.

Everything above it (the cursor, paging, batches, the transaction buffer, the control plane)
reaches DynamoDB through a Transport and nothing else, so that how a request travels is one
room's business: botocore's client for the sync driver (botocore.py), the same on aiobotocore
with each call awaited for asyncio (aiobotocore.py).
"""

from __future__ import annotations

from typing import Any, Protocol

# Marks an answer whose Items are DynamoDB's JSON (binary values as base64 text): read them
# with ``values.deserialize_wire``, else with ``values.deserialize``.
WIRE_ITEMS = "sa_dynamo:wire_items"


class Transport(Protocol):
    """What the driver needs of the way to DynamoDB."""

    # Where the requests go, as a message says it: "in region us-east-1 at http://...".
    where: str
    # Whether the server returns the pages of a read ordered by its sort key descending in that
    # order (DynamoDB does, DynamoDB Local does not): None until a read tells (paging.py).
    descending_pages: bool | None

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
