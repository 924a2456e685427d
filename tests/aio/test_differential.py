"""The differential oracle (tests/differential) on one statement seed through the async engine:
the same statements, compiled and as SQL text, return SQLite's rows on aiobotocore too."""

from __future__ import annotations

import pytest
from differential.conftest import databases  # noqa: F401  (the fixture: SQLite and DynamoDB, same rows)
from differential.test_oracle import MAX_REFUSED, STATEMENT_SEEDS, run_oracle

from sa_dynamo.sqlalchemy_private import greenlet_spawn


async def test_the_async_engine_returns_the_rows_sqlite_returns(databases, make_aio_engine):  # noqa: F811
    sqlite, _, table = databases
    dynamodb = make_aio_engine(dynamodb_scan="allow")
    seed = STATEMENT_SEEDS[0]
    compiled, texts = await greenlet_spawn(
        run_oracle, sqlite, dynamodb.sync_engine, table, seed, f"async-{seed}"
    )
    print(compiled.summary())
    print(texts.summary())
    assert compiled.generated >= 300 and texts.generated >= 100
    failures = [report.failure() for report in (compiled, texts) if report.disagreements]
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)
    for report in (compiled, texts):
        assert report.refused_share < MAX_REFUSED, report.summary()
