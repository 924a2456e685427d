"""An Integer primary key alone (SQLAlchemy's ``autoincrement="auto"``: SQLModel's
``id: int | None = Field(default=None, primary_key=True)``, Flask-SQLAlchemy's
``db.Column(db.Integer, primary_key=True)``) is numbered as SQLite numbers it: 1, 2, 3, ... for
one process inserting in turn, the id known to the ORM after flush and to
``inserted_primary_key``. The ids come from a counter item taken in blocks (one UpdateItem per
block), never given twice, also to 8 threads at once. The same SQLAlchemy code runs on SQLite
and on DynamoDB Local and gives the same rows.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, inspect, select
from sqlalchemy.exc import ArgumentError, DataError, IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from sa_dynamo.check import check
from sa_dynamo.dbapi.counters import COUNTERS_TABLE, DEFAULT_BLOCK
from tests.support.sent import bodies_sent, operations_sent

SUFFIX = uuid.uuid4().hex[:8]


class Base(DeclarativeBase):
    pass


class Hero(Base):
    """SQLModel's tutorial Hero, as SQLAlchemy declares it."""

    __tablename__ = f"ai_hero_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    age: Mapped[int | None]


def _engine(endpoint_url: str, **options):
    return create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", **options)


@pytest.fixture
def both(endpoint_url: str) -> Iterator[tuple]:
    """(DynamoDB's engine, SQLite's), each with the models' tables created, dropped after."""
    dynamodb, sqlite = _engine(endpoint_url), create_engine("sqlite://")
    for engine in (dynamodb, sqlite):
        Base.metadata.create_all(engine)
    yield dynamodb, sqlite
    Base.metadata.drop_all(dynamodb)
    dynamodb.dispose()
    sqlite.dispose()


def _heroes(engine) -> list[tuple]:
    with Session(engine) as session:
        query = select(Hero.id, Hero.name, Hero.age).execution_options(dynamodb_scan="allow")
        return sorted(tuple(row) for row in session.execute(query))


def _tutorial_steps(engine) -> list[list[int]]:
    """The ids the ORM gives its objects: three added and committed together, then one at a
    time, then a flush inside a transaction that goes on."""
    seen = []
    with Session(engine) as session:
        heroes = [Hero(name="Deadpond"), Hero(name="Spider-Boy"), Hero(name="Rusty-Man", age=48)]
        session.add_all(heroes)
        session.commit()
        seen.append([hero.id for hero in heroes])
    for name in ("Tarantula", "Black Lion"):
        with Session(engine) as session:
            hero = Hero(name=name, age=32)
            session.add(hero)
            session.flush()
            seen.append([hero.id])  # known at flush, before the commit
            session.commit()
    return seen


def test_orm_ids_are_sqlites(both):
    dynamodb, sqlite = both
    assert _tutorial_steps(dynamodb) == _tutorial_steps(sqlite) == [[1, 2, 3], [4], [5]]
    assert _heroes(dynamodb) == _heroes(sqlite)


def test_core_inserts_and_executemany_are_numbered_as_on_sqlite(both):
    table = Hero.__table__
    results = []
    for engine in both:
        with engine.begin() as conn:
            one = conn.execute(insert(table).values(name="a")).inserted_primary_key
            many = conn.execute(
                insert(table), [{"name": n, "age": a} for n, a in (("b", None), ("c", 3), ("d", None))]
            )
            two = conn.execute(insert(table), {"name": "e"}).inserted_primary_key
            for age in (7, 8):  # a value in the statement; an id in a later row (ignored), or None
                conn.execute(insert(table).values(age=age), [{"name": "f"}, {"name": "g", "id": 999}])
                conn.execute(
                    insert(table).values(age=age), [{"name": "h", "id": None}, {"name": "i", "id": None}]
                )
            three = conn.execute(insert(table), {"name": "j", "id": None}).inserted_primary_key
        results.append((tuple(one), many.rowcount, tuple(two), tuple(three), _heroes(engine)))
    assert results[0] == results[1]
    assert results[0][:4] == ((1,), 3, (5,), (14,))


