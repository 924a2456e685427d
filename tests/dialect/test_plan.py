"""The access path of each statement, the scan guard that acts on it, and explain()."""

from __future__ import annotations

import logging
import warnings

import pytest
from sqlalchemy import Column, Index, Integer, MetaData, String, Table, create_engine, select
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo
from sa_dynamo.exc import ScanNotAllowed, ScanWarning

metadata = MetaData()
app = Table(
    "plan_app",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("gsi1pk", String),
    Column("n", Integer),
    Index("gsi1", "gsi1pk", dynamodb_projection="KEYS_ONLY"),
)


@pytest.fixture(scope="module")
def table(engine):
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(app.insert(), [{"pk": "A", "sk": str(i), "gsi1pk": "G", "n": i} for i in range(3)])
    yield app
    metadata.drop_all(engine)


@pytest.mark.parametrize(
    ("statement", "operation", "index", "key", "filter_"),
    [
        (select(app).where(app.c.pk == "A", app.c.sk == "1"), "GetItem", None, '"pk" = ? AND "sk" = ?', ""),
        (select(app).where(app.c.pk == "A", app.c.n > 1), "Query", None, '"pk" = ?', '"n" > ?'),
        (select(app).where(app.c.pk.in_(["A", "B"])), "Query", None, '"pk" IN [?, ?]', ""),
        (select(app.c.pk, app.c.sk).where(app.c.gsi1pk == "G"), "Query", "gsi1", '"gsi1pk" = ?', ""),
        (select(app).where(app.c.n > 1), "Scan", None, "", '"n" > ?'),
        (app.insert().values(pk="A", sk="9"), "PutItem", None, "", ""),
        (
            app.update().where(app.c.pk == "A", app.c.sk == "1").values(n=2),
            "UpdateItem",
            None,
            '"pk" = ? AND "sk" = ?',
            "",
        ),
        (
            app.delete().where(app.c.pk == "A", app.c.sk == "1", app.c.n == 1),
            "DeleteItem",
            None,
            '"pk" = ? AND "sk" = ?',
            '"n" = ?',
        ),
    ],
)
def test_explain_names_the_access_path_and_sends_nothing(
    engine, table, sent, statement, operation, index, key, filter_
):
    plan = sa_dynamo.explain(engine, statement)
    assert (plan.operation, plan.table, plan.index, plan.key_condition, plan.filter) == (
        operation,
        "plan_app",
        index,
        key,
        filter_,
    )
    assert plan.partiql.startswith(("SELECT", "INSERT", "UPDATE", "DELETE"))
    assert sent == [plan.partiql]  # the event saw it; the driver did not send it
    with engine.connect() as conn:
        assert conn.scalars(select(app.c.n).where(app.c.pk == "A")).all() == [0, 1, 2]


def test_explain_says_why_an_index_was_passed_over(engine, table):
    plan = sa_dynamo.explain(engine, select(app).where(app.c.gsi1pk == "G"))
    assert plan.operation == "Scan"
    assert plan.reason == (
        "the WHERE has no equality (= or IN) on its partition key 'pk'; index 'gsi1' does not project every attribute the query reads"
    )
    assert str(plan).splitlines()[0] == "operation:     Scan"


def test_scan_guard_error_sends_nothing(engine, table, sent):
    with engine.connect() as conn, pytest.raises(ScanNotAllowed, match="scans the whole table 'plan_app'"):
        conn.execute(select(app).where(app.c.n > 1).execution_options(dynamodb_scan="error"))
    assert sent == []


def test_scan_guard_warns_by_default_and_logs(engine, table, caplog):
    with caplog.at_level(logging.INFO, logger="sa_dynamo"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with engine.connect() as conn:
            rows = conn.scalars(select(app.c.n).where(app.c.n > 0)).all()
    assert sorted(rows) == [1, 2]
    assert [w.category for w in caught] == [ScanWarning]
    assert "or pass dynamodb_scan='allow'" in str(caught[0].message)
    assert (
        "Scan on plan_app; filter: \"n\" > ?; (the WHERE has no equality (= or IN) on its partition key 'pk')"
        in caplog.text
    )


def test_scan_guard_allow_from_create_engine(endpoint_url, table):
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="error")
    try:
        with engine.connect() as conn:
            with pytest.raises(ScanNotAllowed):
                conn.execute(select(app).where(app.c.n > 1))
            allowed = conn.execution_options(dynamodb_scan="allow")
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert sorted(allowed.scalars(select(app.c.n).where(app.c.n > 1)).all()) == [2]
    finally:
        engine.dispose()


