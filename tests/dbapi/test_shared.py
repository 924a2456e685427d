"""A pool of 32 connections costs what one does (issue 32): the connections of an engine share one
botocore session and one route (credentials, endpoint, HTTP pool) or botocore client; another
key pair gets another route; refreshing credentials keep signing every request."""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from sqlalchemy import create_engine
from support.faultproxy import FaultProxy

from sa_dynamo.dbapi.transport import TRANSPORTS, shared

# A connection of an engine whose route is made: SQLAlchemy's pool records and the driver's
# Connection, buffer and transport (issue 32: "a few hundred tracked objects").
MOST_TRACKED_PER_CONNECTION = 1_000


@pytest.fixture
def sessions_made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The botocore sessions (aiobotocore's among them) made from now on; the process's shared
    sessions are forgotten first."""
    monkeypatch.setattr(shared, "_sessions", {})
    made: list[Any] = []
    original = botocore.session.Session.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(botocore.session.Session, "__init__", counted)
    return made


def tracked_per_connection(open_one: Callable[[], Any], connections: int = 32) -> tuple[list[Any], float]:
    """Open ``connections`` connections and hold them: the objects the garbage collector tracks
    that each one after the first added."""
    held = [open_one()]
    gc.collect()
    before = len(gc.get_objects())
    held += [open_one() for _ in range(connections - 1)]
    gc.collect()
    return held, (len(gc.get_objects()) - before) / (connections - 1)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_32_connections_of_an_engine_make_one_session(
    endpoint_url: str, sessions_made: list[Any], transport: str
) -> None:
    host = endpoint_url.removeprefix("http://")
    engine = create_engine(f"dynamodb://{host}?transport={transport}", pool_size=32, max_overflow=0)
    try:
        held, tracked = tracked_per_connection(engine.connect)
        transports = [connection.connection.dbapi_connection.transport for connection in held]
        shared_by_all = [getattr(t, "route", None) or t.client for t in transports]
        assert len(sessions_made) == 1
        assert all(thing is shared_by_all[0] for thing in shared_by_all)
        assert tracked < MOST_TRACKED_PER_CONNECTION
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


CREDENTIAL_PROCESS = """\
import datetime, json, pathlib
counter = pathlib.Path(__file__).with_suffix(".count")
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
# Due within botocore's mandatory refresh window: every use refreshes them.
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
print(json.dumps({"Version": 1, "AccessKeyId": f"KEY{n}", "SecretAccessKey": "s", "Expiration": expires.isoformat()}))
"""


@pytest.fixture
def rotating_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A profile whose credentials (from a credential_process) expire at once and come back with
    a new key each time: KEY1, KEY2, ..."""
    script = tmp_path / "rotate.py"
    script.write_text(CREDENTIAL_PROCESS)
    config = tmp_path / "config"
    config.write_text(f"[profile rotating]\ncredential_process = {sys.executable} {script}\n")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return "rotating"


def keys_received(proxy: FaultProxy) -> list[int]:
    """The number of the key that signed each request the proxy received."""
    return [
        int(re.search(r"Credential=KEY(\d+)/", headers["Authorization"])[1])
        for _, headers, _ in proxy.received
    ]


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
