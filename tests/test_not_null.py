"""NOT NULL (``nullable=False``) is a constraint, as in SQL: each write path that would leave such
a column without a value fails with IntegrityError before anything is sent, run here on SQLite
and on DynamoDB Local with the same SQLAlchemy code (the ORM, Core, executemany, SQL text, the
ORM nulling a foreign key of a deleted parent's children). The planner reads an index whose sort
key is NOT NULL for a query that does not test that key; that is exact because no write through
sa_dynamo leaves the key out.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship
from support.beside_sqlite import filled_alike, same_outcome

import sa_dynamo

SUFFIX = uuid.uuid4().hex[:8]


class Base(DeclarativeBase):
    pass


class Team(Base):
    __tablename__ = f"nn_team_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]


class Hero(Base):
    __tablename__ = f"nn_hero_{SUFFIX}"
    __table_args__ = (Index("by_team_age", "team_id", "age"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    team_id: Mapped[int]
    age: Mapped[int]  # NOT NULL: the sort key of by_team_age
    nickname: Mapped[str | None]


class User(Base):
    __tablename__ = f"nn_user_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    posts: Mapped[list[Post]] = relationship(back_populates="author")


class Post(Base):
    """Flask-SQLAlchemy's quickstart: a post's author is required, and the relationship has no
    delete cascade, so deleting a user makes the ORM set its posts' author_id to None."""

    __tablename__ = f"nn_post_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str]
    author_id: Mapped[int] = mapped_column(ForeignKey(User.id), index=True)
    author: Mapped[User] = relationship(back_populates="posts")


HERO = Hero.__table__
BAD_HERO = {"id": 9, "name": "Nobody", "team_id": 1, "age": None}


@pytest.fixture(scope="module")
def engines(engine) -> Iterator[tuple[Any, Any]]:
    yield from filled_alike(engine, Base.metadata, {})


@pytest.fixture
def seeded(engines) -> Iterator[tuple[Any, Any]]:
    """Two heroes of team 1, one of team 2, a user with two posts; everything deleted after."""
    for engine in engines:
        with Session(engine) as session:
            session.add_all(
                [
                    Hero(id=1, name="Deadpond", team_id=1, age=30),
                    Hero(id=2, name="Rusty-Man", team_id=1, age=48),
                    Hero(id=3, name="Spider-Boy", team_id=2, age=16, nickname="Spidey"),
                    User(id=1, name="ann", posts=[Post(id=1, title="a"), Post(id=2, title="b")]),
                ]
            )
            session.commit()
    yield engines
    for engine in engines:
        with Session(engine) as session:
            for cls in (Hero, Post, User):
                for row in session.scalars(select(cls), execution_options={"dynamodb_scan": "allow"}):
                    session.delete(row)
            session.flush()
            session.commit()


def stored(engine: Any) -> dict[str, list[tuple]]:
    """Every row of every table, in order."""
    scan = {"execution_options": {"dynamodb_scan": "allow"}}
    with Session(engine) as session:
        return {
            "heroes": sorted(
                (h.id, h.name, h.team_id, h.age, h.nickname) for h in session.scalars(select(Hero), **scan)
            ),
            "posts": sorted((p.id, p.title, p.author_id) for p in session.scalars(select(Post), **scan)),
            "users": sorted((u.id, u.name) for u in session.scalars(select(User), **scan)),
        }


def test_orm_insert_of_none(seeded):
    def step(engine):
        with Session(engine) as session:
            session.add(Hero(**BAD_HERO))
            session.commit()

    message = same_outcome(seeded, step, stored)
    assert message.startswith(f"NOT NULL constraint failed: column 'age' of table {HERO.name!r}")
    assert "give it a value (or a default=), or declare the column nullable=True (Mapped" in message


def test_orm_insert_leaving_the_attribute_unset(seeded):
    def step(engine):
        with Session(engine) as session:
            session.add(Hero(id=9, team_id=1, age=5))  # no name
            session.commit()

    assert "column 'name'" in same_outcome(seeded, step, stored)


def test_core_insert_without_the_column(seeded):
    def step(engine):
        with engine.begin() as conn:
            conn.execute(insert(HERO).values(id=9, name="Nobody", team_id=1))

    assert "column 'age'" in same_outcome(seeded, step, stored)


def test_core_update_to_none_fails_at_the_statement_and_the_transaction_goes_on(seeded):
    """The failing UPDATE is refused when executed; the transaction's other writes are kept
    and commit, as in SQL (a failed statement does not end the transaction)."""

    def step(engine):
        with engine.begin() as conn:
            conn.execute(update(HERO).where(HERO.c.id == 1).values(name="Deadpool"))
            try:
                conn.execute(update(HERO).where(HERO.c.id == 2).values(age=None))
            except IntegrityError as error:
                return str(error.orig).split(":")[0]
            return "no error"

    assert same_outcome(seeded, step, stored) == "NOT NULL constraint failed"
    assert (1, "Deadpool", 1, 30, None) in stored(seeded[0])["heroes"]


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "AUTOCOMMIT"])
def test_update_by_any_where_to_none(seeded, isolation):
    """An UPDATE by a WHERE that is not the key reads the keys, then writes each item by key:
    each of those writes is refused, and none is sent."""

    def step(engine):
        statement = update(HERO).where(HERO.c.team_id == 1).values(age=None)
        with engine.connect().execution_options(isolation_level=isolation, dynamodb_scan="allow") as conn:
            conn.execute(statement)
            conn.commit()

    assert "column 'age'" in same_outcome(seeded, step, stored)


