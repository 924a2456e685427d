"""Foreign keys' ON DELETE actions (issue 31 item 2), judged by SQLite with PRAGMA foreign_keys=ON:
the same SQLAlchemy code runs on both, and each step gives the same outcome (IntegrityError or
not) and leaves the same rows. An action sa_dynamo cannot carry out exactly is refused when the
table is created, never ignored."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    event,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import CompileError, IntegrityError, ProgrammingError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

import sa_dynamo

ACTIONS = ["CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT", "NO ACTION"]
MODES = ["SERIALIZABLE", "AUTOCOMMIT"]


def sqlite_engine() -> Any:
    engine = create_engine("sqlite://")
    event.listen(engine, "connect", lambda conn, _: conn.execute("PRAGMA foreign_keys=ON"))
    return engine


@pytest.fixture(scope="module")
def dynamo(endpoint_url: str) -> Iterator[Any]:
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    yield engine
    engine.dispose()


def schema(ondelete: str, nullable: bool = True) -> tuple[MetaData, Table, Table, Table]:
    """team <- hero (the action under test) <- power (CASCADE, a grandchild)."""
    suffix = uuid.uuid4().hex[:8]
    metadata = MetaData()
    team = Table(
        f"fk_team_{suffix}", metadata, Column("id", Integer, primary_key=True), Column("name", String)
    )
    hero = Table(
        f"fk_hero_{suffix}",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("name", String),
        Column("team_id", ForeignKey(team.c.id, ondelete=ondelete), index=True, nullable=nullable),
    )
    power = Table(
        f"fk_power_{suffix}",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("hero_id", ForeignKey(hero.c.id, ondelete="CASCADE"), index=True),
    )
    return metadata, team, hero, power


@pytest.fixture
def built(dynamo: Any, request: Any) -> Iterator[Callable[..., tuple[tuple[Any, Any], tuple[Table, ...]]]]:
    """Create a schema on DynamoDB and SQLite, seeded with two teams, three heroes, two powers."""
    made = []

    def build(ondelete: str, nullable: bool = True) -> tuple[tuple[Any, Any], tuple[Table, ...]]:
        metadata, team, hero, power = schema(ondelete, nullable)
        engines = (dynamo, sqlite_engine())
        for engine in engines:
            metadata.create_all(engine)
            with engine.begin() as conn:
                conn.execute(insert(team), [{"id": 1, "name": "Preventers"}, {"id": 2, "name": "Z-Force"}])
                conn.execute(
                    insert(hero),
                    [
                        {"id": 1, "name": "Deadpond", "team_id": 1},
                        {"id": 2, "name": "Rusty-Man", "team_id": 1},
                        {"id": 3, "name": "Spider-Boy", "team_id": 2},
                    ],
                )
                conn.execute(insert(power), [{"id": 1, "hero_id": 1}, {"id": 2, "hero_id": 3}])
        made.append(metadata)
        return engines, (team, hero, power)

    yield build
    for metadata in made:
        metadata.drop_all(dynamo)


def stored(engine: Any, tables: tuple[Table, ...]) -> list[list[tuple]]:
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        return [sorted(tuple(row) for row in conn.execute(select(table))) for table in tables]


def on_both(engines: tuple[Any, Any], tables: tuple[Table, ...], step: Callable[[Any], Any]) -> Any:
    """Run ``step`` on DynamoDB and SQLite: the same outcome, the same rows afterwards; the
    outcome (IntegrityError's message from DynamoDB's side)."""
    outcomes, message = [], None
    for engine in engines:
        try:
            outcomes.append(step(engine))
        except IntegrityError as error:
            outcomes.append(IntegrityError)
            message = message or str(error.orig)
    assert outcomes[0] == outcomes[1]
    assert stored(engines[0], tables) == stored(engines[1], tables)
    return message if outcomes[0] is IntegrityError else outcomes[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ondelete", ACTIONS)
def test_delete_of_a_parent_by_its_key(built, ondelete, mode):
    engines, tables = built(ondelete)
    team = tables[0]

    def step(engine):
        with engine.connect().execution_options(isolation_level=mode) as conn:
            deleted = conn.execute(delete(team).where(team.c.id == 1)).rowcount
            conn.commit()
            return deleted

    outcome = on_both(engines, tables, step)
    if ondelete in ("RESTRICT", "NO ACTION"):
        assert outcome.startswith("FOREIGN KEY constraint failed: ForeignKey ")
        assert f"is ON DELETE {ondelete}" in outcome
        assert stored(engines[0], tables)[0] == [(1, "Preventers"), (2, "Z-Force")]
    else:
        assert outcome == 1
        heroes = stored(engines[0], tables)[1]
        assert heroes == (
            [(3, "Spider-Boy", 2)]
            if ondelete == "CASCADE"
            else [(1, "Deadpond", None), (2, "Rusty-Man", None), (3, "Spider-Boy", 2)]
        )


@pytest.mark.parametrize("mode", MODES)
def test_cascade_reaches_the_grandchildren_and_a_parent_without_children_is_deleted(built, mode):
    engines, tables = built("CASCADE")
    team = tables[0]

    def step(engine):
        with engine.connect().execution_options(isolation_level=mode, dynamodb_scan="allow") as conn:
            deleted = conn.execute(delete(team).where(team.c.name != "nobody")).rowcount
            conn.commit()
            return deleted

    assert on_both(engines, tables, step) == 2
    assert stored(engines[0], tables) == [[], [], []]


@pytest.mark.parametrize("ondelete", ["RESTRICT", "NO ACTION"])
def test_restrict_lets_a_parent_without_children_go(built, ondelete):
    engines, tables = built(ondelete)
    team, hero, _ = tables

    def step(engine):
        with engine.begin() as conn:
            conn.execute(delete(hero).where(hero.c.id == 3))
            return conn.execute(delete(team).where(team.c.id == 2)).rowcount

    assert on_both(engines, tables, step) == 1


@pytest.mark.parametrize("mode", MODES)
def test_set_null_of_a_not_null_foreign_key_fails_and_writes_nothing(built, mode):
    engines, tables = built("SET NULL", nullable=False)
    team = tables[0]

    def step(engine):
        with engine.connect().execution_options(isolation_level=mode) as conn:
            conn.execute(delete(team).where(team.c.id == 1))
            conn.commit()

    assert "NOT NULL constraint failed" in on_both(engines, tables, step)
    assert len(stored(engines[0], tables)[0]) == 2


def test_a_failed_delete_is_undone_and_the_transaction_goes_on(built):
    """In a transaction the failed statement leaves nothing held (the heroes it would have
    changed, the team), the transaction's other writes commit: SQL's statement atomicity."""
    engines, tables = built("RESTRICT")
    team, hero, power = tables

    def step(engine):
        with engine.begin() as conn:
            conn.execute(update(team).where(team.c.id == 2).values(name="Renamed"))
            conn.execute(delete(power).where(power.c.id == 2))
            try:
                conn.execute(delete(hero).where(hero.c.id == 1))  # power 1 CASCADEs: allowed
                conn.execute(delete(team).where(team.c.id == 1))  # Rusty-Man RESTRICTs
            except IntegrityError:
                return "refused"
            return "deleted"

    assert on_both(engines, tables, step) == "refused"
    assert stored(engines[0], tables) == [
        [(1, "Preventers"), (2, "Renamed")],
        [(2, "Rusty-Man", 1), (3, "Spider-Boy", 2)],
        [],
    ]


class Base(DeclarativeBase):
    pass


SUFFIX = uuid.uuid4().hex[:8]


class Node(Base):
    """A tree whose children go with their parent (a row may be its own parent)."""

    __tablename__ = f"fk_node_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey(f"{__tablename__}.id", ondelete="CASCADE"), index=True
    )
    children: Mapped[list[Node]] = relationship(passive_deletes=True)


class Team(Base):
    __tablename__ = f"fk_orm_team_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    heroes: Mapped[list[Hero]] = relationship(back_populates="team", passive_deletes=True)


class Hero(Base):
    """SQLModel's tutorial: ``Field(foreign_key="team.id", ondelete="SET NULL")``."""

    __tablename__ = f"fk_orm_hero_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int | None] = mapped_column(ForeignKey(Team.id, ondelete="SET NULL"), index=True)
    team: Mapped[Team | None] = relationship(back_populates="heroes")


