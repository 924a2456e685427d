"""upsert(): an overwrite write through BatchWriteItem, where INSERT would refuse the key."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select
from sqlalchemy.exc import IntegrityError, NotSupportedError
from support.sent import operations_sent

import sa_dynamo


@pytest.fixture
def setup(endpoint_url, table_name):
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    metadata = MetaData()
    table = Table(
        table_name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("n", Integer),
        Column("s", String),
    )
    metadata.create_all(engine)
    yield engine, table
    metadata.drop_all(engine)
    engine.dispose()


def test_upsert_overwrites_where_insert_refuses(setup):
    engine, table = setup
    with (
        engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn,
        operations_sent(conn.connection.dbapi_connection) as calls,
    ):
        conn.execute(table.insert(), [{"pk": "a", "n": 1, "s": "old"}])
        with pytest.raises(IntegrityError):
            conn.execute(table.insert(), [{"pk": "a", "n": 2}])
        result = conn.execute(
            sa_dynamo.upsert(table), [{"pk": "a", "n": 3}] + [{"pk": f"k{i}", "n": i} for i in range(30)]
        )
        assert result.rowcount == 31
        rows = dict(
            conn.execute(select(table.c.pk, table.c.n).where(table.c.pk.in_(["a", "k0", "k29"]))).all()
        )
        s = conn.scalar(select(table.c.s).where(table.c.pk == "a"))
    assert rows == {"a": 3, "k0": 0, "k29": 29}
    assert s is None  # the whole item was replaced, not merged
    assert calls.count("BatchWriteItem") == 2  # 31 items, 25 per call


def test_upsert_statement_and_plan(setup):
    engine, table = setup
    statement = sa_dynamo.upsert(table).values(pk="a", n=1)
    assert str(statement.compile(engine)) == f"PUT INTO \"{table.name}\" VALUE {{'pk': ?, 'n': ?}}"
    assert sa_dynamo.explain(engine, statement).operation == "BatchWriteItem"


def test_upsert_inside_a_transaction_is_refused(setup):
    engine, table = setup
    with (
        engine.connect() as conn,
        pytest.raises(NotSupportedError, match="run it on an AUTOCOMMIT connection"),
    ):
        conn.execute(sa_dynamo.upsert(table), [{"pk": "a", "n": 1}])
