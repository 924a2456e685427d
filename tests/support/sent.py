"""The requests a driver connection sends, as its transport's observers see them (the same on
every transport): after each request, its operation, its body and DynamoDB's answer."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sa_dynamo.dbapi.transport import wire


def transport_of(connection: Any) -> Any:
    """The transport of a SQLAlchemy or DBAPI connection (or the transport itself)."""
    pooled = getattr(connection, "connection", None)
    connection = getattr(pooled, "dbapi_connection", connection)
    return getattr(connection, "transport", connection)


@contextmanager
def observed(connection: Any, keep: Callable[[str, dict[str, Any], Any], Any]) -> Iterator[list]:
    """``keep(operation, body, answer or error)`` of every request ``connection`` (a DBAPI
    connection or its transport) sends within the block (None: left out)."""
    sent: list = []

    def record(operation: str, body: dict[str, Any], answer: Any) -> None:
        kept = keep(operation, body, answer)
        if kept is not None:
            sent.append(kept)

    observers = transport_of(connection).observers
    observers.append(record)
    try:
        yield sent
    finally:
        observers.remove(record)


def requests_sent(connection: Any) -> Any:
    """(operation, body as DynamoDB's JSON) of every request sent within the block."""
    return observed(connection, lambda operation, body, _: (operation, wire.encode(body)))


def requests_built(connection: Any) -> Any:
    """(operation, body as the driver built it: a dict) of every request sent within the block."""
    return observed(connection, lambda operation, body, _: (operation, body))


def bodies_sent(connection: Any, operation: str | None = None) -> Any:
    """The JSON body of every request (of ``operation``, e.g. "ExecuteTransaction") sent
    within the block, as DynamoDB receives it (binary values as base64 text)."""
    return observed(
        connection, lambda sent, body, _: json.loads(wire.encode(body)) if operation in (None, sent) else None
    )


def operations_sent(connection: Any) -> Any:
    """The operation name of every request sent within the block."""
    return observed(connection, lambda operation, body, _: operation)
