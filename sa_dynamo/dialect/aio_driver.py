"""The driver on aiobotocore, adapted the way SQLAlchemy's own async drivers are (aiosqlite,
asyncpg): each request's coroutine is awaited under SQLAlchemy's greenlet bridge, so the one
synchronous driver (paging, batching, the transaction buffer, validation, error mapping) runs
unchanged and only the I/O is asynchronous.

Everything here runs inside ``greenlet_spawn`` (an AsyncEngine puts it there); called outside,
``await_`` raises SQLAlchemy's MissingGreenlet.
"""

from __future__ import annotations

import asyncio
import inspect
import types
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy.engine import AdaptedConnection

from .. import dbapi
from ..dbapi import Connection, loopback_defaults, translate
from ..sqlalchemy_private import await_, in_greenlet


class AwaitedClient:
    """An aiobotocore DynamoDB client called like boto3's: ``client.execute_statement(**body)``
    returns the response, its coroutine awaited by the event loop. ``meta`` is the client's
    own, so botocore's events (the driver's DynamoDB-JSON fast path among them) fire as with
    boto3; aiobotocore emits them too."""

    def __init__(self, client: Any):
        self.aio_client = client
        self.meta = client.meta
        self.awaited = 0  # requests awaited so far
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
            return await_(result)

        return call

    def close(self) -> None:
        """Close the client's HTTP session. Outside a greenlet (a connection garbage-collected
        without being returned to the pool) nothing can be awaited: the session is left to the
        garbage collector, and aiohttp warns of it (dispose the engine to avoid that)."""
        if not self._closed and in_greenlet():
            self._closed = True
            await_(self.aio_client.close())


def pause(seconds: float) -> None:
    """The driver's pause (a batch's backoff, a table change's polls) as the event loop's: the
    loop runs other tasks meanwhile, where ``time.sleep`` would freeze them all."""
    await_(asyncio.sleep(seconds))


async def _nothing() -> None:
    pass


@contextmanager
def awaiting(client: AwaitedClient) -> Iterator[None]:
    """Await at least once within the block. SQLAlchemy's AsyncConnection.execute() insists that
    a statement awaits (else AwaitRequired: "not an async driver"); a write held for commit, an
    explain() or an answer known without asking sends nothing."""
    before = client.awaited
    yield
    if client.awaited == before:
        await_(_nothing())


class BufferedCursor:
    """The driver's cursor, its rows read while ``execute()`` runs: SQLAlchemy hands a result of
    ``AsyncConnection.execute()`` / ``AsyncSession.execute()`` to code outside the greenlet,
    where no page can be fetched. ``stream()`` gets the driver's own cursor instead, which
    reads page by page as the result is consumed (see ``AsyncAdaptedConnection.cursor``)."""

    __slots__ = ("_cursor", "_rows")

    def __init__(self, cursor: Any):
        object.__setattr__(self, "_cursor", cursor)
        object.__setattr__(self, "_rows", deque())

    # The execution context sets the driver's extensions (page_size, max_rows, ...) on the cursor.
    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._cursor, name, value)

    def execute(self, operation: str, parameters: Sequence[Any] | None = None) -> BufferedCursor:
        self._cursor.execute(operation, parameters)
        if self._cursor.description is not None:
            object.__setattr__(self, "_rows", deque(self._cursor.fetchall()))
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Sequence[Any]]) -> BufferedCursor:
        self._cursor.executemany(operation, seq_of_parameters)
        return self

    def fetchone(self) -> tuple | None:
        return self._rows.popleft() if self._rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        size = self._cursor.arraysize if size is None else size
        return [self._rows.popleft() for _ in range(min(size, len(self._rows)))]

    def fetchall(self) -> list[tuple]:
        rows = list(self._rows)
        self._rows.clear()
        return rows

    def __iter__(self) -> Iterator[tuple]:
        while self._rows:
            yield self._rows.popleft()

    def close(self) -> None:
        self._rows.clear()
        self._cursor.close()

    async def _async_soft_close(self) -> None:
        """SQLAlchemy's hook before a buffered result leaves the greenlet: the rows are read."""


class AsyncAdaptedConnection(AdaptedConnection, Connection):
    """The driver's Connection over an ``AwaitedClient``; ``driver_connection`` (SQLAlchemy's
    ``AdaptedConnection``) is the aiobotocore client."""

    def __init__(self, client: AwaitedClient, **options: Any):
        Connection.__init__(self, client, pause=pause, **options)
        self._connection = client.aio_client

    def cursor(self, server_side: bool = False) -> Any:  # type: ignore[override]
        cursor = Connection.cursor(self)
        return cursor if server_side else BufferedCursor(cursor)

    def close(self) -> None:
        Connection.close(self)
        self.client.close()


def connect(
    endpoint_url: str | None = None,
    region_name: str | None = None,
    profile_name: str | None = None,
    autocommit: bool = False,
    client_config: dict[str, Any] | None = None,
    hide_parameters: bool = False,
    **credentials: Any,
) -> AsyncAdaptedConnection:
    """``sa_dynamo.dbapi.connect`` on aiobotocore: the same arguments, credential chain,
    region, retries and endpoint settings (aiobotocore is botocore's own configuration), and
    the same lean client (``dbapi.lean_client_config``)."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    try:
        session = AioSession(profile=profile_name)
        options = {**dbapi.lean_client_config(session), **(client_config or {})}
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
    return AsyncAdaptedConnection(
        AwaitedClient(client),
        autocommit=autocommit,
        hide_parameters=hide_parameters,
        encode_bodies=not options["parameter_validation"],
        first_request=dbapi.listening_check(endpoint_url),
    )


def adapted_dbapi() -> types.ModuleType:
    """The driver's module with ``connect`` on aiobotocore: what the async dialects load."""
    try:
        import aiobotocore  # noqa: F401
    except ImportError:
        raise ImportError(
            "dynamodb+aiobotocore:// and dynamodb+aiolocal:// need aiobotocore: pip install 'sa-dynamo[async]'"
        ) from None
    module = types.ModuleType(f"{__name__}.dbapi", adapted_dbapi.__doc__)
    module.__dict__.update({name: getattr(dbapi, name) for name in dbapi.__all__})
    module.connect = connect
    return module
