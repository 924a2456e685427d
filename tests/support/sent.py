"""The requests DynamoDB receives, as it receives them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def bodies_sent(client: Any, operation: str | None = None) -> Iterator[list[dict]]:
    """The JSON body of every request (of ``operation``, e.g. "ExecuteTransaction") sent
    through ``client`` within the block, taken from botocore's public ``before-send`` event.
    Hooks that run before botocore serializes (``provide-client-params``) see the driver's
    stand-in on its own clients, with its statement and item lists empty (wire.py)."""
    sent: list[dict] = []

    def record(request: Any, **_: Any) -> None:
        if operation is None or request.headers["X-Amz-Target"].decode().endswith(f".{operation}"):
            sent.append(json.loads(bytes(request.body)))

    client.meta.events.register("before-send.dynamodb", record)
    try:
        yield sent
    finally:
        client.meta.events.unregister("before-send.dynamodb", record)
