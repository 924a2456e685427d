"""A pool of 32 connections costs what one does (issue 32): the connections of an engine share one
botocore session and one route (credentials, endpoint, HTTP pool) or botocore client; another
key pair gets another route; refreshing credentials keep signing every request."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import create_engine
from support.faultproxy import FaultProxy
from support.sessions import MOST_TRACKED_PER_CONNECTION, keys_received, tracked_objects

from sa_dynamo.dbapi.transport import TRANSPORTS


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_32_connections_of_an_engine_make_one_session(
    endpoint_url: str, sessions_made: list[Any], transport: str
) -> None:
    host = endpoint_url.removeprefix("http://")
    engine = create_engine(f"dynamodb://{host}?transport={transport}", pool_size=32, max_overflow=0)
    try:
        held = [engine.connect()]
        with tracked_objects() as tracked:
            held += [engine.connect() for _ in range(31)]
        transports = [connection.connection.dbapi_connection.transport for connection in held]
        shared_by_all = [getattr(t, "route", None) or t.client for t in transports]
        assert len(sessions_made) == 1
        assert all(thing is shared_by_all[0] for thing in shared_by_all)
        assert tracked.added / 31 < MOST_TRACKED_PER_CONNECTION
        for connection in held:
            connection.close()
    finally:
        engine.dispose()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_only_what_changes_the_route_makes_another(
    endpoint_url: str, sessions_made: list[Any], transport: str
) -> None:
    """The same URL (another engine, other dialect options) shares the route; another key pair
    does not, though it shares the session."""
    host = endpoint_url.removeprefix("http://")
    same = create_engine(f"dynamodb://{host}?transport={transport}")
    again = create_engine(f"dynamodb://{host}?transport={transport}", dynamodb_scan="error")
    keyed = create_engine(f"dynamodb://OTHERKEY:secret@{host}?transport={transport}")

    def route(engine: Any) -> Any:
        transport = engine.raw_connection().dbapi_connection.transport
        return getattr(transport, "route", None) or transport.client

    try:
        assert route(same) is route(again)
        assert route(keyed) is not route(same)
        assert len(sessions_made) == 1
    finally:
        for engine in (same, again, keyed):
            engine.dispose()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_refreshing_credentials_sign_every_connection_s_requests(
    proxy: FaultProxy, rotating_profile: str, transport: str
) -> None:
    engine = create_engine(
        f"dynamodb://127.0.0.1:{proxy.port}?profile_name={rotating_profile}&transport={transport}"
    )
    try:
        first, second = engine.raw_connection(), engine.raw_connection()
        for connection in (first, second, first):
            connection.dbapi_connection.transport.send("ListTables", {"Limit": 1})
    finally:
        engine.dispose()
    keys = keys_received(proxy)
    assert len(keys) == 3
    assert keys == sorted(set(keys))  # a fresh key for each request, whichever connection sent it
