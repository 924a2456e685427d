"""SQL text gets the compiler's rules: text() and exec_driver_sql become a Core statement that
the one compiler compiles, so they are planned, guarded and refused as Core is; pandas reads and
appends through them."""

from __future__ import annotations

from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table, text
from sqlalchemy.exc import CompileError

import sa_dynamo
from sa_dynamo.exc import ScanNotAllowed, TranslationError


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
        f'SELECT "sk", "n" FROM "{orders.name}" WHERE "pk" = ? AND begins_with("sk", ?) AND ("n" >= ?)'
    ]


def test_text_follows_sql_null_semantics(engine, orders):
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        assert conn.execute(text(f"SELECT pk FROM {orders.name} WHERE n IS NULL")).all() == [("C#2",)]
        assert len(conn.execute(text(f"SELECT pk FROM {orders.name} WHERE n <> 3")).all()) == 5


def test_text_the_compiler_would_refuse_is_refused(engine, orders):
    with engine.connect() as conn, pytest.raises(TranslationError, match="DynamoDB PartiQL cannot express"):
        conn.execute(text(f"SELECT pk, n FROM {orders.name} GROUP BY pk"))  # n neither grouped nor counted


def test_an_arithmetic_set_in_text_is_refused_with_advice_for_the_write(engine, orders, sent):
    with (
        engine.connect() as conn,
        pytest.raises(TranslationError, match=r"^SET n to an arithmetic expression"),
    ):
        conn.execute(text(f"UPDATE {orders.name} SET n = n + 1 WHERE pk = 'C#1' AND sk = 'ORDER#1'"))
    assert not any(statement.startswith("UPDATE") for statement in sent)


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


def test_select_star_gives_the_declared_order_then_other_attributes(engine, orders, raw, endpoint_url):
    """Items keep no attribute order; SQL's SELECT * gives the table's. A column no item of the
    page holds is still a column (None), as in SQL."""
    raw.put_item(TableName=orders.name, Item={"pk": {"S": "C#9"}, "sk": {"S": "x"}, "zz": {"S": "extra"}})
    star = f"SELECT * FROM {orders.name} WHERE pk = 'C#9'"
    with engine.connect() as conn:
        result = conn.execute(text(star))
        assert (list(result.keys()), result.all()) == (
            ["pk", "sk", "n", "total", "zz"],
            [("C#9", "x", None, None, "extra")],
        )
    stranger = sa.create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")  # never saw the Table
    try:
        with stranger.connect() as conn:
            assert list(conn.execute(text(star)).keys()) == ["pk", "sk", "zz"]  # the keys first
    finally:
        stranger.dispose()


def test_text_with_typed_columns_is_rewritten_too(engine, orders, sent):
    """text().columns() is a TextualSelect, not plain text to SQLAlchemy: still rewritten."""
    query = text(f"SELECT sk, n FROM {orders.name} WHERE pk = :pk AND n <> 3 AND sk > 'ORDER#3'")
    with engine.connect() as conn:
        rows = conn.execute(query.columns(orders.c.sk, orders.c.n), {"pk": "C#1"}).all()
    assert rows == [("ORDER#4", 4), ("ORDER#5", 5)]  # n typed Integer: int, not Decimal
    assert sent == [
        f'SELECT "sk", "n" FROM "{orders.name}" WHERE "pk" = ? AND "sk" > ? '
        'AND (("n" <> ? AND attribute_exists("n") AND "n" <> NULL))'
    ]


def test_text_decides_on_the_client_what_dynamodb_would_reject(engine, orders, sent):
    """As for compiled statements: an empty key value is refused, a sort-key BETWEEN with
    reversed bounds and a key attribute IS NULL answer no rows without asking DynamoDB (which
    would reject the BETWEEN, and return every item for the statement without its WHERE)."""
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        with pytest.raises(CompileError, match="key attribute 'sk' with an empty value"):
            conn.execute(
                text(f"SELECT n FROM {orders.name} WHERE pk = :pk AND sk <> :sk"), {"pk": "C#1", "sk": ""}
            )
        between = text(f"SELECT n FROM {orders.name} WHERE pk = :pk AND sk BETWEEN :low AND :high")
        assert conn.execute(between, {"pk": "C#1", "low": "ORDER#4", "high": "ORDER#1"}).all() == []
        assert conn.execute(text(f"SELECT n FROM {orders.name} WHERE pk = 'C#1' AND sk IS NULL")).all() == []
        rows = conn.execute(between, {"pk": "C#1", "low": "ORDER#1", "high": "ORDER#2"}).all()
    assert rows == [(Decimal("1"),), (Decimal("2"),)]
    assert sent == [  # what echo shows; the first and the third were never sent
        f'SELECT "n" FROM "{orders.name}" WHERE "pk" = ? AND "sk" BETWEEN ? AND ?',
        f'SELECT "n" FROM "{orders.name}" WHERE "pk" = ?',
        f'SELECT "n" FROM "{orders.name}" WHERE "pk" = ? AND "sk" BETWEEN ? AND ?',
    ]


