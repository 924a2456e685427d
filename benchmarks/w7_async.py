"""W7: asyncio. 1,000 point reads, then 32 reads of a 1,000-item partition, by 32 concurrent
tasks: AsyncSession and Core's AsyncConnection on dynamodb+asyncio (on the default transport, its own, and on
transport=botocore, aiobotocore), each with a pool of 32 connections, vs raw aiobotocore sending
the same PartiQL, vs aiodynamo (GetItem, Query), vs the raw-HTTP floor (floor.py's requests on
asyncio streams, ExecuteStatement and GetItem), and vs the sync engine doing the same reads
one after another. aiobotocore also sends the point reads as GetItem, the request aiodynamo
sends: DynamoDB Local spends more CPU on an ExecuteStatement than on a GetItem of the same item,
on the same two cores as the clients (docs/partiql-findings.md). Each row's note says, per run,
the CPU the client process and (when the run started it) DynamoDB Local spent, and what Python's
garbage collector did (issue 32): wall time on a shared machine is the scheduler's as much as
the client's.

Each runs three times: through the run's counting proxy to DynamoDB Local, which answers on
loopback in about half a millisecond, and through a counting proxy of its own that holds every
request for a stated round-trip time first, as a network between the client and DynamoDB does (single-digit milliseconds
within a region, tens across regions). Concurrency can only hide time spent waiting on the
network; the direct run measures the CPU each client spends, the delayed ones what asyncio buys
an application.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from sqlalchemy import create_engine, select
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from sqlalchemy.orm import Session

from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

from . import floor
from .common import BOTOCORE, DIALECT, REGION, Collections, Env, Result, collections, optional, process_cpu
from .counting_proxy import CountingProxy
from .models import items, orm_model

NAME = "W7 asyncio"
POINT = f"{NAME}: 1,000 point reads by 32 tasks"
PARTITION = f"{NAME}: 32 reads of a 1,000-item partition by 32 tasks"
TASKS = 32
# Round-trip times added to every request: none (DynamoDB Local directly), then a network's.
RTTS = (0.0, 0.005, 0.020)


def in_tasks(
    jobs: list[Any], job: Callable[[Any, Any], Awaitable[Any]], engine: Any = None, core: bool = False
) -> Callable[[], Awaitable[None]]:
    """The jobs shared out among TASKS concurrent tasks, each taking the next job when free;
    with an ``engine``, each task does its jobs in one AsyncSession (as the sync contender does
    all of them in one Session), or with ``core`` on one AsyncConnection, else ``job`` gets None."""

    async def run() -> None:
        queue = iter(jobs)

        async def worker() -> None:
            if engine is None:
                for each in queue:
                    await job(None, each)
                return
            if core:
                async with engine.connect() as connection:
                    for each in queue:
                        await job(connection, each)
                return
            async with AsyncSession(engine) as session:
                for each in queue:
                    await job(session, each)
                    session.expunge_all()  # a real read each time, not the identity map

        await asyncio.gather(*(worker() for _ in range(TASKS)))

    return run


@contextmanager
def contenders(
    endpoint_url: str, loop: asyncio.AbstractEventLoop
) -> Iterator[tuple[Any, dict[str, Any], Any]]:
    """On ``endpoint_url``: an aiobotocore client, AsyncEngines with TASKS pooled connections (by
    the suffix of their contenders' names: the default transport's and botocore's), and a sync
    Engine."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    config = AioConfig(max_pool_connections=TASKS)
    creating = AioSession().create_client(
        "dynamodb", endpoint_url=endpoint_url, region_name=REGION, config=config, **LOCAL_CREDENTIALS
    )
    client = loop.run_until_complete(creating.__aenter__())
    host = endpoint_url.removeprefix("http://")
    engines = {
        suffix: create_async_engine(f"dynamodb+asyncio://{host}{query}", pool_size=TASKS, max_overflow=0)
        for suffix, query in (("", "?transport=http"), (BOTOCORE, "?transport=botocore"))
    }
    sync_engine = create_engine(f"{DIALECT}://{host}?transport=http")

    async def open_pool(engine: Any) -> None:  # every pooled connection opened before timing
        connections = [await engine.connect() for _ in range(TASKS)]
        for connection in connections:
            await connection.close()

    for engine in engines.values():
        loop.run_until_complete(open_pool(engine))
    try:
        yield client, engines, sync_engine
    finally:
        sync_engine.dispose()
        for engine in engines.values():
            loop.run_until_complete(engine.dispose())
        loop.run_until_complete(creating.__aexit__(None, None, None))


class Spent:
    """What the runs of one contender spent: client CPU, DynamoDB Local's CPU (when known) and
    Python's garbage collections."""

    def __init__(self) -> None:
        self.runs, self.client, self.server, self.gc = 0, 0.0, 0.0, Collections()
        self.server_known = True

    def add(
        self, client: float, server_before: float | None, server_after: float | None, gc: Collections
    ) -> None:
        self.runs += 1
        self.client += client
        if server_before is None or server_after is None:
            self.server_known = False
        else:
            self.server += server_after - server_before
        self.gc.seconds += gc.seconds
        self.gc.full += gc.full

    def note(self) -> str:
        """Per run: client CPU, server CPU, GC time and full collections."""
        runs = self.runs
        server = f"server CPU {self.server * 1000 / runs:.0f} ms, " if self.server_known else ""
        return (
            f"client CPU {self.client * 1000 / runs:.0f} ms, {server}"
            f"GC {self.gc.seconds * 1000 / runs:.0f} ms, {self.gc.full / runs:.1f} full collections per run"
        )


def aiodynamo_table(endpoint_url: str, loop: asyncio.AbstractEventLoop, table: str) -> Any:
    """aiodynamo's table, or None without aiodynamo (the smoke test runs without it)."""
    if optional("aiodynamo") is None:
        return None
    import aiohttp
    from aiodynamo.client import Client
    from aiodynamo.credentials import Key, StaticCredentials
    from aiodynamo.http.aiohttp import AIOHTTP
    from yarl import URL

    async def make() -> Any:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=TASKS))
        key = Key(LOCAL_CREDENTIALS["aws_access_key_id"], LOCAL_CREDENTIALS["aws_secret_access_key"])
        client = Client(AIOHTTP(session), StaticCredentials(key), REGION, URL(endpoint_url))
        return session, client.table(table)

    return loop.run_until_complete(make())


