"""The async driver under pytest: one event loop for the session, ``async def`` tests run on it,
and synchronous tests run against the async driver.

A test that depends on the ``driver`` fixture (tests/orm's engine, tests/dbapi/test_transactions.py's
connections) runs once per driver; on the asyncio one its engine is an AsyncEngine's
``sync_engine`` (its transport the driver's own, or aiobotocore's with SA_DYNAMO_TRANSPORT=botocore), and
its whole protocol (fixtures, body, teardown) runs under SQLAlchemy's ``greenlet_spawn`` on the
session's loop, as ``AsyncSession.run_sync`` runs a function: each request of the driver is then
awaited on the loop. The same test bodies so cover both drivers, without a second copy.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Coroutine
from typing import Any

import pytest
from _pytest.runner import runtestprotocol
from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import create_async_engine

from sa_dynamo import dbapi
from sa_dynamo.dialect import aiobotocore
from sa_dynamo.sqlalchemy_private import await_, greenlet_spawn, in_greenlet

DRIVERS = ("sync", "asyncio")

_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The session's event loop: an async engine's pooled connections belong to one loop."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
    return _loop


def settle(awaitable: Coroutine[Any, Any, Any]) -> Any:
    """Run ``awaitable`` to its end from synchronous code: under greenlet_spawn, on the running
    loop; else on the session's loop."""
    if in_greenlet():
        return await_(awaitable)
    return loop().run_until_complete(awaitable)


def engine_for(driver: str, endpoint_url: str, **options: Any) -> Any:
    """An engine on the session's DynamoDB Local through ``driver``: a plain Engine, or the
    ``sync_engine`` of an AsyncEngine (usable under greenlet_spawn only)."""
    host = endpoint_url.removeprefix("http://")
    if driver == "sync":
        return create_engine(f"dynamodb://{host}", **options)
    return create_async_engine(f"dynamodb+asyncio://{host}", **options).sync_engine


def connect_for(driver: str, endpoint_url: str, **options: Any) -> dbapi.Connection:
    """A driver connection on the session's DynamoDB Local through ``driver``: the sync one, or
    the asyncio one (under greenlet_spawn only)."""
    if driver == "sync":
        return dbapi.connect(endpoint_url=endpoint_url, **options)
    return aiobotocore.connect(endpoint_url=endpoint_url, **options)


def dispose(engine: Any) -> None:
    if engine.dialect.is_async:
        settle(greenlet_spawn(engine.dispose))
    else:
        engine.dispose()


@pytest.fixture(scope="module", params=DRIVERS)
def driver(request: pytest.FixtureRequest) -> str:
    """The driver a module's tests run on, each in turn: a fixture that builds an engine or a
    client on ``driver`` makes the tests that use it run on both."""
    return request.param


def _on_async_driver(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("driver") == "asyncio"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if not _on_async_driver(item):
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    loop().run_until_complete(greenlet_spawn(runtestprotocol, item, nextitem=nextitem))
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """``async def`` tests, run on the session's loop (no plugin needed)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in inspect.signature(pyfuncitem.obj).parameters}
    loop().run_until_complete(pyfuncitem.obj(**arguments))
    return True