def test_executemany_with_one_bad_row_in_a_transaction(seeded):
    rows = [{"id": 10 + i, "name": f"h{i}", "team_id": 3, "age": 20 + i} for i in range(5)]
    rows[3]["age"] = None

    def step(engine):
        with engine.begin() as conn:
            conn.execute(insert(HERO), rows)

    assert "row 3 of 5" in same_outcome(seeded, step, stored)


def test_autocommit_executemany_sends_no_row_when_one_violates(seeded):
    """SQLite writes the rows before the bad one; sa_dynamo checks every row before the first
    request, as for every other refusal of a row (tests/test_bad_input.py)."""
    dynamo = seeded[0]
    rows = [{"id": 10 + i, "name": f"h{i}", "team_id": 3, "age": 20 + i} for i in range(30)]
    rows[17]["age"] = None
    before = stored(dynamo)
    autocommit = dynamo.connect().execution_options(isolation_level="AUTOCOMMIT")
    with (
        pytest.raises(IntegrityError, match="row 17 of 30: NOT NULL constraint failed: column 'age'"),
        autocommit as conn,
    ):
        conn.execute(insert(HERO), rows)
    assert stored(dynamo) == before  # the batch holding row 17 would have written rows 0 to 24


def test_upsert_of_an_item_without_the_column(seeded):
    dynamo = seeded[0]
    before = stored(dynamo)
    autocommit = dynamo.connect().execution_options(isolation_level="AUTOCOMMIT")
    with pytest.raises(IntegrityError, match="column 'age'"), autocommit as conn:
        conn.execute(sa_dynamo.upsert(HERO), [{"id": 1, "name": "Deadpond", "team_id": 1}])
    assert stored(dynamo) == before


@pytest.mark.parametrize(
    "sql",
    [
        f"INSERT INTO {HERO.name} (id, name, team_id) VALUES (9, 'Nobody', 1)",
        f"INSERT INTO {HERO.name} (id, name, team_id, age) VALUES (9, 'Nobody', 1, NULL)",
        f"UPDATE {HERO.name} SET age = NULL WHERE id = 1",
    ],
)
def test_sql_text(seeded, sql):
    def step(engine):
        with engine.begin() as conn:
            conn.execute(text(sql))

    assert "column 'age'" in same_outcome(seeded, step, stored)


def test_deleting_a_parent_whose_children_need_it(seeded):
    """The ORM sets the posts' author_id to None (no delete cascade): SQLite's NOT NULL fails
    the flush, and so does sa_dynamo's, with advice for the relationship."""

    def step(engine):
        with Session(engine) as session:
            session.delete(session.get(User, 1))
            session.commit()

    message = same_outcome(seeded, step, stored)
    assert f"column 'author_id' of table {Post.__tablename__!r}" in message
    assert f"it refers to table {User.__tablename__!r}" in message
    assert "cascade='all, delete-orphan'" in message


def test_the_index_on_a_not_null_sort_key_gives_sqlites_rows(seeded):
    """by_team_age's sort key is NOT NULL, so the planner reads it for team_id == 1 (an item
    without age would be missing from the index); the write that would store one fails."""
    query = select(Hero.id, Hero.name, Hero.age).where(Hero.team_id == 1)
    assert sa_dynamo.explain(seeded[0], query).index == "by_team_age"

    def step(engine):
        with Session(engine) as session:
            session.add(Hero(**BAD_HERO))
            session.commit()

    same_outcome(seeded, step, stored)
    rows = [sorted(Session(engine).execute(query).all()) for engine in seeded]
    assert rows[0] == rows[1] == [(1, "Deadpond", 30), (2, "Rusty-Man", 48)]


def test_hidden_parameters_stay_out_of_the_message(endpoint_url, seeded):
    hidden = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", hide_parameters=True)
    try:
        with pytest.raises(IntegrityError) as raised, Session(hidden) as session:
            session.add(Hero(id=4242, name="secret-name", team_id=7, age=None))
            session.commit()
        message = str(raised.value)
        assert "NOT NULL constraint failed: column 'age'" in message and "(id)" in message
        assert "secret" not in message and "4242" not in message
    finally:
        hidden.dispose()


def test_sql_text_is_checked_against_the_table_the_engine_created(endpoint_url):
    """SQL text writes through a Table reflected from DynamoDB, which keeps no NOT NULL: the
    engine checks them against the Table it created (here before any other write)."""
    notes = Table(
        f"nn_note_{SUFFIX}",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("body", String, nullable=False),
    )
    engines = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}"), create_engine("sqlite://")
    for engine in engines:
        notes.create(engine)
    try:
        for engine in engines:
            with pytest.raises(IntegrityError, match="body"), engine.begin() as conn:
                conn.execute(text(f"INSERT INTO {notes.name} (id) VALUES (1)"))
            with engine.connect() as conn:
                assert conn.execute(select(notes.c.id).execution_options(dynamodb_scan="allow")).all() == []
    finally:
        notes.drop(engines[0])
        for engine in engines:
            engine.dispose()
