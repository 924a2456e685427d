"""A pool of 32 async connections costs what one does (issue 32), on each transport: one botocore
(or aiobotocore) session, and each connection after the first a few hundred tracked objects;
refreshing credentials (refreshed in a worker thread on the default transport) sign every request."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.ext.asyncio import create_async_engine
from support.faultproxy import FaultProxy
from support.sessions import MOST_TRACKED_PER_CONNECTION, keys_received, tracked_objects

from sa_dynamo.dbapi.transport import TRANSPORTS


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_32_connections_of_an_async_engine_make_one_session(
    aio_url: str, make_aio_engine: Any, sessions_made: list[Any], transport: str
) -> None:
    engine = make_aio_engine(f"{aio_url}?transport={transport}", pool_size=32, max_overflow=0)
    held = [await engine.connect()]
    await held[0].run_sync(lambda sync: sync.dialect.get_table_names(sync))  # the first request made
    with tracked_objects() as tracked:
        held += [await engine.connect() for _ in range(31)]
    for connection in held:
        await connection.close()
    assert len(sessions_made) == 1
    assert tracked.added / 31 < MOST_TRACKED_PER_CONNECTION


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_refreshing_credentials_sign_every_async_connection_s_requests(
    proxy: FaultProxy, rotating_profile: str, transport: str
) -> None:
    url = f"dynamodb+asyncio://127.0.0.1:{proxy.port}?profile_name={rotating_profile}&transport={transport}"
    engine = create_async_engine(url)
    try:
        first, second = await engine.connect(), await engine.connect()
        for connection in (first, second, first):
            await connection.run_sync(lambda sync: sync.dialect.get_table_names(sync))
        await first.close()
        await second.close()
    finally:
        await engine.dispose()
    keys = keys_received(proxy)
    assert len(keys) == 3
    assert keys == sorted(set(keys))  # a fresh key for each request, whichever connection sent it
