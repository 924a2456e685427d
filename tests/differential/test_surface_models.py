"""The surface differential over the single-table features: hypothesis draws ORM programs over
products (key templates with fixed-width and precision-losing formats, a computed key, an
attribute bag) and many-to-many memberships; each runs on DynamoDB Local with the single-table
models and on SQLite with plain relational ones (judge.py), inside or outside a transaction,
and every statement must give SQLite's rows, rowcount and final table, or be refused before
anything is sent. known_open.py lists the findings whose shapes are left out.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from sqlalchemy import Engine, create_engine

from .judge import Judge, Report, run_programs
from .known_open import is_open
from .models_family import ModeledFamily, seed
from .surface_models import dynamodb_models, sqlite_models

PROGRAMS = 80
LENGTH = (4, 14)
MIN_STATEMENTS = 600
MAX_REFUSED = 0.10


@pytest.fixture(scope="module")
def modeled(endpoint_url: str) -> Iterator[tuple[Engine, Engine, SimpleNamespace, SimpleNamespace]]:
    on_dynamodb, on_sqlite = dynamodb_models(f"surface_{uuid.uuid4().hex[:8]}"), sqlite_models()
    sqlite = create_engine("sqlite://")
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")
    fine = not is_open("finding-7")
    for engine, models in ((sqlite, on_sqlite), (dynamodb, on_dynamodb)):
        models.Base.metadata.create_all(engine)
        seed(engine, models, fine)
    yield sqlite, dynamodb, on_dynamodb, on_sqlite
    on_dynamodb.Base.metadata.drop_all(dynamodb)
    for models in (on_dynamodb, on_sqlite):
        models.Base.registry.dispose()
    for engine in (sqlite, dynamodb):
        engine.dispose()


def test_single_table_features_give_sqlites_answers(
    modeled: tuple[Engine, Engine, SimpleNamespace, SimpleNamespace],
) -> None:
    sqlite, dynamodb, on_dynamodb, on_sqlite = modeled
    family = ModeledFamily(on_dynamodb, on_sqlite, sqlite, dynamodb)
    report = Report("models")
    run_programs(Judge(family, sqlite, dynamodb, report, LENGTH), PROGRAMS)
    print(report.summary())
    if report.disagreements:
        pytest.fail(report.failure(), pytrace=False)
    assert report.generated >= MIN_STATEMENTS, report.summary()
    assert report.refused_share < MAX_REFUSED, report.summary()
