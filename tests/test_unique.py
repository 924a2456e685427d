"""Unique constraints (``unique=True``, ``UniqueConstraint``, a unique Index) are kept by guard
items written in the same transaction as the row, judged against SQLite running the same
SQLAlchemy code: the same outcome (IntegrityError or not) and the same rows afterwards, for
inserts, updates that move a value, deletes that free one, duplicates within one flush, a
composite constraint, NULLs (which take no guard), on the ORM, Core in a transaction and in
AUTOCOMMIT, and UPDATE/DELETE by a WHERE that is not the key. Reads never see a guard.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    UniqueConstraint,
    create_engine,
    delete,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import CompileError, DBAPIError, IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.schema import CreateTable, DropTable
from support.beside_sqlite import filled_alike, same_outcome

import sa_dynamo
from sa_dynamo.check import check

SUFFIX = uuid.uuid4().hex[:8]
SCAN = {"dynamodb_scan": "allow"}


class Base(DeclarativeBase):
    pass


class Hero(Base):
    __tablename__ = f"uq_hero_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(unique=True)
    age: Mapped[int | None]
    nickname: Mapped[str | None] = mapped_column(String, unique=True)  # NULL in many rows


class Seat(Base):
    """A composite constraint: one hero per (team, slot); a seat with no slot takes no guard."""

    __tablename__ = f"uq_seat_{SUFFIX}"
    __table_args__ = (UniqueConstraint("team", "slot"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    team: Mapped[str]
    slot: Mapped[int | None]


class Code(Base):
    """Numbers in unique columns: equal numbers are one value, near ones are not; a unique
    Index is a GSI and a constraint."""

    __tablename__ = f"uq_code_{SUFFIX}"
    __table_args__ = (Index("by_serial", "serial", unique=True),)
    id: Mapped[str] = mapped_column(primary_key=True)
    amount: Mapped[Decimal | None] = mapped_column(Numeric(10, 2), unique=True)
    serial: Mapped[int | None]


HERO, SEAT, CODE = Hero.__table__, Seat.__table__, Code.__table__


@pytest.fixture(scope="module")
def engines(engine) -> Iterator[tuple[Any, Any]]:
    yield from filled_alike(engine, Base.metadata, {})


@pytest.fixture
def seeded(engines) -> Iterator[tuple[Any, Any]]:
    """Three heroes, two seats; everything deleted after (freeing every guard)."""
    for engine in engines:
        with Session(engine) as session:
            session.add_all(
                [
                    Hero(id=1, name="Deadpond", age=30),
                    Hero(id=2, name="Rusty-Man", age=48, nickname="Rusty"),
                    Hero(id=3, name="Spider-Boy", age=16),
                    Seat(id=1, team="a", slot=1),
                    Seat(id=2, team="a", slot=None),
                ]
            )
            session.commit()
    yield engines
    for engine in engines:
        with Session(engine) as session:
            for cls in (Hero, Seat, Code):
                for row in session.scalars(select(cls), execution_options=SCAN):
                    session.delete(row)
            session.commit()


def stored(engine: Any) -> dict[str, list[tuple]]:
    """Every row of every table, in order."""
    with Session(engine) as session:
        return {
            "heroes": sorted(
                (h.id, h.name, h.age, h.nickname)
                for h in session.scalars(select(Hero), execution_options=SCAN)
            ),
            "seats": sorted(
                (s.id, s.team, s.slot) for s in session.scalars(select(Seat), execution_options=SCAN)
            ),
            "codes": sorted(
                (c.id, c.amount, c.serial) for c in session.scalars(select(Code), execution_options=SCAN)
            ),
        }


def on_both(engines: tuple[Any, Any], step: Callable[[Any], Any]) -> Any:
    return same_outcome(engines, step, stored)


def orm(*changes: Callable[[Session], Any]) -> Callable[[Any], None]:
    """A step: one session applying ``changes`` in order, each flushed, then one commit."""

    def step(engine: Any) -> None:
        with Session(engine) as session:
            for change in changes:
                change(session)
                session.flush()
            session.commit()

    return step


def rename(id_: int, name: str) -> Callable[[Session], None]:
    return lambda session: setattr(session.get(Hero, id_), "name", name)


def test_orm_insert_of_a_taken_value(seeded):
    message = on_both(seeded, orm(lambda s: s.add(Hero(id=9, name="Deadpond"))))
    assert message.startswith(f"UNIQUE constraint failed: {HERO.name}.name: another row already holds")
    assert "Give this row another value" in message


def test_duplicates_within_one_flush_write_nothing(seeded):
    step = orm(lambda s: s.add_all([Hero(id=8, name="Twin"), Hero(id=9, name="Twin"), Seat(id=5, team="b")]))
    assert "UNIQUE constraint failed" in on_both(seeded, step)


def test_nulls_take_no_guard(seeded):
    """Many rows without a nickname, many seats without a slot: NULLs are not equal."""
    step = orm(
        lambda s: s.add_all(
            [Hero(id=8, name="A"), Hero(id=9, name="B"), Seat(id=5, team="a"), Seat(id=6, team="a")]
        )
    )
    assert on_both(seeded, step) is None


def test_update_moves_the_value(seeded):
    """Renamed, the old name is free for another row and the new one is taken."""
    assert on_both(seeded, orm(rename(1, "Deadpool"))) is None
    assert on_both(seeded, orm(lambda s: s.add(Hero(id=9, name="Deadpond")))) is None
    assert "UNIQUE" in on_both(seeded, orm(lambda s: s.add(Hero(id=10, name="Deadpool"))))


def test_update_to_a_taken_value(seeded):
    assert "UNIQUE" in on_both(seeded, orm(rename(1, "Rusty-Man")))


def test_update_to_null_frees_the_value(seeded):
    def free(session):
        session.get(Hero, 2).nickname = None

    assert on_both(seeded, orm(free)) is None
    assert on_both(seeded, orm(lambda s: s.add(Hero(id=9, name="X", nickname="Rusty")))) is None


def test_delete_frees_the_value(seeded):
    assert on_both(seeded, orm(lambda s: s.delete(s.get(Hero, 1)))) is None
    assert on_both(seeded, orm(lambda s: s.add(Hero(id=9, name="Deadpond")))) is None


def test_value_freed_then_taken_in_one_transaction(seeded):
    """Statements in order: the rename frees the name before the insert takes it."""
    step = orm(rename(1, "Deadpool"), lambda s: s.add(Hero(id=9, name="Deadpond")))
    assert on_both(seeded, step) is None


def test_value_taken_before_the_statement_that_frees_it(seeded):
    """SQL checks each statement: the insert comes first, while the name is still held."""
    step = orm(lambda s: s.add(Hero(id=9, name="Deadpond")), rename(1, "Deadpool"))
    assert "UNIQUE" in on_both(seeded, step)


def test_swapping_two_values_in_one_flush(seeded):
    def swap(session):
        one, two = session.get(Hero, 1), session.get(Hero, 2)
        one.name, two.name = two.name, one.name

    assert "UNIQUE" in on_both(seeded, orm(swap))


def test_composite_constraint(seeded):
    assert "UNIQUE" in on_both(seeded, orm(lambda s: s.add(Seat(id=5, team="a", slot=1))))
    assert on_both(seeded, orm(lambda s: s.add(Seat(id=5, team="b", slot=1)))) is None

    def move(session):
        session.get(Seat, 1).team = "c"

    assert on_both(seeded, orm(move)) is None
    assert on_both(seeded, orm(lambda s: s.add(Seat(id=6, team="a", slot=1)))) is None
    assert "UNIQUE" in on_both(seeded, orm(lambda s: s.add(Seat(id=7, team="c", slot=1))))


def test_numbers_equal_as_numbers_are_one_value(seeded):
    """1.5 and 1.50 are one value; integers past 2**53 stay exact (no float in the guard)."""
    big = 2**53
    assert on_both(seeded, orm(lambda s: s.add(Code(id="a", amount=Decimal("1.5"), serial=big)))) is None
    assert "UNIQUE" in on_both(seeded, orm(lambda s: s.add(Code(id="b", amount=Decimal("1.50")))))
    assert on_both(seeded, orm(lambda s: s.add(Code(id="c", serial=big + 1)))) is None
    assert "UNIQUE" in on_both(seeded, orm(lambda s: s.add(Code(id="d", serial=big))))


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "AUTOCOMMIT"])
def test_core_statements(seeded, isolation):
    """Core INSERT, executemany, UPDATE and DELETE by key, in a transaction and in AUTOCOMMIT
    (where each row is its own transaction with its guards, and a failed row stops the rest)."""

    def run(*statements):
        def step(engine):
            with engine.connect().execution_options(isolation_level=isolation, **SCAN) as conn:
                for statement in statements:
                    conn.execute(*statement) if isinstance(statement, tuple) else conn.execute(statement)
                conn.commit()

        return step

    taken = run((insert(HERO), [{"id": 8, "name": "New"}, {"id": 9, "name": "Deadpond"}]))
    assert "UNIQUE" in on_both(seeded, taken)
    assert on_both(seeded, run(update(HERO).where(HERO.c.id == 1).values(name="Deadpool"))) is None
    assert on_both(seeded, run(insert(HERO).values(id=9, name="Deadpond"))) is None
    assert (
        on_both(seeded, run(delete(HERO).where(HERO.c.id == 9), insert(HERO).values(id=10, name="Deadpond")))
        is None
    )
    assert "UNIQUE" in on_both(seeded, run(update(HERO).where(HERO.c.id == 10).values(name="Deadpool")))


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "AUTOCOMMIT"])
def test_update_and_delete_by_any_where(seeded, isolation):
    """UPDATE/DELETE whose WHERE is not the key move and free guards as keyed ones do."""

    def run(statement):
        def step(engine):
            with engine.connect().execution_options(isolation_level=isolation, **SCAN) as conn:
                conn.execute(statement)
                conn.commit()

        return step

    assert on_both(seeded, run(update(HERO).where(HERO.c.age > 40).values(name="Old"))) is None
    assert on_both(seeded, run(insert(HERO).values(id=9, name="Rusty-Man"))) is None
    assert "UNIQUE" in on_both(seeded, run(update(HERO).where(HERO.c.age < 20).values(name="Old")))
    assert on_both(seeded, run(delete(HERO).where(HERO.c.name == "Old"))) is None
    assert on_both(seeded, run(insert(HERO).values(id=10, name="Old"))) is None


def test_reads_never_see_a_guard(seeded):
    """A scan, a COUNT, SELECT * through SQL text and the table list: rows only."""
    for engine in seeded:
        with engine.connect().execution_options(**SCAN) as conn:
            assert conn.scalar(select(func.count()).select_from(HERO)) == 3
    with seeded[0].connect().execution_options(**SCAN) as conn:
        rows = conn.execute(text(f'SELECT * FROM "{HERO.name}"')).all()
        assert sorted(r.id for r in rows) == [1, 2, 3]
        names = inspect(conn).get_table_names()
    assert HERO.name in names and not any(name.endswith(".unique") for name in names)


def test_create_and_drop_table_show_the_guard_table(engines):
    """CREATE TABLE of a table with unique constraints also creates its guard table and records
    the named constraint's columns; DROP TABLE deletes the guard table too."""
    dialect = engines[0].dialect
    table = Table(
        "uq_shown",
        MetaData(),
        Column("id", String, primary_key=True),  # no counter to reset (test_autoincrement.py)
        Column("email", String, unique=True),
        Column("team", String),
        UniqueConstraint("team", "email", name="uq_team_email"),
    )
    guards = {
        "TableName": "uq_shown.unique",
        "KeySchema": [{"AttributeName": "guard", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "guard", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    record = {
        "TableName": "uq_shown.unique",
        "Item": {"guard": {"S": "constraint:uq_team_email"}, "columns": {"S": '["team", "email"]'}},
    }
    lines = str(CreateTable(table).compile(dialect=dialect)).splitlines()
    assert lines[1:] == [f"CreateTable {json.dumps(guards)}", f"PutItem {json.dumps(record)}"]
    assert str(DropTable(table).compile(dialect=dialect)).splitlines() == [
        'DeleteTable {"TableName": "uq_shown"}',
        'DeleteTable {"TableName": "uq_shown.unique"}',
    ]


def test_a_table_named_like_a_guard_table_is_refused(engines):
    table = Table("uq_x.unique", MetaData(), Column("id", Integer, primary_key=True))
    with pytest.raises(CompileError, match=r"names ending in '\.unique' are kept for the guard items"):
        CreateTable(table).compile(dialect=engines[0].dialect)


def test_a_table_named_like_the_counters_table_is_refused(engines):
    table = Table("sa_dynamo_counters", MetaData(), Column("id", Integer, primary_key=True))
    with pytest.raises(CompileError, match=r"keeps its autoincrement counters in: rename the table"):
        CreateTable(table).compile(dialect=engines[0].dialect)


def test_an_upsert_is_refused(seeded):
    """A PUT (upsert) overwrites an item with BatchWriteItem, outside any transaction, so it
    cannot move the guards of the values it replaces: refused, naming the table, and nothing is
    written."""
    dynamo = seeded[0]
    refused = pytest.raises(DBAPIError, match=f"PUT overwrites an item of {HERO.name!r}, whose unique")
    with refused, dynamo.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa_dynamo.upsert(HERO).values(id=1, name="Rusty-Man"))
    assert stored(dynamo)["heroes"][0] == (1, "Deadpond", 30, None)


def test_check_reports_a_row_without_its_guard(seeded, raw):
    """A row written around sa_dynamo has no guard: ``sa-dynamo check`` says so and how to fix it."""
    dynamo = seeded[0]
    assert check(Base, dynamo) == []
    raw.put_item(TableName=HERO.name, Item={"id": {"N": "7"}, "name": {"S": "Ghost"}})
    try:
        messages = [difference.message for difference in check(Base, dynamo)]
    finally:
        raw.delete_item(TableName=HERO.name, Key={"id": {"N": "7"}})
    assert messages == [
        f"1 row of {HERO.name} without a guard item for unique (name): a duplicate of such a value is not "
        "refused. Rows written around sa_dynamo or before the constraint lack one; write the guards with "
        "op.create_unique_constraint in a migration"
    ]


def test_hidden_parameters_keep_the_value_out_of_the_error(seeded, endpoint_url):
    hidden = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", hide_parameters=True)
    try:
        with pytest.raises(IntegrityError) as raised, Session(hidden) as session:
            session.add(Hero(id=9, name="Deadpond"))
            session.commit()
    finally:
        hidden.dispose()
    assert f"UNIQUE constraint failed: {HERO.name}.name: another row already holds this value, so" in str(
        raised.value
    )
    assert "Deadpond" not in str(raised.value)


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "AUTOCOMMIT"])
def test_sql_text_writes_keep_the_guards(seeded, isolation):
    """SQL text is checked against the Table this engine created: its writes move guards too."""

    def run(sql, **binds):
        def step(engine):
            with engine.connect().execution_options(isolation_level=isolation, **SCAN) as conn:
                conn.execute(text(sql), binds)
                conn.commit()

        return step

    name = HERO.name
    assert "UNIQUE" in on_both(
        seeded, run(f'INSERT INTO "{name}" ("id", "name") VALUES (9, :n)', n="Deadpond")
    )
    assert on_both(seeded, run(f'UPDATE "{name}" SET "name" = :n WHERE "id" = 1', n="Deadpool")) is None
    assert on_both(seeded, run(f'INSERT INTO "{name}" ("id", "name") VALUES (9, :n)', n="Deadpond")) is None
    assert "UNIQUE" in on_both(seeded, run(f'UPDATE "{name}" SET "name" = :n WHERE "id" = 2', n="Deadpool"))


