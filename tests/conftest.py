"""Test fixtures: one real DynamoDB Local for the whole session, on a free 127.0.0.1 port."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from urllib.parse import urlencode

import boto3
import pytest
from hypothesis import settings
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, event
from sqlalchemy.engine import Engine
from support.aio import driver, pytest_pyfunc_call, pytest_runtest_protocol  # noqa: F401  (support/aio.py)
from support.faultproxy import FaultProxy
from support.sessions import rotating_profile, sessions_made  # noqa: F401  (support/sessions.py)

from sa_dynamo import local_server
from sa_dynamo.dbapi.transport import TRANSPORTS, chosen
from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

# CI replays the same examples every run (a landing must not depend on luck); elsewhere
# hypothesis keeps exploring new ones.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_report_header(config: pytest.Config) -> str:
    return f"sa_dynamo transport: {chosen(None)} (SA_DYNAMO_TRANSPORT picks it; the fault tests run on each)"


@pytest.fixture(scope="session")
def dynamodb_local():
    server = local_server.start()
    # `dynamodb+local://` URLs (docs, examples) reuse this server instead of starting their own.
    os.environ[local_server.ENV_ENDPOINT] = server.endpoint_url
    yield server
    os.environ.pop(local_server.ENV_ENDPOINT, None)
    server.stop()


@pytest.fixture(scope="session")
def endpoint_url(dynamodb_local) -> str:
    return dynamodb_local.endpoint_url


PROXY_SEED = 20240611


@pytest.fixture
def start_proxy(endpoint_url: str) -> Iterator[Callable[..., FaultProxy]]:
    """``start_proxy(**options)``: a running FaultProxy in front of the session's DynamoDB Local
    (seeded, bounded), stopped after the test."""
    with contextlib.ExitStack() as running:
        defaults = {"seed": PROXY_SEED, "max_requests": 2_000, "time_limit": 60}
        yield lambda **options: running.enter_context(FaultProxy(endpoint_url, **{**defaults, **options}))


@pytest.fixture
def proxy(start_proxy: Callable[..., FaultProxy]) -> FaultProxy:
    """A proxy that injects nothing until the test sets ``proxy.faults`` or scripts faults; it
    records every request it receives (``proxy.received``)."""
    return start_proxy()


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """A test that takes it (the fault tests, the lost-answer differential) runs on each
    transport, whichever the run tests otherwise."""
    return request.param


@pytest.fixture
def through(transport: str) -> Iterator[Callable[..., Engine]]:
    """``through(proxy, retries, **client_options)``: an engine on ``transport`` whose every
    request passes the proxy, with standard retries (``retries`` after the first attempt; the
    URL's max_attempts counts them all) and other URL options such as ``read_timeout``."""
    engines: list[Engine] = []

    def make(proxy: FaultProxy, retries: int, **client_options: float) -> Engine:
        options = {"retry_mode": "standard", "max_attempts": retries + 1, "transport": transport}
        query = urlencode({**options, **client_options})
        engines.append(create_engine(f"dynamodb://127.0.0.1:{proxy.port}?{query}", pool_size=10))
        return engines[-1]

    yield make
    for engine in engines:
        engine.dispose()


@pytest.fixture
def table_name() -> str:
    """A table name no other test uses."""
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def engine(endpoint_url: str):
    """An engine on the session's DynamoDB Local. Its pool hands out the connection returned
    last, so a fixture that watches the connection it just used watches the test's too."""
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", pool_use_lifo=True)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def raw(endpoint_url: str):
    """A plain boto3 client, to write behind the dialect's back and to see what is really stored."""
    return boto3.client("dynamodb", endpoint_url=endpoint_url, region_name="us-east-1", **LOCAL_CREDENTIALS)


@pytest.fixture
def sent(engine) -> Iterator[list[str]]:
    """The statements the engine hands to the driver from now on, in order."""
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    yield statements
    event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def items(engine, table_name: str) -> Iterator[Table]:
    """A fresh table: pk and sk (the key), n and name; dropped afterwards."""
    metadata = MetaData()
    table = Table(
        table_name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
        Column("name", String),
    )
    metadata.create_all(engine)
    yield table
    metadata.drop_all(engine)
