"""The transport on aiobotocore: botocore.py's, each request's coroutine awaited.

The driver is synchronous code (paging, batching, the transaction buffer, validation, error
mapping); under asyncio it runs inside a bridge that lets synchronous code await, such as
SQLAlchemy's greenlet bridge, which the caller hands in as ``await_`` (this driver imports no
SQLAlchemy). Only the I/O differs from the sync transport: the same requests, the same botocore
configuration, credential chain, retries and errors.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import translate
from .botocore import BotocoreTransport, lean_client_config
from .endpoint import listening_check, loopback_defaults

Await = Callable[[Awaitable[Any]], Any]  # the awaitable's result, awaited by the running loop


class AwaitedClient:
    """An aiobotocore DynamoDB client called like boto3's: ``client.execute_statement(**body)``
    returns the response, its coroutine awaited by the event loop. ``meta`` is the client's
    own, so botocore's events (the driver's DynamoDB-JSON fast path among them) fire as with
    boto3; aiobotocore emits them too."""

    def __init__(self, client: Any, await_: Await, can_await: Callable[[], bool]):
        self.aio_client = client
        self.meta = client.meta
        self.awaited = 0  # requests awaited so far
        self._await = await_
        self._can_await = can_await
        self._closed = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.aio_client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attribute(*args, **kwargs)
            if not inspect.isawaitable(result):
                return result
            self.awaited += 1
            return self._await(result)

        return call

    def close(self) -> None:
        """Close the client's HTTP session. Where nothing can be awaited (a connection
        garbage-collected without being returned to the pool) the session is left to the garbage
        collector, and aiohttp warns of it (dispose the engine to avoid that)."""
        if not self._closed and self._can_await():
            self._closed = True
            self._await(self.aio_client.close())


def transport(
    endpoint_url: str | None,
    region_name: str | None,
    profile_name: str | None,
    client_config: dict[str, Any] | None,
    credentials: dict[str, Any],
    await_: Await,
    can_await: Callable[[], bool],
) -> BotocoreTransport:
    """The transport over a new aiobotocore client: ``botocore.client``'s arguments, credential
    chain, region, retries and lean configuration; its pauses let the event loop run."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    try:
        session = AioSession(profile=profile_name)
        options = {**lean_client_config(session), **(client_config or {})}
        region_name, credentials = loopback_defaults(
            endpoint_url,
            region_name or session.get_config_variable("region"),
            credentials,
            lambda: await_(session.get_credentials()),
        )
        creating = session.create_client(
            "dynamodb",
            endpoint_url=endpoint_url,
            region_name=region_name,
            config=AioConfig(**options),
            **credentials,
        )
        client = await_(creating.__aenter__())
    except Exception as exc:  # e.g. NoRegionError: a PEP 249 error that says what to configure
        raise translate(exc) from None
    return BotocoreTransport(
        AwaitedClient(client, await_, can_await),
        encode_bodies=not options["parameter_validation"],
        pause=lambda seconds: await_(asyncio.sleep(seconds)),
        first_request=listening_check(endpoint_url),
        owns_client=True,
    )
