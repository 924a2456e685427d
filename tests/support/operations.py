"""The requests a connection sends, counted at the driver's one door (``transport.send``), so
the count holds whatever the transport is."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def operations_sent(connection: Any) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """(operation, body) of every request the SQLAlchemy ``connection`` sends within the block."""
    transport = connection.connection.dbapi_connection.transport
    send = transport.send
    sent: list[tuple[str, dict[str, Any]]] = []

    def recording(operation: str, body: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        sent.append((operation, body))
        return send(operation, body, *args, **kwargs)

    transport.send = recording
    try:
        yield sent
    finally:
        del transport.send
