"""``sa_dynamo.capacity()`` on an AsyncSession, through its ``sync_session``."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

import sa_dynamo


async def test_capacity_sums_an_async_session_through_its_sync_session(
    aio_engine: AsyncEngine, calls: Counter, items: Table
) -> None:
    async with AsyncSession(aio_engine) as session:
        with sa_dynamo.capacity(session.sync_session) as used:
            await session.execute(insert(items), [{"pk": "a", "sk": str(n)} for n in range(3)])
            await session.commit()
            rows = (await session.execute(select(items.c.sk).where(items.c.pk == "a"))).all()
    assert rows == [("0",), ("1",), ("2",)]
    assert [record.operation for record in used.records] == ["", "ExecuteTransaction", "ExecuteStatement"]
    assert (used.statements, used.total.requests, used.total.items, used.total.rows) == (2, 2, 3, 3)
    assert used.total.requests == calls["ExecuteTransaction"] + calls["ExecuteStatement"]
