"""The surface differential over the single-table features: hypothesis draws ORM programs over
products (key templates with fixed-width and precision-losing formats, a computed key, an
attribute bag) and many-to-many memberships; each runs on DynamoDB Local with the single-table
models and on SQLite with plain relational ones (judge.py), inside or outside a transaction,
and every statement must give SQLite's rows, rowcount and final table, or be refused before
anything is sent. known_open.py lists the findings whose shapes are left out.
"""

from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy import Engine

from .judge import Judge, Report, run_programs, verdict
from .models_family import WEIGHTS, ModeledFamily

PROGRAMS = 80
LENGTH = (4, 14)
MIN_STATEMENTS = 600
MAX_REFUSED = 0.10


def test_single_table_features_give_sqlites_answers(
    modeled_tables: tuple[Engine, Engine, SimpleNamespace, SimpleNamespace],
) -> None:
    sqlite, dynamodb, on_dynamodb, on_sqlite = modeled_tables
    family = ModeledFamily(on_dynamodb, on_sqlite, sqlite, dynamodb)
    report = Report("models")
    run_programs(Judge(family, sqlite, dynamodb, report, LENGTH), PROGRAMS)
    verdict(report, MIN_STATEMENTS, MAX_REFUSED)
    assert family.used == set(WEIGHTS), report.summary()  # every kind of statement was drawn
