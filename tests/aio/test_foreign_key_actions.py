"""ON DELETE CASCADE on the async driver: the statement made of the parent's delete and its
children's (tests/test_foreign_key_actions.py judges the same schema against SQLite) runs through
AsyncConnection, held in a transaction or committed as one ExecuteTransaction in AUTOCOMMIT."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import create_async_engine
from test_foreign_key_actions import schema


@pytest.mark.parametrize("mode", ["SERIALIZABLE", "AUTOCOMMIT"])
async def test_a_cascade_through_the_async_driver(aio_url, mode):
    metadata, team, hero, power = schema("CASCADE")
    engine = create_async_engine(aio_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
            await conn.execute(insert(team), [{"id": 1, "name": "Preventers"}, {"id": 2, "name": "Z-Force"}])
            await conn.execute(
                insert(hero), [{"id": 1, "team_id": 1}, {"id": 2, "team_id": 1}, {"id": 3, "team_id": 2}]
            )
            await conn.execute(insert(power), [{"id": 1, "hero_id": 1}, {"id": 2, "hero_id": 3}])
        async with engine.connect() as conn:
            await conn.execution_options(isolation_level=mode)
            assert (await conn.execute(delete(team).where(team.c.id == 1))).rowcount == 1
            await conn.commit()
        async with engine.connect() as conn:
            await conn.execution_options(dynamodb_scan="allow")
            left = [sorted((await conn.execute(select(t.c.id))).all()) for t in (team, hero, power)]
        assert left == [[(2,)], [(3,)], [(2,)]]
    finally:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.drop_all)
        await engine.dispose()
