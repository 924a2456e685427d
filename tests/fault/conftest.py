"""Fixtures for the fault tests: a fault proxy in front of the session's DynamoDB Local, engines
that reach DynamoDB only through it, and a table created directly (no faults during setup)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from urllib.parse import urlencode

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from support.faultproxy import FaultProxy

SEED = 20240611


@pytest.fixture
def start_proxy(endpoint_url: str) -> Iterator[Callable[..., FaultProxy]]:
    """``start_proxy(**options)``: a running FaultProxy (seeded, bounded), stopped after the test."""
    with contextlib.ExitStack() as running:
        defaults = {"seed": SEED, "max_requests": 2_000, "time_limit": 60}
        yield lambda **options: running.enter_context(FaultProxy(endpoint_url, **{**defaults, **options}))


@pytest.fixture
def proxy(start_proxy: Callable[..., FaultProxy]) -> FaultProxy:
    """A proxy that injects nothing until the test sets ``proxy.faults`` or scripts faults."""
    return start_proxy()


@pytest.fixture
def through() -> Iterator[Callable[..., Engine]]:
    """``through(proxy, retries, **client_options)``: an engine whose every request passes the
    proxy, with botocore's standard retries (``retries`` after the first attempt; the URL's
    max_attempts counts them all) and other URL options such as ``read_timeout``."""
    engines: list[Engine] = []

    def make(proxy: FaultProxy, retries: int, **client_options: float) -> Engine:
        query = urlencode({"retry_mode": "standard", "max_attempts": retries + 1, **client_options})
        engines.append(create_engine(f"dynamodb://127.0.0.1:{proxy.port}?{query}", pool_size=10))
        return engines[-1]

    yield make
    for engine in engines:
        engine.dispose()
