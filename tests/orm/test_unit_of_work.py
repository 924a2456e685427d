"""Session.commit() is one atomic ExecuteTransaction; rollback undoes; lost races are
StaleDataError, and run_transaction retries them until every increment lands exactly once."""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import Integer, String, create_engine, select
from sqlalchemy.exc import CompileError, IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.orm.exc import StaleDataError
from support.sent import bodies_sent

import sa_dynamo


class Base(DeclarativeBase):
    pass


class Counter(Base):
    __tablename__ = f"uow_counters_{uuid.uuid4().hex[:6]}"
    pk: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[int] = mapped_column(Integer)
    note: Mapped[str | None]
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    __mapper_args__ = {"version_id_col": version}


@pytest.fixture(scope="module", autouse=True)
def tables(engine):
    Base.metadata.create_all(engine)
    yield
    Base.metadata.drop_all(engine)


@pytest.fixture
def transactions(engine):
    """How many statements each ExecuteTransaction carried: call it."""
    with engine.connect() as conn:
        connection = conn.connection.dbapi_connection
    with bodies_sent(connection, "ExecuteTransaction") as sent:
        yield lambda: [len(body["TransactStatements"]) for body in sent]


def stored(engine, pk: str) -> tuple | None:
    with engine.connect() as conn:
        row = conn.execute(
            select(Counter.value, Counter.note, Counter.version).where(Counter.pk == pk)
        ).one_or_none()
    return None if row is None else tuple(row)


def test_add_flush_change_commit_is_one_transaction_with_one_action(engine, transactions):
    with Session(engine) as session:
        counter = Counter(pk="a", value=1)
        session.add(counter)
        session.flush()
        counter.value = 2
        session.flush()
        counter.note = "two"
        session.add(Counter(pk="b", value=10))
        session.commit()
    assert transactions() == [2]
    assert stored(engine, "a") == (2, "two", 3)


def test_rollback_leaves_the_table_unchanged(engine):
    with Session(engine) as session:
        session.add(Counter(pk="r", value=1))
        session.commit()
    with Session(engine) as session:
        session.get(Counter, "r").value = 99
        session.add(Counter(pk="r2", value=1))
        session.flush()
        session.rollback()
    assert stored(engine, "r") == (1, None, 1)
    assert stored(engine, "r2") is None


def test_a_lost_version_race_is_stale_data_and_the_stored_item_is_untouched(engine):
    with Session(engine) as session:
        session.add(Counter(pk="race", value=0))
        session.commit()
    first, second = Session(engine), Session(engine)
    mine, theirs = first.get(Counter, "race"), second.get(Counter, "race")
    mine.value = 1
    first.commit()
    theirs.value = 100
    with pytest.raises(StaleDataError, match=r"expected to update 1 row\(s\); 0 were matched"):
        second.commit()  # its flush (test_version_checks.py)
    assert stored(engine, "race") == (1, None, 2)
    first.close()
    second.close()


def test_a_commit_with_one_duplicate_key_writes_nothing(engine):
    with Session(engine) as session:
        session.add(Counter(pk="dup", value=1))
        session.commit()
    with Session(engine) as session:
        session.add_all([Counter(pk="fresh", value=1), Counter(pk="dup", value=2)])
        with pytest.raises(IntegrityError, match="Duplicate primary key"):
            session.commit()
    assert stored(engine, "fresh") is None
    assert stored(engine, "dup") == (1, None, 1)


def test_changing_a_primary_key_is_refused_and_nothing_moves(engine):
    with Session(engine) as session:
        session.add(Counter(pk="old", value=1))
        session.commit()
    with Session(engine) as session:
        session.get(Counter, "old").pk = "new"
        with pytest.raises(CompileError, match="DynamoDB keys are immutable"):
            session.commit()
    assert stored(engine, "old") == (1, None, 1)
    assert stored(engine, "new") is None


def test_more_than_100_writes_are_refused_whole_unless_chunking_is_chosen(engine, endpoint_url):
    from sqlalchemy.exc import ProgrammingError

    with Session(engine) as session:
        session.add_all([Counter(pk=f"bulk{i}", value=i) for i in range(101)])
        with pytest.raises(ProgrammingError, match="holds 101 writes; DynamoDB commits at most 100"):
            session.commit()
    assert stored(engine, "bulk0") is None
    chunked = create_engine(
        f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_chunked_commit=True
    )
    try:
        with Session(chunked) as session:
            session.add_all([Counter(pk=f"bulk{i}", value=i) for i in range(101)])
            session.commit()
    finally:
        chunked.dispose()
    assert stored(engine, "bulk100") == (100, None, 1)


def test_threads_incrementing_one_versioned_item_lose_nothing(engine):
    """8 threads x 500 increments through run_transaction end at exactly 4,000."""
    if engine.dialect.is_async:
        pytest.skip("threads need a sync engine; tests/aio/test_transaction.py races asyncio tasks")
    with Session(engine) as session:
        session.add(Counter(pk="hot", value=0))
        session.commit()
    factory = sessionmaker(engine)
    errors: list[BaseException] = []

    def increment(session: Session) -> None:
        session.get(Counter, "hot").value += 1

    def worker() -> None:
        try:
            for _ in range(500):
                sa_dynamo.run_transaction(factory, increment, max_retries=200, max_backoff=0.05)
        except BaseException as error:  # reported below; a thread must not die silently
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert errors == []
    assert stored(engine, "hot")[0] == 4000
