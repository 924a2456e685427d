"""``dynamodb+asyncio://``, ``dynamodb+aiolocal://`` and ``dynamodb+aiobotocore://``: the dialects
for ``create_async_engine`` (which also takes ``dynamodb://`` and ``dynamodb+local://`` for the
first two).

The same dialect as ``dynamodb://`` and ``dynamodb+local://`` (URL, options, compiler, reflection),
on the same driver with its requests sent on its own asyncio connections
(dbapi/transport/asyncio_http.py; with ``?transport=botocore``, and always on
``dynamodb+aiobotocore://``, by aiobotocore: dbapi/transport/aiobotocore.py) and awaited under
SQLAlchemy's greenlet bridge; what is adapted here is what SQLAlchemy's own async dialects adapt
(aiosqlite, asyncpg): the connection, the cursors and the pool.
"""

from __future__ import annotations

import asyncio
import os
import types
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import pool
from sqlalchemy.engine import AdaptedConnection
from sqlalchemy.exc import ArgumentError

from .. import dbapi, local_server
from ..dbapi import Connection
from ..dbapi.transport import chosen
from ..dbapi.transport.shared import Destination
from ..sqlalchemy_private import await_, in_greenlet
from .base import DynamoDBDialect
from .execution import DynamoDBExecutionContext
from .local import DynamoDBLocalDialect


async def _nothing() -> None:
    pass


@contextmanager
def awaiting(connection: Connection) -> Iterator[None]:
    """Await at least once within the block. SQLAlchemy's AsyncConnection.execute() insists that
    a statement awaits (else AwaitRequired: "not an async driver"); a write held for commit, an
    explain() or an answer known without asking sends nothing."""
    transport = connection.transport
    before = transport.awaited
    yield
    if transport.awaited == before:
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
        return self._buffered()

    def computed(self, names: Sequence[str] | None, rows: list[tuple], rowcount: int = -1) -> BufferedCursor:
        """A result computed on the client (a join, GROUP BY), held like one read from DynamoDB."""
        self._cursor.computed(names, rows, rowcount)
        return self._buffered()

    def _buffered(self) -> BufferedCursor:
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
    """The driver's Connection over an asyncio transport; ``driver_connection`` (SQLAlchemy's
    ``AdaptedConnection``) is the aiobotocore client with ``transport=botocore``, else the
    transport itself."""

    def __init__(self, transport: Any, **options: Any):
        Connection.__init__(self, transport, **options)
        client = getattr(transport, "client", None)
        self._connection = transport if client is None else client.aio_client

    def cursor(self, server_side: bool = False) -> Any:  # type: ignore[override]
        cursor = Connection.cursor(self)
        return cursor if server_side else BufferedCursor(cursor)


def connect(
    endpoint_url: str | None = None,
    region_name: str | None = None,
    profile_name: str | None = None,
    autocommit: bool = False,
    client_config: dict[str, Any] | None = None,
    hide_parameters: bool = False,
    transport: str | None = None,
    **credentials: Any,
) -> AsyncAdaptedConnection:
    """``sa_dynamo.dbapi.connect`` for asyncio: the same arguments, credential chain, region,
    retries and endpoint settings, on the driver's own asyncio connections (or aiobotocore's,
    ``transport="botocore"``)."""
    if chosen(transport) == "botocore":
        _need_aiobotocore()
        from ..dbapi.transport import aiobotocore as sending
    else:
        from ..dbapi.transport import asyncio_http as sending  # type: ignore[no-redef]
    to = Destination(endpoint_url, region_name, profile_name, client_config, credentials)
    made = sending.transport(to, await_, in_greenlet)
    return AsyncAdaptedConnection(made, autocommit=autocommit, hide_parameters=hide_parameters)


def _need_aiobotocore() -> None:
    try:
        import aiobotocore  # noqa: F401
    except ImportError:
        raise ImportError(
            "transport=botocore under asyncio sends on aiobotocore: pip install 'sa-dynamo[async]', "
            "or leave transport unset for the driver's own asyncio connections"
        ) from None


def adapted_dbapi() -> types.ModuleType:
    """The driver's module with ``connect`` for asyncio: what the async dialects load. Only
    ``transport=botocore`` needs aiobotocore, so loading it does not."""
    module = types.ModuleType(f"{__name__}.dbapi", adapted_dbapi.__doc__)
    module.__dict__.update({name: getattr(dbapi, name) for name in dbapi.__all__})
    module.connect = connect
    return module


class AsyncExecutionContext(DynamoDBExecutionContext):
    def create_server_side_cursor(self) -> Any:
        """``stream()`` and ``yield_per``: the driver's cursor, reading page by page."""
        return self._dbapi_connection.cursor(server_side=True)


class _OnAsyncio:
    """What an async dialect changes of the synchronous one."""

    is_async = True
    supports_server_side_cursors = True
    execution_ctx_cls = AsyncExecutionContext

    @classmethod
    def import_dbapi(cls) -> Any:
        return adapted_dbapi()

    @classmethod
    def get_async_dialect_cls(cls, url: Any) -> type:
        return cls

    @classmethod
    def get_pool_class(cls, url: Any) -> type[pool.Pool]:
        return pool.AsyncAdaptedQueuePool

    def get_driver_connection(self, connection: Any) -> Any:
        return connection.driver_connection

    def do_execute(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        with awaiting(cursor.connection):
            super().do_execute(cursor, statement, parameters, context)  # type: ignore[misc]

    def do_executemany(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        with awaiting(cursor.connection):
            super().do_executemany(cursor, statement, parameters, context)  # type: ignore[misc]


class AsyncDynamoDBDialect(_OnAsyncio, DynamoDBDialect):
    """``create_async_engine("dynamodb+asyncio://...")`` (or ``"dynamodb://..."``): ``dynamodb://``'s
    URL on the driver's own asyncio connections (``?transport=botocore``: aiobotocore's)."""

    driver = "asyncio"
    supports_statement_cache = True


class AiobotocoreDynamoDBDialect(AsyncDynamoDBDialect):
    """``create_async_engine("dynamodb+aiobotocore://...")``: ``dynamodb://``'s URL, every request
    sent by aiobotocore (for the tracing libraries and test doubles that live in botocore)."""

    driver = "aiobotocore"
    supports_statement_cache = True

    def create_connect_args(self, url: Any) -> tuple[list, dict[str, Any]]:
        if url.query.get("transport", "botocore") != "botocore":
            raise ArgumentError(
                "dynamodb+aiobotocore:// sends through aiobotocore: drop ?transport=, or write "
                "dynamodb+asyncio:// for the driver's own asyncio connections"
            )
        args, kwargs = super().create_connect_args(url)
        return args, {**kwargs, "transport": "botocore"}


class AsyncDynamoDBLocalDialect(_OnAsyncio, DynamoDBLocalDialect):
    """``create_async_engine("dynamodb+aiolocal://")`` (or ``"dynamodb+local://"``): the embedded
    DynamoDB Local (``?data_dir=``), on the driver's own asyncio connections."""

    driver = "aiolocal"
    supports_statement_cache = True

    def connect(self, *cargs: Any, local_data_dir: str | None = None, **cparams: Any) -> Any:
        """The first connect starts the server in a worker thread (Java starts in seconds), so
        the event loop serves other tasks meanwhile; later ones find it running."""
        if local_data_dir not in self._servers and os.environ.get(local_server.ENV_ENDPOINT) is None:
            await_(asyncio.to_thread(self.local_endpoint, local_data_dir))
        return super().connect(*cargs, local_data_dir=local_data_dir, **cparams)
