"""SQL text gets the compiler's rules: text() is rewritten to PartiQL, exec_driver_sql is sent
as written, and both are planned and guarded; pandas reads and appends through them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table, text

import sa_dynamo
from sa_dynamo.exc import ScanNotAllowed
from sa_dynamo.sqltext import TranslationError


@pytest.fixture
def orders(engine, table_name):
    metadata = MetaData()
    table = Table(
        table_name,
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
        Column("total", Numeric(10, 2)),
    )
    metadata.create_all(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(
            text(f"INSERT INTO {table_name} (pk, sk, n, total) VALUES (:pk, :sk, :n, :total)"),
            [{"pk": "C#1", "sk": f"ORDER#{i}", "n": i, "total": Decimal(f"{i}.25")} for i in range(6)]
            + [{"pk": "C#2", "sk": "ORDER#0", "n": None, "total": None}],
        )
    yield table
    metadata.drop_all(engine)


def test_text_is_rewritten_and_echo_shows_the_partiql(engine, orders, sent):
    query = text(
        f"SELECT sk, n FROM {orders.name} WHERE n >= :low AND pk = :pk AND sk LIKE 'ORDER#%' LIMIT 2"
    )
    with engine.connect() as conn:
        rows = conn.execute(query, {"pk": "C#1", "low": 2}).all()
    assert rows == [("ORDER#2", Decimal("2")), ("ORDER#3", Decimal("3"))]
    assert sent == [
        f'SELECT "sk", "n" FROM "{orders.name}" WHERE "pk" = ? AND begins_with("sk", \'ORDER#\') AND ("n" >= ?)'
    ]


def test_text_follows_sql_null_semantics(engine, orders):
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        assert conn.execute(text(f"SELECT pk FROM {orders.name} WHERE n IS NULL")).all() == [("C#2",)]
        assert len(conn.execute(text(f"SELECT pk FROM {orders.name} WHERE n <> 3")).all()) == 5


def test_text_the_compiler_would_refuse_is_refused(engine, orders):
    with engine.connect() as conn, pytest.raises(TranslationError, match="DynamoDB PartiQL cannot express"):
        conn.execute(text(f"SELECT pk, count(*) FROM {orders.name} GROUP BY pk"))


def test_raw_scans_obey_the_scan_guard_and_send_nothing(engine, orders, sent):
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        with pytest.raises(ScanNotAllowed):
            conn.execute(text(f"SELECT * FROM {orders.name} WHERE n > 1"))
        with pytest.raises(ScanNotAllowed):
            conn.exec_driver_sql(f'SELECT * FROM "{orders.name}"')
        assert conn.exec_driver_sql(f'SELECT "sk" FROM "{orders.name}" WHERE "pk" = ?', ("C#2",)).all() == [
            ("ORDER#0",)
        ]
    assert sent == [f'SELECT "sk" FROM "{orders.name}" WHERE "pk" = ?']


def test_explain_takes_text(engine, orders):
    plan = sa_dynamo.explain(
        engine, text(f"SELECT n FROM {orders.name} WHERE pk = :p AND sk = :s").bindparams(p="a", s="b")
    )
    assert (plan.operation, plan.partiql) == (
        "GetItem",
        f'SELECT "n" FROM "{orders.name}" WHERE "pk" = ? AND "sk" = ?',
    )


def test_pandas_reads_selects_and_text_and_appends(engine, orders):
    pandas = pytest.importorskip("pandas")
    from sqlalchemy import select

    frame = pandas.read_sql(select(orders.c.sk, orders.c.total).where(orders.c.pk == "C#1"), engine)
    assert list(frame["total"]) == [Decimal(f"{i}.25") for i in range(6)]
    frame = pandas.read_sql(
        text(f"SELECT sk, n FROM {orders.name} WHERE pk = :pk"), engine, params={"pk": "C#2"}
    )
    assert frame["sk"].tolist() == ["ORDER#0"] and frame["n"].isna().tolist() == [True]
    new = pandas.DataFrame({"pk": ["C#3"] * 3, "sk": ["a", "b", "c"], "n": [1, 2, 3]})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        new.to_sql(orders.name, conn, if_exists="append", index=False)
    back = pandas.read_sql(select(orders.c.sk, orders.c.n).where(orders.c.pk == "C#3"), engine)
    assert back.values.tolist() == [["a", 1], ["b", 2], ["c", 3]]