def test_orm_bulk_insert_is_numbered_as_on_sqlite(both):
    for engine in both:
        with Session(engine) as session:
            session.execute(insert(Hero), [{"name": f"h{i}"} for i in range(30)])
            session.commit()
    assert _heroes(both[0]) == _heroes(both[1])
    assert [row[0] for row in _heroes(both[0])] == list(range(1, 31))


def test_an_id_given_is_stored_as_given_and_the_counter_does_not_skip_it(both):
    """As on PostgreSQL (a sequence knows nothing of the ids given by hand), unlike SQLite (which
    goes on from the largest id): the counter reaches the id given and that INSERT fails with
    IntegrityError, never overwriting the row."""
    dynamodb, _ = both
    with Session(dynamodb) as session:
        session.add(Hero(id=2, name="given"))
        session.commit()
    with Session(dynamodb) as session:
        session.add(Hero(name="first"))
        session.commit()
    with pytest.raises(IntegrityError), Session(dynamodb) as session:
        session.add(Hero(name="second"))
        session.commit()
    with Session(dynamodb) as session:
        session.add(Hero(name="third"))
        session.commit()
    assert _heroes(dynamodb) == [(1, "first", None), (2, "given", None), (3, "third", None)]


def test_a_dropped_and_created_table_starts_again_at_one(both):
    dynamodb, _ = both
    with Session(dynamodb) as session:
        session.add_all([Hero(name="a"), Hero(name="b")])
        session.commit()
    Base.metadata.drop_all(dynamodb)
    Base.metadata.create_all(dynamodb)
    with Session(dynamodb) as session:
        session.add(Hero(name="c"))
        session.commit()
    assert _heroes(dynamodb) == [(1, "c", None)]


def test_one_update_item_per_block(endpoint_url: str, table_name: str):
    """A block of 5: the 1st, 6th and 11th INSERT each send one UpdateItem first, the others none."""
    table = Table(table_name, MetaData(), Column("id", Integer, primary_key=True), Column("name", String))
    engine = _engine(endpoint_url, dynamodb_autoincrement_block=5)
    table.create(engine)
    try:
        with engine.connect() as conn, operations_sent(conn) as sent:
            before = []
            for i in range(12):
                before.append(sent.count("UpdateItem"))
                conn.execute(insert(table).values(name=f"n{i}"))
            conn.commit()
            ids = [
                row.id for row in conn.execute(select(table.c.id).execution_options(dynamodb_scan="allow"))
            ]
        assert before == [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3]
        assert sent.count("UpdateItem") == 3
        assert sorted(ids) == list(range(1, 13))
    finally:
        table.drop(engine)
        engine.dispose()


def test_the_counter_request(engine, table_name: str):
    """The request that reserves a block: ADD the block size, the new value returned."""
    table = Table(table_name, MetaData(), Column("id", Integer, primary_key=True))
    table.create(engine)
    try:
        with engine.connect() as conn, bodies_sent(conn, "UpdateItem") as sent:
            conn.execute(insert(table))
        assert [{k: v for k, v in body.items() if k != "ReturnConsumedCapacity"} for body in sent] == [
            {
                "TableName": COUNTERS_TABLE,
                "Key": {"table": {"S": table_name}, "column": {"S": "id"}},
                "UpdateExpression": "ADD #value :block",
                "ExpressionAttributeNames": {"#value": "value"},
                "ExpressionAttributeValues": {":block": {"N": str(DEFAULT_BLOCK)}},
                "ReturnValues": "UPDATED_NEW",
            }
        ]
    finally:
        table.drop(engine)