def test_a_statements_own_scan_policy_wins_over_its_connections(engine, table):
    """SQLAlchemy lets a connection's execution option override a statement's; for the scan
    guard the statement's own choice is the more specific one, and it stands either way."""
    scan = select(app.c.n).where(app.c.n > 1)
    with engine.connect().execution_options(dynamodb_scan="error") as strict:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert strict.scalars(scan.execution_options(dynamodb_scan="allow")).all() == [2]
        with pytest.raises(ScanNotAllowed):
            strict.execute(scan)
    with engine.connect().execution_options(dynamodb_scan="allow") as lenient:
        with pytest.raises(ScanNotAllowed):
            lenient.execute(scan.execution_options(dynamodb_scan="error"))
        with Session(lenient) as session, pytest.raises(ScanNotAllowed):
            session.execute(scan.execution_options(dynamodb_scan="error"))


def test_bad_scan_policy_is_refused(endpoint_url):
    with pytest.raises(Exception, match="dynamodb_scan must be one of allow, warn, error"):
        create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="sometimes")


def test_explain_through_a_session_applies_orm_filters(engine):
    class Base(DeclarativeBase):
        pass

    class Thing(sa_dynamo.SingleTable, Base):
        __tablename__ = "plan_things"
        pk: Mapped[str] = mapped_column(primary_key=True)

    try:
        with Session(engine) as session:
            plan = sa_dynamo.explain(session, select(Thing).where(Thing.pk == "x"))
        assert plan.operation == "GetItem"
        assert plan.partiql == 'SELECT "pk", "$type" FROM "plan_things" WHERE "pk" = ? AND ("$type" IN [?])'
    finally:
        Base.registry.dispose()


def test_dynamodb_index_execution_option_reads_the_index(engine, table, sent):
    with engine.begin() as conn:
        conn.execute(app.insert().values(pk="B", sk="0", n=7))  # no gsi1pk: absent from the index
    with engine.connect() as conn:
        query = select(app.c.pk, app.c.sk).where(app.c.pk.in_(["A", "B"]))
        everything = conn.execute(query).all()
        options = {"dynamodb_index": "gsi1", "dynamodb_scan": "allow"}  # pk is no key of gsi1
        indexed = conn.execute(query, execution_options=options).all()
        again = conn.execute(query).all()
    with engine.begin() as conn:
        conn.execute(app.delete().where(app.c.pk == "B", app.c.sk == "0"))
    assert sorted(everything) == [("A", "0"), ("A", "1"), ("A", "2"), ("B", "0")] == sorted(again)
    assert sorted(indexed) == [("A", "0"), ("A", "1"), ("A", "2")]
    # each variant compiled on its own: the cached plain statement is not reused for the index
    assert sent[1:4] == [
        'SELECT "pk", "sk" FROM "plan_app" WHERE "pk" IN [?, ?]',
        # DynamoDB Local needs the IN on the table's key below NOT NOT on a global index
        'SELECT "pk", "sk" FROM "plan_app"."gsi1" WHERE NOT (NOT ("pk" IN [?, ?]))',
        'SELECT "pk", "sk" FROM "plan_app" WHERE "pk" IN [?, ?]',
    ]


def test_dynamodb_index_through_a_session_and_explain(engine, table):
    class Base(DeclarativeBase):
        pass

    class Row(Base):
        __table__ = app

    try:
        query = select(Row.pk, Row.sk).where(Row.gsi1pk == "G", Row.pk == "A")
        with Session(engine) as session:
            rows = session.execute(query, execution_options={"dynamodb_index": "gsi1"}).all()
            plan = sa_dynamo.explain(session, query.execution_options(dynamodb_index="gsi1"))
            with pytest.raises(CompileError, match="index 'gsi1' does not project n, which the query reads"):
                session.scalars(select(Row).where(Row.gsi1pk == "G").options(sa_dynamo.use_index("gsi1")))
        assert sorted(rows) == [("A", "0"), ("A", "1"), ("A", "2")]
        assert (plan.operation, plan.index, plan.key_condition, plan.filter) == (
            "Query",
            "gsi1",
            '"gsi1pk" = ?',
            '"pk" = ?',
        )
    finally:
        Base.registry.dispose()


def test_dynamodb_index_refusals(engine, table, sent):
    from sqlalchemy import text
    from sqlalchemy.exc import ArgumentError

    with engine.connect() as conn:
        with pytest.raises(ArgumentError, match="dynamodb_consistent_read is not available on a global"):
            conn.execute(
                select(app.c.pk).where(app.c.gsi1pk == "G"),
                execution_options={"dynamodb_index": "gsi1", "dynamodb_consistent_read": True},
            )
        with pytest.raises(ArgumentError, match=r'in SQL text, read the index as FROM "table"\."index"'):
            conn.execute(
                text("SELECT pk FROM plan_app WHERE pk = 'A'").execution_options(dynamodb_index="gsi1")
            )
        with pytest.raises(ArgumentError, match=r"contradicts the statement's use_index\('gsi1'\)"):
            conn.execute(
                select(app.c.pk).where(app.c.pk == "A").options(sa_dynamo.use_index("gsi1")),
                execution_options={"dynamodb_index": "other"},
            )
    assert sent == []
