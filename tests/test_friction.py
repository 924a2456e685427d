"""What SQLModel, Flask-SQLAlchemy and pandas users meet first (issue 31 item 6): a many-to-many
load refused with the relationship named, ``check`` on a base shaped as SQLModel's (its registry
kept as ``_sa_registry`` only) listing those relationships, ``explain`` on a ``scoped_session``
(Flask-SQLAlchemy's ``db.session``), and a scan warning from a statement pandas runs pointing at
the caller's line. sqlmodel and flask_sqlalchemy are not test dependencies: their shapes are
built here with SQLAlchemy alone."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator

import pandas as pd
import pytest
from sqlalchemy import Column, ForeignKey, Table, select
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import (
    Mapped,
    Session,
    mapped_column,
    registry,
    relationship,
    scoped_session,
    sessionmaker,
    subqueryload,
)

import sa_dynamo
from sa_dynamo.check import check
from sa_dynamo.exc import ScanWarning

SUFFIX = uuid.uuid4().hex[:8]
models = registry()


class ModelBase:
    """SQLModel's shape: a class whose metaclass keeps the registry as ``_sa_registry`` and whose
    ``metadata`` is the registry's, with no ``registry`` attribute and no DeclarativeBase."""

    _sa_registry = models
    metadata = models.metadata


link = Table(
    f"fr_link_{SUFFIX}",
    models.metadata,
    Column("team_id", ForeignKey(f"fr_team_{SUFFIX}.id"), primary_key=True),
    Column("hero_id", ForeignKey(f"fr_hero_{SUFFIX}.id"), primary_key=True),
)


@models.mapped
class Team:
    __tablename__ = f"fr_team_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    heroes: Mapped[list[Hero]] = relationship(secondary=link, back_populates="teams")


@models.mapped
class Hero:
    __tablename__ = f"fr_hero_{SUFFIX}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str | None]
    teams: Mapped[list[Team]] = relationship(secondary=link, back_populates="heroes")


@pytest.fixture(scope="module")
def tables(engine) -> Iterator[None]:
    models.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Team(id=1, heroes=[Hero(id=1, name="Deadpond"), Hero(id=2, name="Rusty-Man")]))
        session.commit()
    yield
    models.metadata.drop_all(engine)


def test_a_many_to_many_load_is_refused_naming_the_relationship(engine, tables):
    with Session(engine) as session:
        team = session.get(Team, 1)
        with pytest.raises(CompileError) as refused:
            team.heroes  # noqa: B018
    message = str(refused.value)
    assert message.startswith(
        f"relationship Team.heroes cannot be loaded: it goes through the link table {link.name}"
    )
    assert f"read the rows of {link.name} by {link.name}.team_id (its partition key, or index=True" in message
    assert "then each Hero by its key with session.get()" in message


def test_a_many_to_many_subqueryload_is_refused_without_an_anonymous_name(engine, tables):
    """The ORM's subquery is anonymous until compiled: the refusal names what it is, no placeholder."""
    with Session(engine) as session, pytest.raises(CompileError) as refused:
        session.scalars(select(Team).where(Team.id == 1).options(subqueryload(Team.heroes))).all()
    assert str(refused.value).startswith(
        f"relationship Team.heroes cannot be loaded: it goes through the link table {link.name} (DynamoDB "
        "PartiQL cannot express a column of a subquery: select columns of the table itself); read the rows"
    )


def test_check_takes_a_sqlmodel_shaped_base_and_lists_its_many_to_many_relationships(engine, tables):
    found = [str(d) for d in check(ModelBase, engine)]
    assert found == [
        f"relationship Hero.teams loads through the link table {link.name}, a join DynamoDB cannot run, so "
        f"its loads are refused: read the rows of {link.name} by {link.name}.hero_id (its partition key, "
        "or index=True on it), then each Team by its key with session.get(); or declare the "
        "relationship lazy='noload' to leave it unloaded",
        f"relationship Team.heroes loads through the link table {link.name}, a join DynamoDB cannot run, so "
        f"its loads are refused: read the rows of {link.name} by {link.name}.team_id (its partition key, "
        "or index=True on it), then each Hero by its key with session.get(); or declare the "
        "relationship lazy='noload' to leave it unloaded",
    ]


def test_explain_takes_a_scoped_session(engine, tables):
    """Flask-SQLAlchemy's ``db.session`` is a scoped_session."""
    session = scoped_session(sessionmaker(engine))
    try:
        plan = sa_dynamo.explain(session, select(Hero).where(Hero.id == 1))
    finally:
        session.remove()
    assert plan.summary() == f'GetItem on {Hero.__tablename__}; key: "id" = ?'


def test_a_scan_warning_of_a_statement_pandas_runs_points_at_the_callers_line(engine, tables):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = pd.read_sql(select(Hero.id, Hero.name).where(Hero.name == "Deadpond"), engine)
    assert frame.to_dict("records") == [{"id": 1, "name": "Deadpond"}]
    scans = [w for w in caught if issubclass(w.category, ScanWarning)]
    assert [(w.filename, w.lineno) for w in scans] == [(__file__, frame_line())]


def frame_line() -> int:
    """The line of the read_sql call in the test above."""
    source = open(__file__).read().splitlines()  # noqa: SIM115
    return next(i for i, line in enumerate(source, 1) if "frame = pd.read_sql(" in line)
