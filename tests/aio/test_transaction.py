"""run_async_transaction: asyncio tasks racing on one versioned item lose no increment."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import Integer, String, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from support.aio import settle

import sa_dynamo


class Base(DeclarativeBase):
    pass


class Counter(Base):
    __tablename__ = f"aio_counters_{uuid.uuid4().hex[:6]}"
    pk: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    __mapper_args__ = {"version_id_col": version}


@pytest.fixture
def counters(aio_engine):
    async def run(step) -> None:
        async with aio_engine.begin() as conn:
            await conn.run_sync(step)

    settle(run(Base.metadata.create_all))
    yield
    settle(run(Base.metadata.drop_all))


async def test_8_tasks_incrementing_one_versioned_item_lose_nothing(aio_engine, calls, counters):
    sessions = async_sessionmaker(aio_engine, expire_on_commit=False)
    async with sessions.begin() as session:
        session.add(Counter(pk="hot", value=0))

    async def increment(session: AsyncSession) -> None:
        (await session.get(Counter, "hot")).value += 1

    async def worker() -> None:
        for _ in range(5):
            await sa_dynamo.run_async_transaction(sessions, increment, max_retries=500, max_backoff=0.05)

    await asyncio.gather(*(worker() for _ in range(8)))
    async with sessions() as session:
        assert await session.scalar(select(Counter.value).where(Counter.pk == "hot")) == 40
    assert calls["ExecuteTransaction"] >= 1 + 40  # the insert, each increment, and the lost races retried


async def test_run_async_transaction_commits_what_an_async_connection_callback_wrote(aio_engine, counters):
    async def write(conn) -> str:
        await conn.execute(Counter.__table__.insert().values(pk="c", value=7, version=1))
        return "written"

    assert await sa_dynamo.run_async_transaction(aio_engine, write) == "written"
    async with aio_engine.connect() as conn:
        assert (await conn.execute(select(Counter.value).where(Counter.pk == "c"))).all() == [(7,)]


async def test_run_async_transaction_refuses_a_sync_transactor(engine):
    with pytest.raises(TypeError, match=r"needs an AsyncEngine.*run_transaction takes the sync ones"):
        await sa_dynamo.run_async_transaction(engine, lambda conn: None)
