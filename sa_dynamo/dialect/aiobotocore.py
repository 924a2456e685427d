"""``dynamodb+aiobotocore://`` and ``dynamodb+aiolocal://``: the dialect for ``create_async_engine``.

The same dialect as ``dynamodb://`` and ``dynamodb+local://`` (URL, options, compiler, reflection),
on the driver adapted to aiobotocore (aio_driver.py); only the pool and the cursors differ, as
in SQLAlchemy's own async dialects.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from sqlalchemy import pool

from .. import local_server
from ..sqlalchemy_private import await_
from . import aio_driver
from .base import DynamoDBDialect
from .execution import DynamoDBExecutionContext
from .local import DynamoDBLocalDialect


class AsyncExecutionContext(DynamoDBExecutionContext):
    def create_server_side_cursor(self) -> Any:
        """``stream()`` and ``yield_per``: the driver's cursor, reading page by page."""
        return self._dbapi_connection.cursor(server_side=True)


class _OnAiobotocore:
    """What an async dialect changes of the synchronous one."""

    is_async = True
    supports_server_side_cursors = True
    execution_ctx_cls = AsyncExecutionContext

    @classmethod
    def import_dbapi(cls) -> Any:
        return aio_driver.adapted_dbapi()

    @classmethod
    def get_pool_class(cls, url: Any) -> type[pool.Pool]:
        return pool.AsyncAdaptedQueuePool

    def get_driver_connection(self, connection: Any) -> Any:
        return connection.driver_connection

    def do_execute(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        with aio_driver.awaiting(cursor.connection.client):
            super().do_execute(cursor, statement, parameters, context)  # type: ignore[misc]

    def do_executemany(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        with aio_driver.awaiting(cursor.connection.client):
            super().do_executemany(cursor, statement, parameters, context)  # type: ignore[misc]


class AsyncDynamoDBDialect(_OnAiobotocore, DynamoDBDialect):
    """``create_async_engine("dynamodb+aiobotocore://...")``: ``dynamodb://``'s URL on aiobotocore."""

    driver = "aiobotocore"
    supports_statement_cache = True


class AsyncDynamoDBLocalDialect(_OnAiobotocore, DynamoDBLocalDialect):
    """``create_async_engine("dynamodb+aiolocal://")``: the embedded DynamoDB Local (``?data_dir=``)."""

    driver = "aiolocal"
    supports_statement_cache = True

    def connect(self, *cargs: Any, local_data_dir: str | None = None, **cparams: Any) -> Any:
        """The first connect starts the server in a worker thread (Java starts in seconds), so
        the event loop serves other tasks meanwhile; later ones find it running."""
        if local_data_dir not in self._servers and os.environ.get(local_server.ENV_ENDPOINT) is None:
            await_(asyncio.to_thread(self.local_endpoint, local_data_dir))
        return super().connect(*cargs, local_data_dir=local_data_dir, **cparams)
