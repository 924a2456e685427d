"""Autoincrement ids on the asyncio driver: tasks of one event loop share its thread, so a
counter's lock is never held while its request is out (a task waiting for it would stop the loop).
"""

from __future__ import annotations

import asyncio
import uuid
from itertools import pairwise

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Hero(Base):
    __tablename__ = f"ai_async_hero_{uuid.uuid4().hex[:8]}"
    id: Mapped[int] = mapped_column(primary_key=True)
    task: Mapped[int]
    seq: Mapped[int]


async def test_tasks_of_one_loop_take_ids_at_once(make_aio_engine):
    """8 tasks, each on its own connection, flush 10 heroes one at a time with blocks of 3: 80
    different ids, each task's increasing within a block, every reserved block used in turn."""
    engine = make_aio_engine(dynamodb_autoincrement_block=3, pool_size=8)
    reserved: list[str] = []

    def record(operation, body, answer):
        if operation == "UpdateItem":
            reserved.append(answer["Attributes"]["value"]["N"])

    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    try:

        async def add_heroes(task: int) -> list[int]:
            async with AsyncSession(engine) as session:
                connection = await session.connection()
                raw = await connection.get_raw_connection()
                raw.dbapi_connection.transport.observers.append(record)
                ids = []
                for seq in range(10):
                    hero = Hero(task=task, seq=seq)
                    session.add(hero)
                    await session.flush()
                    ids.append(hero.id)
                await session.commit()
                return ids

        by_task = await asyncio.wait_for(asyncio.gather(*(add_heroes(t) for t in range(8))), 120)
        async with AsyncSession(engine) as session:
            stored = (
                (await session.execute(select(Hero).execution_options(dynamodb_scan="allow"))).scalars().all()
            )
            rows = {(hero.task, hero.seq): hero.id for hero in stored}
    finally:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.drop_all)
    ids = [i for task in by_task for i in task]
    assert len(set(ids)) == 80
    assert rows == {(task, seq): by_task[task][seq] for task in range(8) for seq in range(10)}
    assert sorted(int(last) for last in reserved) == [3 * (n + 1) for n in range(len(reserved))]
    assert 80 // 3 < len(reserved) <= 80 // 3 + 8
    for task in by_task:
        for earlier, later in pairwise(task):
            if (earlier - 1) // 3 == (later - 1) // 3:
                assert earlier < later
