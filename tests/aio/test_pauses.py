"""The driver's waits do not freeze the event loop: while an async connection waits for DynamoDB
Local (an index still CREATING, a server still starting), other tasks keep running.

A ticker task counts the turns it gets while the wait is under way. A wait that blocked the loop's
thread (``time.sleep``, a blocking server start) would give it none: the ticker can only observe
the wait once it is over."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from sqlalchemy import Column, Index, MetaData, String, Table, event
from sqlalchemy.ext.asyncio import create_async_engine

from sa_dynamo import local_server
from sa_dynamo.dbapi import control_plane
from sa_dynamo.dialect.aiobotocore import AsyncDynamoDBLocalDialect


@contextlib.asynccontextmanager
async def ticker(waiting: Callable[[], bool]) -> AsyncIterator[list[int]]:
    """A task that ticks every few milliseconds; yields ``[turns taken while waiting() held]``."""
    turns = [0]

    async def tick() -> None:
        while True:
            turns[0] += waiting()
            await asyncio.sleep(0.005)

    task = asyncio.create_task(tick())
    try:
        yield turns
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_other_tasks_run_while_ddl_waits_for_an_index_to_become_active(make_aio_engine, table_name):
    """DynamoDB Local keeps a new GSI CREATING for a while (docs/partiql-findings.md), so CREATE
    INDEX polls DescribeTable with pauses between; the pauses are the event loop's."""
    engine = make_aio_engine()
    table = Table(table_name, MetaData(), Column("pk", String, primary_key=True), Column("g", String))
    pausing: list[float] = []
    paused: list[float] = []

    @event.listens_for(engine.sync_engine, "connect")
    def watch(dbapi_connection, connection_record):
        pause = dbapi_connection.transport.pause

        def watched(seconds: float) -> None:
            pausing.append(seconds)
            try:
                pause(seconds)
            finally:
                paused.append(pausing.pop())

        dbapi_connection.transport.pause = watched

    async with engine.begin() as conn:
        await conn.run_sync(table.create)
    try:
        async with ticker(lambda: bool(pausing)) as turns, engine.begin() as conn:
            await conn.run_sync(Index("by_g", table.c.g).create)
        async with engine.connect() as conn:
            described = await conn.run_sync(
                lambda sync: control_plane.describe_table(
                    sync.connection.dbapi_connection.transport, table_name
                )
            )
        assert [index["IndexStatus"] for index in described["GlobalSecondaryIndexes"]] == ["ACTIVE"]
        assert paused, "DynamoDB Local reported the index ACTIVE at once: nothing was waited for"
        assert turns[0] > 0
    finally:
        async with engine.begin() as conn:
            await conn.run_sync(table.drop)


async def test_the_first_aiolocal_connect_starts_the_server_off_the_event_loop(monkeypatch, tmp_path):
    """``dynamodb+aiolocal://`` starts its own DynamoDB Local (Java, seconds) in a worker thread."""
    monkeypatch.delenv(local_server.ENV_ENDPOINT, raising=False)
    data_dir = str(tmp_path)
    engine = create_async_engine(f"dynamodb+aiolocal://?data_dir={data_dir}")
    connecting = [False]
    try:
        async with ticker(
            lambda: connecting[0] and data_dir not in AsyncDynamoDBLocalDialect._servers
        ) as turns:
            connecting[0] = True
            async with engine.connect() as conn:
                names = await conn.run_sync(lambda sync: sync.dialect.get_table_names(sync))
        assert names == []
        assert turns[0] > 0
    finally:
        await engine.dispose()
        server = AsyncDynamoDBLocalDialect._servers.pop(data_dir, None)
        if server is not None:
            server.stop()
