"""AsyncSession on the single-table store, a commit cancelled mid-flight, and the async URLs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid

import pytest
from orm.conftest import make_store
from sqlalchemy import Column, Integer, MetaData, String, Table, func, select
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from support.aio import settle
from support.signatures import signed_by

from sa_dynamo.dbapi.transport import TRANSPORTS


@pytest.fixture
def store(aio_engine):
    models = make_store(f"store_{uuid.uuid4().hex[:8]}")

    async def create() -> None:
        async with aio_engine.begin() as conn:
            await conn.run_sync(models.Base.metadata.create_all)

    settle(create())
    yield models

    async def drop() -> None:
        async with aio_engine.begin() as conn:
            await conn.run_sync(models.Base.metadata.drop_all)

    settle(drop())
    models.Base.registry.dispose()


async def test_async_session_flushes_one_transaction_and_filters_by_discriminator(aio_engine, calls, store):
    async with AsyncSession(aio_engine) as session:
        session.add_all(
            [
                store.Customer(customer_id="42", name="Ann"),
                store.Order(customer_id="42", order_id="1", status="PAID", total=30),
                store.Order(customer_id="42", order_id="2", total=5),
                store.OrderItem(customer_id="42", order_id="1", line=1, product="pen"),
            ]
        )
        await session.commit()
    assert calls["ExecuteTransaction"] == 1
    async with AsyncSession(aio_engine) as session:
        orders = (await session.scalars(select(store.Order).where(store.Order.customer_id == "42"))).all()
        customer = await session.get(store.Customer, ("CUSTOMER#42", "METADATA"))
        children = await session.run_sync(lambda _: [o.order_id for o in customer.orders])
        count = await session.scalar(
            select(func.count()).select_from(store.Order).where(store.Order.customer_id == "42")
        )
    assert [(o.order_id, o.status, o.total) for o in orders] == [("1", "PAID", 30), ("2", None, 5)]
    assert (customer.name, children, count) == ("Ann", ["1", "2"], 2)


async def test_stream_scalars_yields_orm_objects_page_by_page(aio_engine, calls, store):
    async with AsyncSession(aio_engine) as session:
        session.add_all([store.Order(customer_id="7", order_id=f"{n:02}", total=n) for n in range(6)])
        await session.commit()
    calls.clear()
    async with AsyncSession(aio_engine) as session:
        query = select(store.Order).where(store.Order.customer_id == "7").execution_options(yield_per=2)
        seen = []
        async for order in await session.stream_scalars(query.execution_options(dynamodb_page_size=2)):
            seen.append((order.total, calls["ExecuteStatement"]))
    assert [total for total, _ in seen] == list(range(6))
    assert [requests for _, requests in seen] == [1, 1, 2, 2, 3, 3]


async def test_a_commit_cancelled_in_flight_writes_all_or_nothing_and_the_engine_goes_on(
    make_aio_engine, raw, items
):
    engine = make_aio_engine(pool_size=1, max_overflow=0)
    sending = asyncio.Event()

    async def commit_ten() -> None:
        async with engine.connect() as conn:
            transport = (await conn.get_raw_connection()).dbapi_connection.transport
            send = transport.send

            def signalling(operation, body, wire=False):
                if operation == "ExecuteTransaction":
                    sending.set()  # then the request goes out, and the task waits for its answer
                return send(operation, body, wire)

            transport.send = signalling
            await conn.execute(items.insert(), [{"pk": "c", "sk": f"s{i}", "n": i} for i in range(10)])
            await conn.commit()

    task = asyncio.ensure_future(commit_ten())
    await sending.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = raw.query(
        TableName=items.name, KeyConditionExpression="pk = :c", ExpressionAttributeValues={":c": {"S": "c"}}
    )["Count"]
    assert stored in (0, 10)
    async with engine.begin() as conn:  # the one pooled connection was replaced, and works
        await conn.execute(items.insert(), [{"pk": "after", "sk": "s", "n": 1}])
    async with engine.connect() as conn:
        assert (await conn.execute(select(items.c.n).where(items.c.pk == "after"))).all() == [(1,)]
    assert engine.pool.checkedout() == 0


async def test_async_sessionmaker_and_the_embedded_server_url(dynamodb_local, table_name):
    """dynamodb+aiolocal:// uses the session's server (SA_DYNAMO_LOCAL_ENDPOINT) like dynamodb+local://."""
    engine = create_async_engine("dynamodb+aiolocal://", pool_pre_ping=True)
    table = Table(table_name, MetaData(), Column("pk", String, primary_key=True), Column("n", Integer))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(table.metadata.create_all)
        sessions = async_sessionmaker(engine)
        async with sessions.begin() as session:
            await session.execute(table.insert().values(pk="a", n=1))
        async with sessions() as session:
            assert (await session.execute(select(table.c.n).where(table.c.pk == "a"))).all() == [(1,)]
        async with engine.begin() as conn:
            await conn.run_sync(table.metadata.drop_all)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_url_configures_the_asyncio_transports_as_it_configures_the_sync_ones(
    proxy, endpoint_url, transport
):
    """Region, key pair and attempts from the URL, as the requests that reach the proxy show them."""
    options = f"region_name=eu-west-1&max_attempts=2&transport={transport}"
    engine = create_async_engine(f"dynamodb+asyncio://AKIDEXAMPLE:se%40cret@127.0.0.1:{proxy.port}?{options}")
    proxy.script("ListTables", "throttle", "throttle")
    try:
        async with engine.connect() as conn:
            with pytest.raises(OperationalError, match="ThrottlingException"):
                await conn.run_sync(lambda sync: sync.dialect.get_table_names(sync))
    finally:
        await engine.dispose()
    assert proxy.counts.requests["ListTables"] == 2
    for _, headers, body in proxy.received:
        assert signed_by(f"{proxy.endpoint_url}/", headers, body, "AKIDEXAMPLE", "se@cret", "eu-west-1")
    with pytest.raises(ArgumentError, match=r"dynamodb\+aiolocal:// starts its own server"):
        create_async_engine("dynamodb+aiolocal://localhost:8000")
    with pytest.raises(ArgumentError, match="unknown URL parameter"):
        create_async_engine(f"dynamodb+asyncio://{endpoint_url.removeprefix('http://')}?regoin_name=x")


def test_the_sync_package_imports_nothing_of_aiobotocore():
    script = (
        "import sys, sqlalchemy, sa_dynamo, sa_dynamo.dialect.base, sa_dynamo.dialect.local\n"
        "sqlalchemy.create_engine('dynamodb://localhost:1')\n"
        "print(sorted(name for name in sys.modules if name.startswith(('aiobotocore', 'aiohttp'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