def test_a_taken_key_is_told_before_a_taken_value(seeded):
    """A row whose key and unique value are both taken: SQL names the key first, so does this."""
    message = on_both(seeded, orm(lambda s: s.add(Hero(id=1, name="Rusty-Man"))))
    assert "UNIQUE constraint failed" not in message
    assert "Duplicate primary key" in message or "duplicate key" in message


def statements_refused(isolation: str, *statements: Any) -> Callable[[Any], list[int]]:
    """A step: the statements run in order on one connection, each refused one (IntegrityError)
    noted by its position and the next run all the same, then one commit (SQLite goes on after
    a statement it refuses, which changed nothing)."""

    def step(engine: Any) -> list[int]:
        refused = []
        with engine.connect().execution_options(isolation_level=isolation, **SCAN) as conn:
            for position, statement in enumerate(statements):
                try:
                    conn.execute(statement)
                except IntegrityError:
                    refused.append(position)
            conn.commit()
        return refused

    return step


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "AUTOCOMMIT"])
def test_the_statement_that_takes_a_held_value_is_refused_whatever_follows(seeded, isolation):
    """SQL refuses a statement at once when it gives a row a value another row holds, and it
    changes nothing: not when a later statement changes or deletes the row again, nor when one
    of an UPDATE's rows would. Values freed or taken by the transaction's earlier statements
    count as they left them."""
    refused = on_both(
        seeded,
        statements_refused(
            isolation,
            update(HERO).where(HERO.c.id == 1).values(name="Rusty-Man"),  # held by 2: refused
            update(HERO).where(HERO.c.id == 1).values(name="Zed"),
            update(HERO).where(HERO.c.id == 3).values(name="Rusty-Man", age=17),  # refused, age too
            delete(HERO).where(HERO.c.id == 3),
            update(HERO).where(HERO.c.age < 40).values(nickname="Rusty"),  # held by 2: refused
            delete(HERO).where(HERO.c.id == 2),  # frees Rusty-Man and Rusty
            insert(HERO).values(id=9, name="Zed"),  # held by 1 since the second statement
            insert(HERO).values(id=9, name="Rusty-Man", nickname="Rusty"),
            update(HERO).where(HERO.c.age < 40).values(nickname="Rusty"),  # taken by 9 just now
            update(HERO).where(HERO.c.id == 9).values(name="Deadpond"),  # its old name is Zed's now
        ),
    )
    assert refused == [0, 2, 4, 6, 8]


