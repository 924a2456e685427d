"""The requests DynamoDB receives, as it receives them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def _recorded(client: Any, keep: Callable[[str, bytes], Any]) -> Iterator[list]:
    """``keep(operation, body)`` of every request sent through ``client`` within the block
    (None: left out), taken from botocore's public ``before-send`` event as it goes out."""
    sent: list = []

    def record(request: Any, **_: Any) -> None:
        kept = keep(request.headers["X-Amz-Target"].decode().rpartition(".")[2], bytes(request.body))
        if kept is not None:
            sent.append(kept)

    client.meta.events.register("before-send.dynamodb", record)
    try:
        yield sent
    finally:
        client.meta.events.unregister("before-send.dynamodb", record)


def requests_sent(client: Any) -> Any:
    """(operation, body bytes) of every request sent through ``client`` within the block."""
    return _recorded(client, lambda operation, body: (operation, body))


def bodies_sent(client: Any, operation: str | None = None) -> Any:
    """The JSON body of every request (of ``operation``, e.g. "ExecuteTransaction") sent
    through ``client`` within the block. Hooks that run before botocore serializes
    (``provide-client-params``) see the driver's stand-in on its own clients, with its statement
    and item lists empty (wire.py)."""
    return _recorded(client, lambda sent, body: json.loads(body) if operation in (None, sent) else None)
