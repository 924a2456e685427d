"""AUTOCOMMIT writes whose answer is lost (a reset after DynamoDB applied them, half an answer)
and that are sent again without an idempotency token: the second attempt meets the item as the
first left it. No write that may have been applied counts 0 rows: an UPDATE whose item holds
what it set counts its row, anything unproven raises an OperationalError whose
``outcome_unknown`` is True; a write none of whose answers arrived says so too, on either
transport (half an answer is a lost one on both: tests/dbapi/test_transport.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, bindparam, delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}


@pytest.fixture
def notes(engine: Engine) -> Iterator[Table]:
    table = Table(
        f"lost_{uuid.uuid4().hex[:10]}",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("v", String),
        Column("version", Integer),
    )
    table.create(engine)
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(table), [{"pk": "p", "sk": f"{i}", "v": "old", "version": 1} for i in range(3)])
    yield table
    table.drop(engine)


def stored(engine: Engine, notes: Table) -> list[tuple]:
    with engine.connect() as conn:
        query = select(notes.c.sk, notes.c.v, notes.c.version).where(notes.c.pk == "p").order_by(notes.c.sk)
        return [tuple(row) for row in conn.execute(query.execution_options(dynamodb_consistent_read=True))]


def versioned_update(notes: Table, sk: str, version: int):
    """What the ORM sends for a versioned row: its condition is false once it is applied."""
    return (
        update(notes)
        .where(notes.c.pk == "p", notes.c.sk == sk, notes.c.version == version)
        .values(v="new", version=version + 1)
    )


@pytest.mark.parametrize("fault", ["reset_after", "cut_short"])
def test_an_update_applied_and_sent_again_counts_its_row(engine, notes, proxy, through, fault):
    proxy.script("ExecuteStatement", fault)
    with through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn:
        assert conn.execute(versioned_update(notes, "0", 1)).rowcount == 1
    assert proxy.counts.forwarded["ExecuteStatement"] == 2  # applied, then sent again
    assert proxy.counts.requests["BatchGetItem"] == 1  # the item read back
    assert stored(engine, notes) == [("0", "new", 2), ("1", "old", 1), ("2", "old", 1)]


def test_an_update_that_matches_nothing_after_a_lost_answer_is_of_unknown_outcome(
    engine, notes, proxy, through
):
    """The first attempt never reached DynamoDB, which the driver cannot know: the WHERE is false
    and the item does not hold what the UPDATE sets, so nothing proves it was not applied."""
    proxy.script("ExecuteStatement", "reset_before")
    with (
        pytest.raises(OperationalError) as raised,
        through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn,
    ):
        conn.execute(versioned_update(notes, "0", 7))
    assert raised.value.orig.outcome_unknown
    assert "the outcome of this UPDATE of {'pk': 'p', 'sk': '0'} in" in str(raised.value)
    assert "read the item back before writing it again" in str(raised.value)
    assert stored(engine, notes) == [("0", "old", 1), ("1", "old", 1), ("2", "old", 1)]


def test_an_update_whose_where_reads_nothing_it_sets_is_not_proven_by_the_item(engine, notes, proxy, through):
    """The item already holds what the UPDATE sets and its WHERE is false (SQLite: 0 rows). Had
    the lost attempt been applied, it would have left that WHERE as true as it was, so the
    resend's failure and the item prove nothing: not a row counted (the lost-answer differential
    found it)."""
    proxy.script("ExecuteStatement", "reset_before")
    statement = (
        update(notes).where(notes.c.pk == "p", notes.c.sk == "0", notes.c.version == 7).values(v="old")
    )
    with (
        pytest.raises(OperationalError) as raised,
        through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn,
    ):
        conn.execute(statement)
    assert raised.value.orig.outcome_unknown
    assert stored(engine, notes) == [("0", "old", 1), ("1", "old", 1), ("2", "old", 1)]


def test_a_where_that_matches_nothing_after_a_throttle_counts_0(engine, notes, proxy, through):
    """A throttled attempt was refused, not lost: the resend's answer is the whole truth."""
    proxy.script("ExecuteStatement", "throttle")
    with through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn:
        assert conn.execute(versioned_update(notes, "0", 7)).rowcount == 0
    assert proxy.counts.requests["BatchGetItem"] == 0


def test_a_delete_sent_again_after_a_lost_answer_is_of_unknown_outcome(engine, notes, proxy, through):
    """Sent again, the DELETE finds no item: deleted by its first attempt, or never there."""
    proxy.script("ExecuteStatement", "reset_after")
    with (
        pytest.raises(OperationalError) as raised,
        through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn,
    ):
        conn.execute(delete(notes).where(notes.c.pk == "p", notes.c.sk == "1"))
    assert raised.value.orig.outcome_unknown
    assert "it found no item to delete" in str(raised.value)
    assert stored(engine, notes) == [("0", "old", 1), ("2", "old", 1)]


