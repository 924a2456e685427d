"""A global index holds only the items that have its key attributes. The plan reads it only when
that cannot lose a row the WHERE matches: the WHERE tests the index's sort key, or the table
says every item has it (nullable=False), or the user chose the index (use_index)."""

from __future__ import annotations

import uuid
import warnings

import pytest
from sqlalchemy import Column, Index, Integer, MetaData, String, Table, and_, create_engine, or_, select, text
from sqlalchemy.exc import CompileError

import sa_dynamo
from sa_dynamo.exc import ScanWarning

metadata = MetaData()
orders = Table(
    f"sparse_{uuid.uuid4().hex[:8]}",
    metadata,
    Column("pk", String, primary_key=True),
    Column("status", String),
    Column("placed", String),  # not every item has it
    Column("day", String, nullable=False),  # every item has it
    Column("n", Integer),
    Index("by_status", "status", "placed", dynamodb_projection="ALL"),
    Index("by_status_day", "n", "day", dynamodb_projection="ALL"),
)
ROWS = [
    {"pk": "a", "status": "open", "placed": "2026-01", "day": "mon", "n": 1},
    {"pk": "b", "status": "open", "placed": None, "day": "tue", "n": 1},  # not in by_status
    {"pk": "c", "status": "shut", "placed": "2026-02", "day": "wed", "n": 2},
]


@pytest.fixture(scope="module")
def table(engine):
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(orders.insert(), ROWS)
    yield orders
    metadata.drop_all(engine)


def test_a_partition_of_a_sparse_index_is_not_read_for_a_where_that_matches_more(engine, table):
    query = select(orders.c.pk).where(orders.c.status == "open")
    plan = sa_dynamo.explain(engine, query)
    assert (plan.operation, plan.index) == ("Scan", None)
    assert plan.reason.endswith(
        "index 'by_status' leaves out the items without its sort key 'placed', which the WHERE "
        "matches too: add a condition on placed (.is_not(None) will do), or read the index anyway "
        f'with use_index(\'by_status\') (FROM "{orders.name}"."by_status" in SQL text)'
    )
    with engine.connect() as conn, warnings.catch_warnings():
        warnings.simplefilter("ignore", ScanWarning)
        assert sorted(conn.scalars(query)) == ["a", "b"]  # SQLite's rows: b has no placed
        assert sorted(conn.scalars(text(f"SELECT pk FROM {orders.name} WHERE status = 'open'"))) == ["a", "b"]


@pytest.mark.parametrize(
    "condition",
    [
        orders.c.placed.is_not(None),
        orders.c.placed > "2025",
        orders.c.placed.startswith("2026"),
        orders.c.placed.in_(["2026-01", "2027-01"]),
    ],
)
def test_a_condition_on_the_sort_key_lets_the_index_serve(engine, table, condition):
    query = select(orders.c.pk).where(orders.c.status == "open", condition)
    plan = sa_dynamo.explain(engine, query)
    assert (plan.operation, plan.index) == ("Query", "by_status")
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        assert conn.scalars(query).all() == ["a"]


def test_not_in_on_the_sort_key_lets_the_index_serve_and_an_empty_list_is_refused(engine, table):
    """NOT IN is false for an item without the sort key, except with an empty list, true for
    every row (SQLite agrees), which DynamoDB cannot express: refused, with advice for NOT IN."""
    query = select(orders.c.pk).where(orders.c.status == "open", orders.c.placed.not_in(["2027-01"]))
    plan = sa_dynamo.explain(engine, query)
    assert (plan.operation, plan.index) == ("Query", "by_status")
    empty = select(orders.c.pk).where(orders.c.status == "open", orders.c.placed.not_in([]))
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        assert conn.scalars(query).all() == ["a"]
        with pytest.raises(CompileError, match=r"leave the NOT IN condition out when the list is empty"):
            conn.execute(empty)


def test_a_sort_key_every_item_has_and_a_chosen_index_read_the_index(engine, table):
    complete = select(orders.c.pk).where(orders.c.n == 1)  # day is nullable=False
    assert sa_dynamo.explain(engine, complete).index == "by_status_day"
    chosen = select(orders.c.pk).where(orders.c.status == "open").options(sa_dynamo.use_index("by_status"))
    assert sa_dynamo.explain(engine, chosen).index == "by_status"
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        assert sorted(conn.scalars(complete)) == ["a", "b"]
        assert conn.scalars(chosen).all() == ["a"]  # the user's choice: the index's items only


def test_negated_tests_and_null_tests_of_the_keys_of_an_index_read(engine, table):
    """On an index read DynamoDB rejects ``<> NULL`` and IS [NOT] MISSING on key attributes;
    every item read has them, so the tests need no presence guard."""
    base = select(orders.c.pk).where(orders.c.status == "open", orders.c.placed.is_not(None))
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        assert conn.scalars(base.where(orders.c.placed != "2026-01")).all() == []
        assert conn.scalars(base.where(orders.c.pk != "b", orders.c.placed.not_in(["x"]))).all() == ["a"]
        chosen = (
            select(orders.c.pk).where(orders.c.status == "open").options(sa_dynamo.use_index("by_status"))
        )
        assert conn.scalars(chosen.where(orders.c.placed.is_(None))).all() == []  # b is not in the index
        assert conn.scalars(chosen.where(orders.c.status.is_not(None))).all() == ["a"]


def test_an_order_by_refused_on_the_scan_says_why_the_index_was_passed_over(engine, table):
    query = select(orders.c.pk).where(orders.c.status == "open").order_by(orders.c.placed)
    with pytest.raises(CompileError) as refused:
        sa_dynamo.explain(engine, query)
    assert str(refused.value).startswith(
        "DynamoDB PartiQL cannot express ORDER BY on a scan (index 'by_status' leaves out the items "
        "without its sort key 'placed', which the WHERE matches too: add a condition on placed"
    )


@pytest.mark.parametrize(
    "condition",
    [
        or_(orders.c.n.is_(None), orders.c.pk == "a"),
        or_(orders.c.n.is_not(None), orders.c.pk == "a"),
        or_(orders.c.day.is_(None), orders.c.n.is_not(None)),
        and_(orders.c.n.is_not(None), orders.c.day > "a"),
        ~or_(orders.c.n.is_(None), orders.c.day == "mon"),
    ],
)
def test_null_tests_of_the_keys_of_an_index_read_are_decided_before_sending(engine, table, condition):
    """Every item of an index has its key attributes: IS [NOT] NULL of one is known. DynamoDB
    Local refuses attribute_type() on a number key ("Condition parameter type does not match
    schema type"), and NULL comparisons on keys: the test is not sent, SQLite's rows come back."""
    query = select(orders.c.pk).where(orders.c.n == 1, condition)
    assert sa_dynamo.explain(engine, query).index == "by_status_day"
    sqlite = create_engine("sqlite://")
    metadata.create_all(sqlite)
    with sqlite.begin() as conn:
        conn.execute(orders.insert(), ROWS)
        expected = sorted(conn.scalars(query))
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        assert sorted(conn.scalars(query)) == expected
        assert sorted(conn.scalars(query.order_by(orders.c.day))) == expected