@contextmanager
def counted_at(env: Env, rtt: float) -> Iterator[CountingProxy]:
    """The counting proxy to measure through at round-trip time ``rtt``: the run's for 0, else
    one of its own that holds each request ``rtt`` seconds before forwarding it."""
    if not rtt:
        yield env.proxy
        return
    with CountingProxy(env.server_url, delay=rtt) as proxy:
        yield proxy


def run(env: Env, size: int = 1000) -> None:
    table = env.table_name("w7")
    env.create_table(table)
    env.load(table, items("P", size))
    model = orm_model(table)
    for rtt in RTTS:
        with counted_at(env, rtt) as proxy:
            measure_at(env, proxy, f"({rtt * 1000:g} ms round trip)", model, size)


def measure_at(env: Env, proxy: CountingProxy, rtt: str, model: Any, size: int) -> None:
    """Every contender's reads of ``model``'s table through ``proxy``, as workloads named with
    ``rtt``."""
    endpoint_url = proxy.endpoint_url
    point_workload, partition_workload = f"{POINT} {rtt}", f"{PARTITION} {rtt}"
    table = model.__tablename__
    keys = [("P", f"{i:06}") for i in range(size)]
    queries = range(TASKS)
    columns = '"pk", "sk", "n", "name", "flag"'
    point = f'SELECT {columns} FROM "{table}" WHERE "pk" = ? AND "sk" = ?'
    partition = f'SELECT {columns} FROM "{table}" WHERE "pk" = ?'
    deserializer = TypeDeserializer()
    loop = asyncio.new_event_loop()
    aiodynamo = aiodynamo_table(endpoint_url, loop, table)
    bare = floor.AsyncFloor(endpoint_url, REGION)
    with contenders(endpoint_url, loop) as (client, engines, sync_engine):

        async def raw_point(_: None, key: tuple[str, str]) -> None:
            await client.execute_statement(Statement=point, Parameters=[{"S": key[0]}, {"S": key[1]}])

        async def raw_get_item(_: None, key: tuple[str, str]) -> None:
            await client.get_item(TableName=table, Key={"pk": {"S": key[0]}, "sk": {"S": key[1]}})

        async def floor_point(_: None, key: tuple[str, str]) -> None:
            await bare.acall(
                "ExecuteStatement", {"Statement": point, "Parameters": [{"S": key[0]}, {"S": key[1]}]}
            )

        async def floor_get_item(_: None, key: tuple[str, str]) -> None:
            await bare.acall(
                "GetItem", {"TableName": table, "Key": {"pk": {"S": key[0]}, "sk": {"S": key[1]}}}
            )

        async def raw_partition(_: None, __: int) -> None:
            request: dict[str, Any] = {"Statement": partition, "Parameters": [{"S": "P"}]}
            while True:
                page = await client.execute_statement(**request)
                [{k: deserializer.deserialize(v) for k, v in item.items()} for item in page["Items"]]
                if "NextToken" not in page:
                    return
                request["NextToken"] = page["NextToken"]

        async def session_get(session: AsyncSession, key: tuple[str, str]) -> None:
            await session.get(model, key)

        key_columns = model.__table__.c

        async def core_one(connection: Any, key: tuple[str, str]) -> None:
            where = (key_columns.pk == key[0], key_columns.sk == key[1])
            (await connection.execute(select(model.__table__).where(*where))).one()

        async def session_select(session: AsyncSession, _: int) -> None:
            (await session.scalars(select(model).where(model.pk == "P"))).all()

        def sync_gets() -> None:
            with Session(sync_engine) as session:
                for key in keys:
                    session.get(model, key)
                    session.expunge_all()

        def sync_selects() -> None:
            with Session(sync_engine) as session:
                for _ in queries:
                    session.scalars(select(model).where(model.pk == "P")).all()
                    session.expunge_all()

        collected: dict[int, tuple[Result, Spent]] = {}

        def measure(workload: str, contender: str, work: Callable[[], None]) -> None:
            """``env.measure`` of ``work`` through ``proxy``, the CPU and garbage collections of its
            runs added up."""
            spent = Spent()

            def watched() -> None:
                server = process_cpu(env.server_pid)
                client = time.process_time()
                with collections() as during:
                    work()
                spent.add(time.process_time() - client, server, process_cpu(env.server_pid), during)

            result = env.measure(workload, contender, watched, proxy)
            collected[id(result)] = (result, spent)

        def tasks(
            job: Callable[[Any, Any], Awaitable[Any]], jobs: Any, engine: Any = None, core: bool = False
        ) -> Callable[[], None]:
            return lambda: loop.run_until_complete(in_tasks(list(jobs), job, engine, core)())

        measure(point_workload, "aiobotocore ExecuteStatement (same PartiQL)", tasks(raw_point, keys))
        measure(point_workload, floor.PARTIQL, tasks(floor_point, keys))
        for suffix, engine in engines.items():
            measure(point_workload, f"sa_dynamo AsyncSession.get{suffix}", tasks(session_get, keys, engine))
            measure(
                point_workload,
                f"sa_dynamo Core async select().one(){suffix}",
                tasks(core_one, keys, engine, core=True),
            )
        measure(point_workload, "sa_dynamo session.get, one after another", sync_gets)
        # Below the ExecuteStatement rows: each row's "x floor" is the nearest floor row above it.
        measure(point_workload, f"{floor.NAME} GetItem", tasks(floor_get_item, keys))
        measure(point_workload, "aiobotocore GetItem", tasks(raw_get_item, keys))
        measure(
            partition_workload,
            "aiobotocore ExecuteStatement + TypeDeserializer",
            tasks(raw_partition, queries),
        )
        for suffix, engine in engines.items():
            measure(
                partition_workload,
                f"sa_dynamo AsyncSession select{suffix}",
                tasks(session_select, queries, engine),
            )
        measure(partition_workload, "sa_dynamo ORM select, one after another", sync_selects)
        if aiodynamo is not None:
            from aiodynamo.expressions import HashKey

            dynamo = aiodynamo[1]

            async def aiodynamo_get(_: None, key: tuple[str, str]) -> None:
                await dynamo.get_item({"pk": key[0], "sk": key[1]})

            async def aiodynamo_query(_: None, __: int) -> None:
                [item async for item in dynamo.query(HashKey("pk", "P"))]

            measure(point_workload, "aiodynamo get_item", tasks(aiodynamo_get, keys))
            measure(partition_workload, "aiodynamo query", tasks(aiodynamo_query, queries))
        env.finish()  # while the contenders and this round trip's proxy are up
        for result, spent in collected.values():
            result.note = spent.note()
        if aiodynamo is not None:
            loop.run_until_complete(aiodynamo[0].close())
        loop.run_until_complete(bare.aclose())
    loop.close()
