"""The ORM's join() and outerjoin() over relationships (1:N and N:1, to a single-table-inheritance
subclass too), and GROUP BY over them, compared with SQLite holding the same objects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, or_, select
from sqlalchemy.orm import (
    Session,
    aliased,
    joinedload,
    with_polymorphic,
)
from support.org import fill_org, org_models

models = org_models("orm_join")
Base, User, Address, Company = models.Base, models.User, models.Address, models.Company
Employee, Engineer, Manager = models.Employee, models.Engineer, models.Manager


@pytest.fixture(scope="module")
def engines(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        Base.metadata.create_all(each)
        fill_org(each, models, companies=5, spread=6)
    yield engine, sqlite
    Base.metadata.drop_all(engine)
    sqlite.dispose()


def _results(engine: Engine, statement: Any) -> list[Any]:
    with Session(engine) as session:
        return [repr(tuple(row)) for row in session.execute(statement)]


def _same(engines: tuple[Engine, Engine], statement: Any) -> list[Any]:
    dynamodb, sqlite = engines
    got = _results(dynamodb, statement.execution_options(dynamodb_scan="allow"))
    assert got == _results(sqlite, statement)
    return got


manager = aliased(Manager)
eng_manager = with_polymorphic(Employee, [Engineer, Manager], aliased=True)
STATEMENTS = {
    "N:1, the guide's": select(Address).join(Address.user).where(User.name == "sandy").order_by(Address.id),
    "1:N": select(User.name, Address.email).join(User.addresses).where(User.id < 12).order_by(Address.email),
    "1:N, entities": select(User, Address).join(User.addresses).order_by(User.id, Address.id),
    "outer": select(User.id, Address.id).outerjoin(User.addresses).order_by(User.id, Address.id),
    "to a subclass": select(Company.name, Engineer.name)
    .join(Company.employees.of_type(Engineer))
    .where(Engineer.engineer_name.in_(["e1", "e2"]))
    .order_by(Engineer.id),
    "from a subclass": select(Manager)
    .join(Manager.company)
    .where(Company.name != "company3")
    .order_by(Manager.id),
    "to an alias of a subclass": select(Company.id, manager.manager_name)
    .outerjoin(Company.employees.of_type(manager))
    .order_by(Company.id, manager.id),
    "grouped": select(User.name, func.count(Address.id))
    .outerjoin(User.addresses)
    .group_by(User.name)
    .order_by(User.name),
    "grouped subclass": select(Company.name, func.count())
    .join(Company.employees.of_type(Engineer))
    .group_by(Company.name)
    .having(func.count() > 1)
    .order_by(Company.name),
}


@pytest.mark.parametrize("statement", list(STATEMENTS.values()), ids=list(STATEMENTS))
def test_orm_joins_like_sqlite(engines, statement):
    assert len(_same(engines, statement)) > 1


def test_joinedload_loads_each_relationship_like_sqlite(engines):
    """joinedload() is a LEFT OUTER JOIN to an alias of the related table: computed the same way."""
    users = select(User).options(joinedload(User.addresses)).order_by(User.id)
    addresses = select(Address).options(joinedload(Address.user)).where(Address.id > 110).order_by(Address.id)
    companies = select(Company).options(joinedload(Company.employees)).order_by(Company.id)
    got = []
    for engine in engines:
        with Session(engine) as session:
            options = {"dynamodb_scan": "allow"} if engine is engines[0] else {}
            loaded = [
                [
                    (user, sorted(user.addresses, key=repr))
                    for user in session.scalars(users.execution_options(**options)).unique()
                ],
                [
                    (address, address.user)
                    for address in session.scalars(addresses.execution_options(**options))
                ],
                [
                    (company, sorted(company.employees, key=repr))
                    for company in session.scalars(companies.execution_options(**options)).unique()
                ],
            ]
            got.append(repr(loaded))
    assert got[0] == got[1]
    assert "Address(" in got[0] and "Engineer(" in got[0]


def test_a_join_to_with_polymorphic_like_sqlite(engines):
    statement = (
        select(Company.name, eng_manager.name)
        .join(Company.employees.of_type(eng_manager))
        .where(or_(eng_manager.Engineer.engineer_name == "e1", eng_manager.Manager.manager_name == "m0"))
        .order_by(eng_manager.id)
    )
    assert len(_same(engines, statement)) > 1
