"""SQLModel's tutorial, Hero and Team, step by step (issue 31): written here after the tutorial's
pages, run on SQLite and on an in-memory ``dynamodb+local://`` engine of its own, and every step's
result compared. The models are the tutorial's, ``id`` numbered by sa_dynamo's counter; the one
change a DynamoDB user makes is ``index=True`` on the foreign key (docs/coming-from-sqlite.md)."""

from collections.abc import Iterator

import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Relationship, Session, SQLModel, create_engine, select


class Team(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True)
    headquarters: str

    heroes: list["Hero"] = Relationship(back_populates="team")


class Hero(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True)
    secret_name: str
    age: int | None = Field(default=None, index=True)

    team_id: int | None = Field(default=None, foreign_key="team.id", index=True)
    team: Team | None = Relationship(back_populates="heroes")


def heroes(session: Session, statement) -> list[tuple]:
    return sorted((h.name, h.secret_name, h.age, h.team_id) for h in session.exec(statement))


def tutorial(engine) -> Iterator[tuple[str, object]]:
    """The tutorial's steps, each yielding what its page prints."""
    SQLModel.metadata.create_all(engine)

    # "Create Rows": three heroes, ids from the database.
    with Session(engine) as session:
        created = [
            Hero(name="Deadpond", secret_name="Dive Wilson"),
            Hero(name="Spider-Boy", secret_name="Pedro Parqueador"),
            Hero(name="Rusty-Man", secret_name="Tommy Sharp", age=48),
        ]
        session.add_all(created)
        session.commit()
        yield "create", sorted((h.name, h.id is not None) for h in created)
        yield "ids distinct", len({h.id for h in created}) == 3

    # "Read Data": select all, then where, then first/one and get by id.
    with Session(engine) as session:
        yield "select all", heroes(session, select(Hero))
        yield "where name", heroes(session, select(Hero).where(Hero.name == "Deadpond"))
        yield "where age >= 35", heroes(session, select(Hero).where(Hero.age >= 35))
        deadpond = session.exec(select(Hero).where(Hero.name == "Deadpond")).one()
        yield "get by id", session.get(Hero, deadpond.id).name
        yield "get missing", session.get(Hero, 10_000)

    # "Update Data".
    with Session(engine) as session:
        hero = session.exec(select(Hero).where(Hero.name == "Spider-Boy")).one()
        hero.age = 16
        hero.name = "Spider-Youngster"
        session.add(hero)
        session.commit()
        session.refresh(hero)
        yield "update", (hero.name, hero.age)
        yield "after update", heroes(session, select(Hero))

    # "Delete Data".
    with Session(engine) as session:
        hero = session.exec(select(Hero).where(Hero.name == "Spider-Youngster")).one()
        session.delete(hero)
        session.commit()
        yield "deleted", session.exec(select(Hero).where(Hero.name == "Spider-Youngster")).first()
        yield "after delete", heroes(session, select(Hero))

    # "Relationship Attributes": teams, heroes joined to them through `team=`.
    with Session(engine) as session:
        preventers = Team(name="Preventers", headquarters="Sharp Tower")
        z_force = Team(name="Z-Force", headquarters="Sister Margaret's Bar")
        session.add_all([preventers, z_force])
        session.add(Hero(name="Tarantula", secret_name="Natalia Roman-on", age=32, team=preventers))
        session.add(Hero(name="Black Lion", secret_name="Trevor Challa", age=35, team=z_force))
        deadpond = session.exec(select(Hero).where(Hero.name == "Deadpond")).one()
        deadpond.team = z_force
        session.commit()
        z_force_id = z_force.id

    with Session(engine) as session:
        team = session.get(Team, z_force_id)
        yield "team.heroes", sorted(h.name for h in team.heroes)
        hero = session.exec(select(Hero).where(Hero.name == "Tarantula")).one()
        yield "hero.team", hero.team.name
        yield "where team_id", heroes(session, select(Hero).where(Hero.team_id == z_force_id))

    # "Update Relationships": a hero leaves the team, another joins from team.heroes.
    with Session(engine) as session:
        team = session.get(Team, z_force_id)
        black_lion = next(h for h in team.heroes if h.name == "Black Lion")
        team.heroes.remove(black_lion)
        session.add(Hero(name="Princess Sure-E", secret_name="Sure-E", team=team))
        session.commit()
        session.refresh(team)
        yield "team after update", sorted(h.name for h in team.heroes)
        yield "hero without team", session.exec(select(Hero).where(Hero.name == "Black Lion")).one().team_id

    # Deleting a team through the ORM sets its heroes' team_id to None (no ondelete in the tutorial).
    with Session(engine) as session:
        session.delete(session.get(Team, z_force_id))
        session.commit()
        yield "after team delete", heroes(session, select(Hero))

    # A Team without its NOT NULL headquarters is refused by both.
    with Session(engine) as session:
        session.add(Team(name="Nobody", headquarters=None))
        try:
            session.commit()
            yield "not null", "committed"
        except IntegrityError:
            yield "not null", "IntegrityError"


@pytest.fixture
def engines(endpoint_url: str) -> Iterator[tuple]:
    # select(Hero) without a WHERE is a Scan, as the tutorial means it to be.
    sqlite, dynamo = create_engine("sqlite://"), create_engine("dynamodb+local://", dynamodb_scan="allow")
    yield sqlite, dynamo
    for engine in (sqlite, dynamo):
        SQLModel.metadata.drop_all(engine)
        engine.dispose()


def test_every_step_gives_sqlites_result(engines) -> None:
    sqlite, dynamo = engines
    for expected, got in zip(tutorial(sqlite), tutorial(dynamo), strict=True):
        assert got == expected
