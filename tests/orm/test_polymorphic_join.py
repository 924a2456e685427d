"""The join to a ``with_polymorphic(..., aliased=True)`` of a single-table hierarchy, as in
SQLAlchemy's inheritance guide: joined like SQLite, with the discriminator filter sa_dynamo
injects landing on the alias (items of kinds the models do not know stay out)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, insert, or_, select
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import Session, aliased, with_polymorphic
from support.org import fill_org, org_models

models = org_models("orm_polyjoin")
Base, Company = models.Base, models.Company
Employee, Engineer, Manager = models.Employee, models.Engineer, models.Manager
FOREIGN = 900  # an item of a kind no model maps, written to DynamoDB by another writer


@pytest.fixture(scope="module")
def engines(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        Base.metadata.create_all(each)
        fill_org(each, models, companies=4, spread=4)
    with engine.begin() as connection:
        connection.execute(
            insert(Employee.__table__).values(id=FOREIGN, name="intruder", type="contractor", company_id=1)
        )
    yield engine.execution_options(dynamodb_scan="allow"), sqlite
    Base.metadata.drop_all(engine)
    sqlite.dispose()


def _results(engine: Engine, statement: Any) -> list[str]:
    with Session(engine) as session:
        return [repr(tuple(row)) for row in session.execute(statement)]


both = with_polymorphic(Employee, [Engineer, Manager], aliased=True)
STATEMENTS = {
    "the guide's filter": select(Company.name, both.name, both.type)
    .join(Company.employees.of_type(both))
    .where(or_(both.Engineer.engineer_name == "e1", both.Manager.manager_name == "m0"))
    .order_by(both.id),
    "every kind, entities": select(Company, both).join(Company.employees.of_type(both)).order_by(both.id),
    "outer, every kind": select(Company.id, both.id, both.type)
    .outerjoin(Company.employees.of_type(both))
    .order_by(Company.id, both.id),
    "from the alias": select(both.name, Company.name).join(both.company).order_by(both.id),
}


@pytest.mark.parametrize("statement", list(STATEMENTS.values()), ids=list(STATEMENTS))
def test_a_join_to_with_polymorphic_gives_sqlites_rows(engines, statement):
    got = _results(engines[0], statement)
    assert got == _results(engines[1], statement)
    assert len(got) > 1
    assert "intruder" not in repr(got) and "contractor" not in repr(got)


def test_the_alias_loads_each_kind_as_its_class(engines):
    """Plain employees come back as SQLite gives them (the base class is in the hierarchy), the
    foreign kind does not, and each row is an instance of its own class."""
    statement = select(both).join(both.company).where(Company.id == 1).order_by(both.id)
    with Session(engines[0]) as session:
        kinds = {type(each).__name__ for each in session.scalars(statement)}
    assert kinds == {"Employee", "Engineer", "Manager"}
    assert _results(engines[0], statement) == _results(engines[1], statement)


def test_the_foreign_item_is_there_to_be_kept_out(engines):
    """The filter is what keeps the intruder out: read without it, the item is there."""
    statement = (
        select(Employee.__table__.c.name)
        .where(Employee.__table__.c.company_id == 1)
        .execution_options(dynamodb_discriminator_filter=False)
    )
    with engines[0].connect() as connection:
        assert "intruder" in connection.scalars(statement).all()


def test_an_aliased_subclass_join_is_unchanged(engines):
    manager = aliased(Manager)
    statement = (
        select(Company.name, manager.manager_name)
        .join(Company.employees.of_type(manager))
        .order_by(manager.id)
    )
    got = _results(engines[0], statement)
    assert got == _results(engines[1], statement) and len(got) > 1


def test_a_condition_on_the_table_beside_its_alias_is_refused_with_advice(engines):
    """An ON clause naming the table while the FROM joins only its alias (SQLite: no such
    column): refused before anything is sent, saying to name the alias's columns."""
    employees = Employee.__table__
    alias = employees.alias()
    statement = select(alias.c.name).select_from(
        Company.__table__.join(alias, Company.__table__.c.id == employees.c.company_id)
    )
    with engines[0].connect() as connection, pytest.raises(CompileError) as refused:
        connection.execute(statement)
    message = str(refused.value)
    assert f"the column company_id of the table {employees.name}, which the FROM joins only as" in message
    assert "name the alias's columns" in message