def test_an_executemany_of_updates_applied_and_sent_again_counts_every_row(engine, notes, proxy, through):
    proxy.script("BatchExecuteStatement", "reset_after")
    statement = (
        update(notes)
        .where(notes.c.pk == "p", notes.c.sk == bindparam("key"), notes.c.version == 1)
        .values(v="new", version=2)
    )
    with through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn:
        assert conn.execute(statement, [{"key": f"{i}"} for i in range(3)]).rowcount == 3
    assert proxy.counts.forwarded["BatchExecuteStatement"] == 2
    assert stored(engine, notes) == [("0", "new", 2), ("1", "new", 2), ("2", "new", 2)]


def test_an_executemany_of_deletes_sent_again_says_which_rows_are_unknown(engine, notes, proxy, through):
    proxy.script("BatchExecuteStatement", "reset_after")
    statement = delete(notes).where(notes.c.pk == "p", notes.c.sk == bindparam("key"))
    with (
        pytest.raises(OperationalError) as raised,
        through(proxy, retries=2).connect().execution_options(**AUTOCOMMIT) as conn,
    ):
        conn.execute(statement, [{"key": "0"}, {"key": "2"}])
    error = raised.value.orig
    assert (error.applied, error.unapplied, error.unknown, error.outcome_unknown) == ([], [], [0, 1], True)
    assert stored(engine, notes) == [("1", "old", 1)]


@pytest.mark.parametrize("second", ["reset_after", "cut_short"])
def test_an_insert_none_of_whose_answers_arrived_is_of_unknown_outcome(engine, notes, proxy, through, second):
    """Applied by its first attempt; the second's answer (a duplicate key) lost, or cut in half."""
    proxy.script("ExecuteStatement", "reset_after", second)
    with (
        pytest.raises(OperationalError) as raised,
        through(proxy, retries=1).connect().execution_options(**AUTOCOMMIT) as conn,
    ):
        conn.execute(insert(notes), {"pk": "p", "sk": "9", "v": "new", "version": 1})
    assert raised.value.orig.outcome_unknown
    assert "connection to DynamoDB failed" in str(raised.value)
    assert "The outcome of this INSERT is unknown" in str(raised.value)
    assert ("9", "new", 1) in stored(engine, notes)


def test_a_row_of_a_unique_executemany_whose_commit_was_unanswered_is_unknown(engine, proxy, through):
    """To a table with a UNIQUE column each row is its own transaction: the row whose commit lost
    every answer may have been applied (the lost-answer differential found it reported as not
    applied, though DynamoDB had deleted its item)."""
    table = Table(
        f"lost_uq_{uuid.uuid4().hex[:8]}",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("u", String, unique=True),
    )
    table.create(engine)
    try:
        with engine.connect().execution_options(**AUTOCOMMIT) as conn:
            conn.execute(insert(table), [{"pk": "a", "u": "x"}, {"pk": "b", "u": "y"}])
        proxy.script("ExecuteTransaction", "delay", "reset_after")  # the first row answered
        with (
            pytest.raises(OperationalError) as raised,
            through(proxy, retries=0).connect().execution_options(**AUTOCOMMIT) as conn,
        ):
            conn.execute(delete(table).where(table.c.pk == bindparam("key")), [{"key": "a"}, {"key": "b"}])
        error = raised.value.orig
        assert (error.applied, error.unapplied, error.unknown, error.outcome_unknown) == ([0], [], [1], True)
        with engine.connect() as conn:
            assert conn.execute(select(table.c.pk).where(table.c.pk.in_(["a", "b"]))).all() == []
    finally:
        table.drop(engine)


@pytest.mark.parametrize("operation", ["ExecuteStatement", "ExecuteTransaction"])
def test_a_write_throttled_after_a_lost_answer_is_of_unknown_outcome(
    engine, notes, proxy, through, operation
):
    """The first attempt was applied and its answer cut short, the resend throttled past the
    retries: the throttle refused only the resend (the lost-answer differential found a commit
    reported as throttled, so not applied, whose item was written)."""
    proxy.script(operation, "cut_short", "throttle")
    row = {"pk": "p", "sk": "9", "v": "new", "version": 1}
    with pytest.raises(OperationalError) as raised, through(proxy, retries=1).connect() as conn:
        if operation == "ExecuteTransaction":
            conn.execute(insert(notes), row)
            conn.commit()
        else:
            conn.execution_options(**AUTOCOMMIT).execute(insert(notes), row)
    assert raised.value.orig.outcome_unknown
    assert ("9", "new", 1) in stored(engine, notes)
