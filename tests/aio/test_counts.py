"""COUNT of nothing on the async engine: the one row SQL gives (0) survives the cursor that reads a
result whole while ``execute()`` runs, for the driver's COUNT (a Query, a Scan) and for a count
the client computes (over a semi-join, over groups), through AsyncConnection and AsyncSession."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from support.aio import settle

metadata = MetaData()
things = Table(
    f"aio_counts_{uuid.uuid4().hex[:8]}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("n", Integer),
)
t = things.c
NOTHING = {
    "a Query that matches no item": select(func.count()).select_from(things).where(t.pk == "none"),
    "a Scan that matches no item": select(func.count()).select_from(things).where(t.n > 100),
    "a count computed over an IN that matches none": select(func.count()).where(
        t.pk.in_(select(t.pk).where(t.n > 100))
    ),
    "count and sum computed over no row": select(func.count(), func.sum(t.n)).where(t.n > 100),
}


@pytest.fixture
def filled(aio_engine):
    async def create() -> None:
        async with aio_engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
            await conn.execute(things.insert(), [{"pk": f"p{i}", "n": i} for i in range(5)])

    settle(create())
    yield aio_engine.execution_options(dynamodb_scan="allow")

    async def drop() -> None:
        async with aio_engine.begin() as conn:
            await conn.run_sync(metadata.drop_all)

    settle(drop())


@pytest.mark.parametrize("statement", list(NOTHING.values()), ids=list(NOTHING))
async def test_count_of_nothing_is_one_row_of_zero(filled, statement):
    async with filled.connect() as conn:
        on_connection = (await conn.execute(statement)).all()
    async with AsyncSession(filled) as session:
        on_session = (await session.execute(statement)).all()
        scalar = await session.scalar(statement)
    width = len(statement.selected_columns)
    assert on_connection == on_session == [(0, *[None] * (width - 1))]
    assert scalar == 0


async def test_a_count_of_something_is_counted(filled):
    """The same statements count the rows that match, so a zero above is not a constant."""
    async with AsyncSession(filled) as session:
        assert await session.scalar(select(func.count()).select_from(things).where(t.n > 1)) == 3
        assert await session.scalar(select(func.count()).where(t.pk.in_(select(t.pk).where(t.n > 2)))) == 2
