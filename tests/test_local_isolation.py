"""Each in-memory ``dynamodb+local://`` engine sees only its own tables, as each ``sqlite://``
engine does (issue 31 item 7): a test suite that creates and drops its tables per test keeps no
data between tests. ``?shared=NAME`` lets engines, sync and async, share theirs. The embedded
server is started here (not the session's, which SA_DYNAMO_LOCAL_ENDPOINT names)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, inspect, select
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import create_async_engine

from sa_dynamo import local_server
from sa_dynamo.dialect.local import DynamoDBLocalDialect

HERO = Table("hero", MetaData(), Column("id", Integer, primary_key=True), Column("name", String))


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``dynamodb+local://`` starts its own server for this test, stopped afterwards."""
    monkeypatch.delenv(local_server.ENV_ENDPOINT, raising=False)
    servers: dict = {}
    monkeypatch.setattr(DynamoDBLocalDialect, "_servers", servers)
    yield
    for server in servers.values():
        server.stop()


def names(engine) -> list[tuple]:
    with engine.connect() as conn:
        return conn.execute(select(HERO.c.name).order_by(HERO.c.id).where(HERO.c.id.in_([1, 2]))).all()


def test_two_engines_have_their_own_tables(embedded):
    first, second = create_engine("dynamodb+local://"), create_engine("dynamodb+local://")
    for engine, name in ((first, "Deadpond"), (second, "Rusty-Man")):
        HERO.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(insert(HERO).values(id=1, name=name))
    assert names(first) == [("Deadpond",)]
    assert names(second) == [("Rusty-Man",)]
    HERO.metadata.drop_all(first)
    assert inspect(first).get_table_names() == []
    assert inspect(second).get_table_names() == ["hero"]
    assert inspect(create_engine("dynamodb+local://")).get_table_names() == []


def test_engines_that_name_one_shared_database_share_it_sync_and_async(embedded):
    writer = create_engine("dynamodb+local://?shared=tutorial")
    HERO.metadata.create_all(writer)
    with writer.begin() as conn:
        conn.execute(insert(HERO).values(id=2, name="Spider-Boy"))

    async def read() -> list[tuple]:
        engine = create_async_engine("dynamodb+aiolocal://?shared=tutorial")
        try:
            async with engine.connect() as conn:
                return (await conn.execute(select(HERO.c.name).where(HERO.c.id == 2))).all()
        finally:
            await engine.dispose()

    assert asyncio.run(read()) == [("Spider-Boy",)]
    assert names(create_engine("dynamodb+local://?shared=tutorial")) == [("Spider-Boy",)]
    assert inspect(create_engine("dynamodb+local://?shared=other")).get_table_names() == []
    assert inspect(create_engine("dynamodb+local://")).get_table_names() == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("dynamodb+local://?shared=my-app", "the name is letters and digits only"),
        ("dynamodb+local://?shared=a&data_dir=/tmp", "engines on one data_dir, or with one access key"),
        ("dynamodb+local://key:secret@?shared=a", "drop shared="),
    ],
)
def test_a_shared_name_that_cannot_be_used_is_refused(url, message):
    with pytest.raises(ArgumentError, match=message):
        create_engine(url)
