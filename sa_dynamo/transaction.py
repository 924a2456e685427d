"""``run_transaction`` and ``run_async_transaction``: a unit of work retried when DynamoDB says it lost a race.

Optimistic concurrency means a transaction can fail because someone else wrote first: a version
check fails (StaleDataError) or DynamoDB cancels on a conflicting transaction. Both are safe to
retry from the start, since nothing of the failed attempt was written. The shape follows the
CockroachDB dialect's run_transaction.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

if TYPE_CHECKING:  # sqlalchemy.ext.asyncio needs greenlet, which only the async extra installs
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

T = TypeVar("T")

# Not TransactionInProgressException: that commit may still land, and a rerun would write twice.
_CONFLICT_CODES = ("TransactionConflict", "TransactionConflictException")


def is_retryable(error: BaseException) -> bool:
    """A lost race: a failed version check, or a transaction DynamoDB cancelled for a conflict."""
    if isinstance(error, StaleDataError):
        return True
    if isinstance(error, DBAPIError):
        original = error.orig
        codes = [getattr(original, "code", None)]
        codes += [r.get("Code") for r in getattr(original, "response", {}).get("CancellationReasons") or []]
        return any(code in _CONFLICT_CODES for code in codes)
    return False


def run_transaction(
    transactor: Engine | Connection | sessionmaker | Session,
    callback: Callable[[Any], T],
    max_retries: int = 10,
    max_backoff: float = 1.0,
) -> T:
    """Run ``callback`` in a transaction and commit; on a lost race, start again.

    ``callback`` gets a Session (for a sessionmaker or Session) or a Connection (for an Engine
    or Connection) and must not commit itself; it may run several times, so it should only
    talk to the database through what it is given. After ``max_retries`` retries the last
    error is raised.
    """
    attempt = 0
    while True:
        try:
            return _once(transactor, callback)
        except Exception as error:
            if attempt >= max_retries or not is_retryable(error):
                raise
        time.sleep(_backoff(attempt, max_backoff))
        attempt += 1


async def run_async_transaction(
    transactor: AsyncEngine | AsyncConnection | async_sessionmaker | AsyncSession,
    callback: Callable[[Any], Awaitable[T]],
    max_retries: int = 10,
    max_backoff: float = 1.0,
) -> T:
    """``run_transaction`` for asyncio: ``callback`` is a coroutine function, given an
    AsyncSession (for an async_sessionmaker or AsyncSession) or an AsyncConnection (for an
    AsyncEngine or AsyncConnection); the wait between attempts lets other tasks run."""
    attempt = 0
    while True:
        try:
            return await _once_async(transactor, callback)
        except Exception as error:
            if attempt >= max_retries or not is_retryable(error):
                raise
        await asyncio.sleep(_backoff(attempt, max_backoff))
        attempt += 1


def _backoff(attempt: int, max_backoff: float) -> float:
    """Full jitter: a random wait up to 10 ms doubled per attempt, capped at ``max_backoff``."""
    return random.uniform(0, min(max_backoff, 0.01 * 2**attempt))


async def _once_async(transactor: Any, callback: Callable[[Any], Awaitable[T]]) -> T:
    # SQLAlchemy 2.1 refuses to import its asyncio module without greenlet; 2.0 imports it and
    # fails at the first await, so greenlet is looked for first.
    if importlib.util.find_spec("greenlet") is None:
        raise ImportError(
            "run_async_transaction needs SQLAlchemy's asyncio support: pip install 'sa-dynamo[async]'"
        )
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

    if isinstance(transactor, async_sessionmaker):
        async with transactor() as session, session.begin():
            return await callback(session)
    if isinstance(transactor, AsyncSession):
        async with transactor.begin():
            result = await callback(transactor)
        return result
    if isinstance(transactor, AsyncEngine):
        async with transactor.begin() as connection:
            return await callback(connection)
    if isinstance(transactor, AsyncConnection):
        async with transactor.begin():
            return await callback(transactor)
    raise TypeError(
        "run_async_transaction needs an AsyncEngine, AsyncConnection, async_sessionmaker or "
        f"AsyncSession, not {type(transactor).__name__} (run_transaction takes the sync ones)"
    )


def _once(transactor: Any, callback: Callable[[Any], T]) -> T:
    if isinstance(transactor, sessionmaker):
        with transactor() as session, session.begin():
            return callback(session)
    if isinstance(transactor, Session):
        with transactor.begin():
            result = callback(transactor)
        return result
    if isinstance(transactor, Engine):
        with transactor.begin() as connection:
            return callback(connection)
    if isinstance(transactor, Connection):
        with transactor.begin():
            return callback(transactor)
    raise TypeError(
        f"run_transaction needs an Engine, Connection, sessionmaker or Session, not {type(transactor).__name__}"
    )