@pytest.mark.parametrize(
    ("where", "parameters"), [("pk IN (:a, :b)", {"a": "C#2", "b": "C#2"}), ("pk IN ('C#2', 'C#2')", {})]
)
def test_text_reads_a_partition_key_listed_twice_once(engine, orders, sent, where, parameters):
    """DynamoDB returns a partition once per mention in the IN list; IN means membership, so the
    repeats are dropped, for SQL text as for compiled statements."""
    with engine.connect() as conn:
        rows = conn.execute(text(f"SELECT sk FROM {orders.name} WHERE {where}"), parameters).all()
    assert rows == [("ORDER#0",)]
    assert sent == [f'SELECT "sk" FROM "{orders.name}" WHERE "pk" IN [?]']


def test_explain_of_text_shows_key_condition_and_filter(engine, orders):
    query = text(f"SELECT sk FROM {orders.name} WHERE n > :n AND pk = :pk AND sk >= :sk")
    plan = sa_dynamo.explain(engine, query.bindparams(n=1, pk="C#1", sk="ORDER#2"))
    assert (plan.operation, plan.key_condition, plan.filter) == ("Query", '"pk" = ? AND "sk" >= ?', '"n" > ?')


def test_text_negations_skip_an_attribute_stored_as_null(engine, orders, raw):
    """boto3 writes None as a NULL attribute; SQL's n <> 3 and n NOT IN (...) are unknown for it."""
    raw.put_item(TableName=orders.name, Item={"pk": {"S": "C#9"}, "sk": {"S": "a"}, "n": {"NULL": True}})
    raw.put_item(TableName=orders.name, Item={"pk": {"S": "C#9"}, "sk": {"S": "b"}, "n": {"N": "4"}})
    with engine.connect() as conn:
        for condition in ("n <> 3", "n NOT IN (1, 2)", "NOT n = 3", "n IS NOT NULL"):
            query = text(f"SELECT sk FROM {orders.name} WHERE pk = 'C#9' AND {condition}")
            assert conn.execute(query).all() == [("b",)], condition
        query = text(f"SELECT sk FROM {orders.name} WHERE pk = 'C#9' AND n IS NULL")
        assert conn.execute(query).all() == [("a",)]


def _sql_text_frames(pandas, engines, sql):
    """The frames pandas reads for ``sql`` (a string, as users pass it, and as text()) from each
    engine."""
    return [[pandas.read_sql(query, engine) for query in (sql, text(sql))] for engine in engines]


def test_pandas_reads_sql_text_typed_as_the_declared_table(engine, orders):
    """Integer columns come back as int (int64 in pandas), as on SQLite, not as Decimal (which
    pandas makes float): the engine created the table, so it knows the columns' types."""
    pandas = pytest.importorskip("pandas")
    sqlite = sa.create_engine("sqlite://")
    orders.metadata.create_all(sqlite)
    with engine.connect() as conn, sqlite.begin() as copy:
        copy.execute(
            orders.insert(),
            [dict(row._mapping) for row in conn.execute(orders.select().where(orders.c.pk == "C#1"))],
        )
    for sql in (
        f"SELECT * FROM {orders.name} WHERE pk = 'C#1' ORDER BY sk",
        f"SELECT sk, n, n AS m, total FROM {orders.name} WHERE pk = 'C#1' ORDER BY sk",
    ):
        dynamodb, on_sqlite = _sql_text_frames(pandas, (engine, sqlite), sql)
        for frame, expected in zip(dynamodb, on_sqlite, strict=True):
            assert str(frame["n"].dtype) == "int64"
            pandas.testing.assert_frame_equal(frame, expected)
    sqlite.dispose()


def test_sql_text_reads_a_reflected_table_as_its_select_does(orders, raw, endpoint_url):
    """An engine that reflected the table types SQL text's results as the reflected Table's
    own select() does: a document's numbers are int, as JSON means them."""
    pandas = pytest.importorskip("pandas")
    item = {"pk": {"S": "C#5"}, "sk": {"S": "a"}, "n": {"N": "7"}, "doc": {"M": {"k": {"N": "1"}}}}
    raw.put_item(TableName=orders.name, Item=item)
    other = sa.create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    reflected = Table(orders.name, MetaData(), autoload_with=other)
    assert type(reflected.c.doc.type) is sa.JSON
    with other.connect() as conn:
        typed = conn.execute(sa.select(reflected.c.sk, reflected.c.doc).where(reflected.c.pk == "C#5")).all()
        assert conn.execute(text(f"SELECT sk, doc FROM {orders.name} WHERE pk = 'C#5'")).all() == typed
        assert type(typed[0].doc["k"]) is int
    frame = pandas.read_sql(f"SELECT * FROM {orders.name} WHERE pk = 'C#5'", other)
    expected = pandas.read_sql(sa.select(reflected).where(reflected.c.pk == "C#5"), other)
    pandas.testing.assert_frame_equal(frame, expected[list(frame.columns)])  # the item has no total
    other.dispose()
