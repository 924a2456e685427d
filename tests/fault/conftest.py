"""Fixtures for the fault tests: engines that reach DynamoDB only through the fault proxy
(tests/conftest.py's ``proxy``), on each transport in turn."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import urlencode

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from support.faultproxy import FaultProxy

from sa_dynamo.dbapi.transport import TRANSPORTS


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """Every fault test runs on each transport, whichever the run tests otherwise."""
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
