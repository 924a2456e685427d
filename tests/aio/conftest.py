"""Fixtures for the async dialect: AsyncEngines on the session's DynamoDB Local, and the
requests their connections send, counted by operation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from support.aio import settle


@pytest.fixture(scope="session")
def aio_url(endpoint_url: str) -> str:
    return f"dynamodb+asyncio://{endpoint_url.removeprefix('http://')}"


@pytest.fixture
def make_aio_engine(aio_url: str) -> Iterator:
    """``make_aio_engine(**options)``: an AsyncEngine on the session's server, disposed afterwards."""
    made: list[AsyncEngine] = []

    def make(url: str = aio_url, **options) -> AsyncEngine:
        made.append(create_async_engine(url, **options))
        return made[-1]

    yield make
    for engine in made:
        settle(engine.dispose())


@pytest.fixture
def aio_engine(make_aio_engine) -> AsyncEngine:
    return make_aio_engine()


@pytest.fixture
def calls(aio_engine: AsyncEngine) -> Counter:
    """Every request ``aio_engine``'s connections send, by DynamoDB operation."""
    counts: Counter = Counter()

    def record(operation, body, answer):
        counts[operation] += 1

    @event.listens_for(aio_engine.sync_engine, "connect")
    def watch(dbapi_connection, connection_record):
        dbapi_connection.transport.observers.append(record)

    return counts