@pytest.fixture
def orm(dynamo: Any) -> Iterator[tuple[Any, Any]]:
    engines = (dynamo, sqlite_engine())
    for engine in engines:
        Base.metadata.create_all(engine)
        with Session(engine) as session:
            session.add_all([Node(id=1), Node(id=2, parent_id=1), Node(id=3, parent_id=2), Node(id=4)])
            session.add_all([Node(id=5, parent_id=5), Node(id=6, parent_id=5)])
            session.add_all([Team(id=1, heroes=[Hero(id=1), Hero(id=2)]), Team(id=2, heroes=[Hero(id=3)])])
            session.commit()
    yield engines
    Base.metadata.drop_all(dynamo)


ORM_TABLES = (Node.__table__, Team.__table__, Hero.__table__)


@pytest.mark.parametrize("mode", MODES)
def test_orm_delete_with_passive_deletes_leaves_the_children_to_the_foreign_keys(orm, mode):
    def step(engine):
        with Session(engine.execution_options(isolation_level=mode)) as session:
            session.delete(session.get(Node, 1))
            session.delete(session.get(Node, 5))
            session.delete(session.get(Team, 1))
            session.commit()
            return sorted(h.team_id or 0 for h in session.scalars(select(Hero).where(Hero.team_id == 2)))

    assert on_both(orm, ORM_TABLES, step) == [2]
    assert stored(orm[0], ORM_TABLES) == [[(4, None)], [(2,)], [(1, None), (2, None), (3, 2)]]


