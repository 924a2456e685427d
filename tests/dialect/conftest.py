"""Fixtures for the dialect's live tests: tables that are gone after each test, and unique names."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import MetaData


@pytest.fixture
def metadata(engine) -> Iterator[MetaData]:
    """A MetaData for one test's tables; whichever of them exist afterwards are dropped."""
    metadata = MetaData()
    yield metadata
    metadata.drop_all(engine)


@pytest.fixture
def new_table_name(table_name: str) -> Callable[[], str]:
    """More table names no other test uses, for tests that need several tables."""
    return lambda: f"{table_name}_{uuid.uuid4().hex[:6]}"