def test_an_update_whose_second_row_takes_a_value_writes_no_row(seeded):
    """In AUTOCOMMIT the rows of an UPDATE by any WHERE each commit with their guards; SQL
    refuses the statement whole, so every row's values are checked before the first is sent."""
    refused = on_both(
        seeded,
        statements_refused("AUTOCOMMIT", update(HERO).where(HERO.c.age < 40).values(name="Twin")),
    )
    assert refused == [0]
    with pytest.raises(IntegrityError) as raised, seeded[0].connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT", **SCAN).execute(
            update(HERO).where(HERO.c.age < 40).values(name="Twin")
        )
    assert "so this statement changed nothing" in str(raised.value)
    assert "applied" not in str(raised.value)
    assert stored(seeded[0])["heroes"][0] == (1, "Deadpond", 30, None)


def test_an_orm_flush_is_refused_at_the_statement_that_takes_the_value(seeded):
    """The rename to a held name fails at its flush, before the next change could free it."""
    assert "UNIQUE" in on_both(seeded, orm(rename(1, "Rusty-Man"), rename(1, "Zed")))
    assert "UNIQUE" in on_both(seeded, orm(rename(1, "Rusty-Man"), lambda s: s.delete(s.get(Hero, 1))))


def test_an_executemany_stopped_by_a_held_value_says_which_rows_were_written(seeded):
    """In AUTOCOMMIT each row of an executemany is its own statement, as in SQLite: the rows
    before the refused one stay written, and the error says so rather than "nothing"."""
    rows = [{"id": 8, "name": "New"}, {"id": 9, "name": "Deadpond"}]
    with pytest.raises(IntegrityError) as raised, seeded[0].connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(insert(HERO), rows)
    message = str(raised.value.orig)
    assert "another row already holds this value" in message
    assert "so this row was not written" in message and "nothing was written" not in message
    assert message.endswith("applied: row 0; not applied: row 1")