def test_autocommit_writes_at_most_a_transaction_of_items(built):
    """team 2, its 101 heroes and Spider-Boy's power: 103 items."""
    engines, tables = built("CASCADE")
    team, hero, _ = tables
    with engines[0].begin() as conn:
        conn.execute(insert(hero), [{"id": 10 + i, "name": "extra", "team_id": 2} for i in range(100)])
    too_many = "writes 103 items; DynamoDB writes at most 100 atomically. Nothing was written"
    with (
        engines[0].connect().execution_options(isolation_level="AUTOCOMMIT") as conn,
        pytest.raises(ProgrammingError, match=too_many),
    ):
        conn.execute(delete(team).where(team.c.id == 2))
    assert len(stored(engines[0], tables)[1]) == 103


def refused(fk: ForeignKey | None = None, **column: Any) -> MetaData:
    """fk_p and fk_c, whose column p_id has ``fk`` (by default an unindexed ON DELETE CASCADE)."""
    metadata = MetaData()
    Table("fk_p", metadata, Column("id", Integer, primary_key=True), Column("code", String))
    Table(
        "fk_c",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("p_id", fk or ForeignKey("fk_p.id", ondelete="CASCADE"), **column),
    )
    return metadata


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (
            refused(),
            "ForeignKey fk_c.p_id -> fk_p.id has ondelete='CASCADE', but fk_c.p_id is not the partition key",
        ),
        (
            refused(ForeignKey("fk_p.id", ondelete="SET DEFAULT"), index=True, default=1),
            "ondelete='SET DEFAULT' and a default= on its column",
        ),
        (
            refused(ForeignKey("fk_p.id", ondelete="EXPLODE"), index=True),
            "ondelete='EXPLODE'; use one of CASCADE",
        ),
        (
            refused(ForeignKey("fk_p.code", onupdate="CASCADE"), index=True),
            "onupdate='CASCADE' on fk_p's non-key columns",
        ),
    ],
)
def test_an_action_that_cannot_be_carried_out_is_refused_at_create_all(dynamo, metadata, message):
    """Refused before the first CreateTable: the parent table is not created either."""
    try:
        with pytest.raises(CompileError, match=message):
            metadata.create_all(dynamo)
        assert not {"fk_p", "fk_c"} & set(inspect(dynamo).get_table_names())
    finally:
        metadata.drop_all(dynamo)


def test_the_delete_of_a_parent_whose_child_table_was_made_elsewhere_is_refused(dynamo):
    """The rule holds at the parent's DELETE too, where create_all never ran."""
    metadata = refused()
    with pytest.raises(CompileError, match="declare p_id with index=True"):
        delete(metadata.tables["fk_p"]).where(metadata.tables["fk_p"].c.id == 1).compile(
            dialect=dynamo.dialect
        )


def test_the_plan_names_the_actions(built, dynamo):
    _, (team, hero, _) = built("CASCADE")
    plan = sa_dynamo.explain(dynamo, delete(team).where(team.c.id == 1))
    assert f"ON DELETE CASCADE of ForeignKey {hero.name}.team_id -> {team.name}.id" in plan.client


def test_a_delete_in_sql_text_of_a_parent_with_actions_is_refused(built, dynamo):
    """SQL text's Tables are reflected and know no ForeignKey: its DELETE would skip the actions."""
    engines, tables = built("CASCADE")
    team = tables[0]
    with (
        dynamo.begin() as conn,
        pytest.raises(CompileError, match=f"a DELETE of {team.name!r} through a Table"),
    ):
        conn.execute(text(f'DELETE FROM "{team.name}" WHERE "id" = 1'))
    assert len(stored(engines[0], tables)[0]) == 2