def test_ten_thousand_ids_from_eight_threads(endpoint_url: str, table_name: str, raw):
    """8 threads, each on its own connection, insert 1,250 rows each (executemany, AUTOCOMMIT):
    10,000 rows, 10,000 different ids, each thread's ids increasing within each block, and one
    UpdateItem per block of 50 reserved (a thread that finds the counter empty while another's
    request is out reserves its own block, used in turn)."""
    block, threads, rows = 50, 8, 1250
    table = Table(
        table_name,
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("thread", Integer),
        Column("seq", Integer),
    )
    engine = _engine(endpoint_url, dynamodb_autoincrement_block=block, pool_size=threads)
    table.create(engine)
    start = threading.Barrier(threads, timeout=60)

    def insert_rows(thread: int) -> int:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            with operations_sent(conn) as sent:
                start.wait()
                for first in range(0, rows, 125):
                    chunk = [{"thread": thread, "seq": seq} for seq in range(first, first + 125)]
                    conn.execute(insert(table), chunk)
            return sent.count("UpdateItem")

    try:
        with ThreadPoolExecutor(threads) as pool:
            requests = sum(
                f.result(timeout=600) for f in [pool.submit(insert_rows, t) for t in range(threads)]
            )
        with engine.connect() as conn:
            stored = conn.execute(select(table).execution_options(dynamodb_scan="allow")).all()
        counter = raw.get_item(
            TableName=COUNTERS_TABLE, Key={"table": {"S": table_name}, "column": {"S": "id"}}
        )["Item"]["value"]["N"]
    finally:
        table.drop(engine)
        engine.dispose()
    ids = [row.id for row in stored]
    assert len(stored) == threads * rows and len(set(ids)) == len(ids)
    assert int(counter) == requests * block >= max(ids)
    assert threads * rows // block <= requests <= threads * rows // block + threads
    for thread in range(threads):
        by_seq = [row.id for row in sorted((r for r in stored if r.thread == thread), key=lambda r: r.seq)]
        for earlier, later in pairwise(by_seq):
            if (earlier - 1) // block == (later - 1) // block:
                assert earlier < later


def test_reflection_and_check_do_not_see_the_counters(both):
    dynamodb, _ = both
    with Session(dynamodb) as session:
        session.add(Hero(name="a"))
        session.commit()
    with dynamodb.connect() as conn:
        assert inspect(conn).has_table(COUNTERS_TABLE)
        assert COUNTERS_TABLE not in inspect(conn).get_table_names()
        assert Hero.__tablename__ in inspect(conn).get_table_names()
        assert check(Base, conn) == []
        # other tests' tables on the shared server are not this test's business; the counters' is
        mine = {*Base.metadata.tables, COUNTERS_TABLE}
        only_mine = {"include_name": lambda name, kind, _: kind != "table" or name in mine}
        assert compare_metadata(MigrationContext.configure(conn, opts=only_mine), Base.metadata) == []


def test_the_block_size_is_checked(endpoint_url: str):
    with pytest.raises(
        ArgumentError, match="dynamodb_autoincrement_block must be a whole number of at least 1"
    ):
        _engine(endpoint_url, dynamodb_autoincrement_block=0)


@pytest.mark.filterwarnings("ignore:Column .* is marked as a member of the primary key")
def test_a_key_no_counter_numbers_says_what_to_do(engine, table_name: str):
    """No counter for a key given autoincrement=False (nor for a string key): the error names
    both ways of making a key."""
    table = Table(
        table_name,
        MetaData(),
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("name", String),
    )
    table.create(engine)
    try:
        with pytest.raises(DataError) as raised, engine.begin() as conn:
            conn.execute(insert(table).values(name="a"))
        message = str(raised.value)
        assert f"the item for table {table_name!r} has no 'id'" in message
        assert "default=uuid.uuid4" in message and "Integer primary key alone" in message
    finally:
        table.drop(engine)


def test_a_missing_counters_table_is_created_at_the_first_id(engine, table_name: str, raw):
    """A table created before counters existed (or the counters' table deleted): the first id
    creates the counters' table, then numbers from 1."""
    table = Table(table_name, MetaData(), Column("id", Integer, primary_key=True), Column("name", String))
    table.create(engine)
    raw.delete_table(TableName=COUNTERS_TABLE)
    raw.get_waiter("table_not_exists").wait(TableName=COUNTERS_TABLE, WaiterConfig={"Delay": 1})
    try:
        with engine.begin() as conn:
            assert tuple(conn.execute(insert(table).values(name="a")).inserted_primary_key) == (1,)
        assert raw.describe_table(TableName=COUNTERS_TABLE)["Table"]["TableStatus"] == "ACTIVE"
    finally:
        table.drop(engine)
