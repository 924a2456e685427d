"""W7: asyncio. 1,000 point reads, then 32 reads of a 1,000-item partition, by 32 concurrent
tasks: AsyncSession on dynamodb+aiobotocore vs raw aiobotocore sending the same PartiQL, vs
aiodynamo (GetItem, Query), and vs the sync engine doing the same reads one after another."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from sqlalchemy import select
from sqlalchemy.dialects import registry
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from sqlalchemy.orm import Session

from sa_dynamo.dbapi import LOCAL_CREDENTIALS

from .common import REGION, Env, engine_client, optional
from .models import items, orm_model

NAME = "W7 asyncio"
POINT = f"{NAME}: 1,000 point reads by 32 tasks"
PARTITION = f"{NAME}: 32 reads of a 1,000-item partition by 32 tasks"
TASKS = 32
# PyDynamoDB's dialects live beside ours in the benchmarks' virtualenv: make the name ours.
registry.register("dynamodb.aiobotocore", "sa_dynamo.dialect.aiobotocore", "AsyncDynamoDBDialect")


class Clients:
    """Several clients' events as one, so that ``Env.measure`` counts the calls of them all."""

    def __init__(self, clients: list[Any]):
        self.meta = self
        self.events = self
        self._clients = clients

    def register(self, event: str, handler: Any) -> None:
        for client in self._clients:
            client.meta.events.register(event, handler)

    def unregister(self, event: str, handler: Any) -> None:
        for client in self._clients:
            client.meta.events.unregister(event, handler)


def in_tasks(
    jobs: list[Any], job: Callable[[Any, Any], Awaitable[Any]], engine: Any = None
) -> Callable[[], Awaitable[None]]:
    """The jobs shared out among TASKS concurrent tasks, each taking the next job when free;
    with an ``engine``, each task does its jobs in one AsyncSession (as the sync contender does
    all of them in one Session), else ``job`` gets None."""

    async def run() -> None:
        queue = iter(jobs)

        async def worker() -> None:
            if engine is None:
                for each in queue:
                    await job(None, each)
                return
            async with AsyncSession(engine) as session:
                for each in queue:
                    await job(session, each)
                    session.expunge_all()  # a real read each time, not the identity map

        await asyncio.gather(*(worker() for _ in range(TASKS)))

    return run


@contextmanager
def contenders(env: Env, loop: asyncio.AbstractEventLoop) -> Iterator[tuple[Any, Any, Clients]]:
    """An aiobotocore client, an AsyncEngine with TASKS pooled connections, their clients."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    config = AioConfig(max_pool_connections=TASKS)
    creating = AioSession().create_client(
        "dynamodb", endpoint_url=env.endpoint_url, region_name=REGION, config=config, **LOCAL_CREDENTIALS
    )
    client = loop.run_until_complete(creating.__aenter__())
    url = f"dynamodb+aiobotocore://{env.endpoint_url.removeprefix('http://')}"
    engine = create_async_engine(url, pool_size=TASKS, max_overflow=0)

    async def open_pool() -> list[Any]:  # every pooled connection opened before timing
        connections = [await engine.connect() for _ in range(TASKS)]
        clients = [(await c.get_raw_connection()).driver_connection for c in connections]
        for connection in connections:
            await connection.close()
        return clients

    pooled = Clients(loop.run_until_complete(open_pool()))
    try:
        yield client, engine, pooled
    finally:
        loop.run_until_complete(engine.dispose())
        loop.run_until_complete(creating.__aexit__(None, None, None))


def aiodynamo_table(env: Env, loop: asyncio.AbstractEventLoop, table: str) -> Any:
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
        client = Client(AIOHTTP(session), StaticCredentials(key), REGION, URL(env.endpoint_url))
        return session, client.table(table)

    return loop.run_until_complete(make())


def run(env: Env, size: int = 1000) -> None:
    table = env.table_name("w7")
    env.create_table(table)
    env.load(table, items("P", size))
    keys = [("P", f"{i:06}") for i in range(size)]
    queries = range(TASKS)
    model = orm_model(table)
    columns = '"pk", "sk", "n", "name", "flag"'
    point = f'SELECT {columns} FROM "{table}" WHERE "pk" = ? AND "sk" = ?'
    partition = f'SELECT {columns} FROM "{table}" WHERE "pk" = ?'
    deserializer = TypeDeserializer()
    loop = asyncio.new_event_loop()
    aiodynamo = aiodynamo_table(env, loop, table)
    with contenders(env, loop) as (client, engine, pooled):

        async def raw_point(_: None, key: tuple[str, str]) -> None:
            await client.execute_statement(Statement=point, Parameters=[{"S": key[0]}, {"S": key[1]}])

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

        async def session_select(session: AsyncSession, _: int) -> None:
            (await session.scalars(select(model).where(model.pk == "P"))).all()

        def timed(
            job: Callable[[Any, Any], Awaitable[Any]], jobs: Any, engine: Any = None
        ) -> Callable[[], None]:
            return lambda: loop.run_until_complete(in_tasks(list(jobs), job, engine)())

        def sync_gets() -> None:
            with Session(env.engine) as session:
                for key in keys:
                    session.get(model, key)
                    session.expunge_all()

        def sync_selects() -> None:
            with Session(env.engine) as session:
                for _ in queries:
                    session.scalars(select(model).where(model.pk == "P")).all()
                    session.expunge_all()

        sync_client = engine_client(env.engine)
        env.measure(POINT, "aiobotocore ExecuteStatement (same PartiQL)", timed(raw_point, keys), client)
        env.measure(POINT, "sa_dynamo AsyncSession.get", timed(session_get, keys, engine), pooled)
        env.measure(POINT, "sa_dynamo session.get, one after another", sync_gets, sync_client)
        env.measure(
            PARTITION,
            "aiobotocore ExecuteStatement + TypeDeserializer",
            timed(raw_partition, queries),
            client,
        )
        env.measure(
            PARTITION, "sa_dynamo AsyncSession select", timed(session_select, queries, engine), pooled
        )
        env.measure(PARTITION, "sa_dynamo ORM select, one after another", sync_selects, sync_client)
        if aiodynamo is not None:
            from aiodynamo.expressions import HashKey

            session, dynamo = aiodynamo

            async def aiodynamo_get(_: None, key: tuple[str, str]) -> None:
                await dynamo.get_item({"pk": key[0], "sk": key[1]})

            async def aiodynamo_query(_: None, __: int) -> None:
                [item async for item in dynamo.query(HashKey("pk", "P"))]

            env.measure(POINT, "aiodynamo get_item", timed(aiodynamo_get, keys))
            env.measure(PARTITION, "aiodynamo query", timed(aiodynamo_query, queries))
            loop.run_until_complete(session.close())
    loop.close()
