"""Both databases of the differential tests: SQLite (the judge) and DynamoDB Local, same rows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import Engine, Table, create_engine, event

from .grammar import SEED, make_rows, make_table
from .known_open import is_open
from .models_family import seed
from .surface_models import dynamodb_models, sqlite_models
from .surface_types import base_rows, make_models
from .types_family import case_sensitive_like


def _case_sensitive_like(dbapi_connection: Any, _record: Any) -> None:
    # SQLite's LIKE (behind startswith()) ignores ASCII case by default; begins_with does not.
    dbapi_connection.execute("PRAGMA case_sensitive_like = ON")


@pytest.fixture
def databases(endpoint_url: str, table_name: str) -> Iterator[tuple[Engine, Engine, Table]]:
    """SQLite and DynamoDB Local holding the same 200 rows (None: NULL there, absent here)."""
    table = make_table(table_name)
    sqlite = create_engine("sqlite://")
    event.listen(sqlite, "connect", _case_sensitive_like)
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")
    for engine in (sqlite, dynamodb):
        table.metadata.create_all(engine)
        # AUTOCOMMIT: a DynamoDB transaction holds at most 100 writes.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(table.insert(), make_rows(SEED))
    yield sqlite, dynamodb, table
    table.metadata.drop_all(dynamodb)
    for engine in (sqlite, dynamodb):
        engine.dispose()


def _dynamodb(endpoint_url: str) -> Engine:
    return create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")


@pytest.fixture(scope="module")
def typed_tables(endpoint_url: str) -> Iterator[tuple[Engine, Engine, Table, type]]:
    """The surface differential's typed table (surface_types.py) in both databases, at its
    first rows: SQLite, DynamoDB Local, the table and its ORM class."""
    table, row = make_models(f"surface_{uuid.uuid4().hex[:8]}")
    sqlite, dynamodb = create_engine("sqlite://"), _dynamodb(endpoint_url)
    case_sensitive_like(sqlite)
    for engine in (sqlite, dynamodb):
        table.metadata.create_all(engine)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(table.insert(), base_rows())
    yield sqlite, dynamodb, table, row
    table.metadata.drop_all(dynamodb)
    for engine in (sqlite, dynamodb):
        engine.dispose()


@pytest.fixture(scope="module")
def modeled_tables(endpoint_url: str) -> Iterator[tuple[Engine, Engine, SimpleNamespace, SimpleNamespace]]:
    """The surface differential's modeled classes (surface_models.py): SQLite with the
    relational ones, DynamoDB Local with the single-table ones, each seeded."""
    on_dynamodb, on_sqlite = dynamodb_models(f"surface_{uuid.uuid4().hex[:8]}"), sqlite_models()
    sqlite, dynamodb = create_engine("sqlite://"), _dynamodb(endpoint_url)
    for engine, models in ((sqlite, on_sqlite), (dynamodb, on_dynamodb)):
        models.Base.metadata.create_all(engine)
        seed(engine, models, fine=not is_open("finding-7"))
    yield sqlite, dynamodb, on_dynamodb, on_sqlite
    on_dynamodb.Base.metadata.drop_all(dynamodb)
    for models in (on_dynamodb, on_sqlite):
        models.Base.registry.dispose()
    for engine in (sqlite, dynamodb):
        engine.dispose()
