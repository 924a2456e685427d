"""``transport="botocore"`` for asyncio: botocore.py's transport on an aiobotocore client, each
request's coroutine awaited.

The driver is synchronous code (paging, batching, the transaction buffer, validation, error
mapping); under asyncio it runs inside a bridge that lets synchronous code await, such as
SQLAlchemy's greenlet bridge, which the caller hands in as ``await_`` (this driver imports no
SQLAlchemy). Only the I/O differs from the sync transport: the same requests, the same botocore
configuration, credential chain, retries and errors. The connections of an engine share one
client per event loop (an aiohttp session serves one loop), made from the process's
aiobotocore session (shared.py).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import translate
from . import shared
from .botocore import BotocoreTransport, lean_client_config
from .endpoint import listening_check, loopback_defaults

Await = Callable[[Awaitable[Any]], Any]  # the awaitable's result, awaited by the running loop

# The aiobotocore clients of the engines, by connect arguments and event loop.
CLIENTS: shared.Shared[tuple[Any, bool]] = shared.Shared()


class AwaitedClient:
    """An aiobotocore DynamoDB client called like boto3's: ``client.execute_statement(**body)``
    returns the response, its coroutine awaited by the event loop. ``meta`` is the client's
    own, so botocore's events (the driver's DynamoDB-JSON fast path among them) fire as with
    boto3; aiobotocore emits them too."""

    def __init__(self, client: Any, await_: Await):
        self.aio_client = client
        self.meta = client.meta
        self._await = await_

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.aio_client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attribute(*args, **kwargs)
            return self._await(result) if inspect.isawaitable(result) else result

        return call


class AiobotocoreTransport(BotocoreTransport):
    """BotocoreTransport on an AwaitedClient; ``awaited`` counts the awaits."""

    def __init__(self, client: AwaitedClient, await_: Await, **options: Any):
        super().__init__(client, pause=self._pause, **options)
        self.awaited = 0
        self._await = await_

    def _request(self, operation: str, body: dict[str, Any], wire: bool) -> dict[str, Any]:
        self.awaited += 1
        return super()._request(operation, body, wire)

    def _pause(self, seconds: float) -> None:
        self.awaited += 1
        self._await(asyncio.sleep(seconds))


def _client(to: shared.Destination, await_: Await) -> tuple[AwaitedClient, bool]:
    """A new aiobotocore client: ``botocore.client``'s arguments, credential chain, region,
    retries and lean configuration; and whether it validates parameters."""
    from aiobotocore.config import AioConfig

    session = shared.session(to.profile_name, aio=True).main
    try:
        options = {**lean_client_config(session), **(to.client_config or {})}
        region_name, credentials = loopback_defaults(
            to.endpoint_url,
            to.region_name or session.get_config_variable("region"),
            to.credentials,
            lambda: await_(session.get_credentials()),
        )
        creating = session.create_client(
            "dynamodb",
            endpoint_url=to.endpoint_url,
            region_name=region_name,
            config=AioConfig(**options),
            **credentials,
        )
        client = await_(creating.__aenter__())
    except Exception as exc:  # e.g. NoRegionError: a PEP 249 error that says what to configure
        raise translate(exc) from None
    return AwaitedClient(client, await_), options["parameter_validation"]


def transport(to: shared.Destination, await_: Await, can_await: Callable[[], bool]) -> AiobotocoreTransport:
    """A connection's transport on its engine's aiobotocore client for the running event loop:
    made by its first connection, closed after its last (when the loop can still await: a
    connection garbage-collected without being closed leaves the client to the garbage
    collector, and aiohttp warns of it; dispose the engine to avoid that)."""
    key = to.key(asyncio.get_running_loop())
    found = CLIENTS.find(key)
    if found is None:
        made = _client(to, await_)
        found = CLIENTS.put(key, made)
        if found is not made:  # another connection made one meanwhile
            await_(made[0].aio_client.close())
    client, validating = found

    def close() -> None:
        if CLIENTS.give_back(key) and can_await():
            await_(client.aio_client.close())

    return AiobotocoreTransport(
        client,
        await_,
        encode_bodies=not validating,
        first_request=listening_check(to.endpoint_url),
        close=close,
    )
