"""``sa_dynamo.consumed()`` of the results of the async driver: a buffered one and a streamed one."""

from __future__ import annotations

from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

import sa_dynamo


async def test_consumed_of_an_async_result_buffered_and_streamed(
    aio_engine: AsyncEngine, items: Table
) -> None:
    async with AsyncSession(aio_engine) as session:
        await session.execute(insert(items), [{"pk": "a", "sk": str(n), "n": n % 2} for n in range(5)])
        await session.commit()
        result = await session.execute(select(items.c.sk).where(items.c.pk == "a", items.c.n == 0))
        assert result.scalars().all() == ["0", "2", "4"]
        streamed = await session.stream(select(items.c.sk).where(items.c.pk == "a"))
        assert [row.sk async for row in streamed] == ["0", "1", "2", "3", "4"]
    buffered = sa_dynamo.consumed(result)
    assert (buffered.operation, buffered.requests, buffered.items, buffered.rows) == (
        "ExecuteStatement",
        1,
        3,
        3,
    )
    assert (sa_dynamo.consumed(streamed).items, sa_dynamo.consumed(streamed).rows) == (5, 5)
