"""The ORM's relationship tests ``any()`` and ``has()`` (EXISTS correlated by the relationship's
columns), ``in_(select(...))``, and bulk UPDATE/DELETE by them, compared with SQLite holding the
same objects; single-table-inheritance subclasses included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, delete, select, update
from sqlalchemy.orm import Session
from support.org import fill_org, org_models

# Employee.company_id unindexed: a company's employees are scanned for, under the scan policy
models = org_models("orm_semi", company_index=False)
Base, User, Address, Company = models.Base, models.User, models.Address, models.Company
Employee, Engineer, Manager = models.Employee, models.Engineer, models.Manager


@pytest.fixture
def engines(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        Base.metadata.create_all(each)
        fill_org(each, models, companies=6, spread=5)
    yield engine.execution_options(dynamodb_scan="allow", dynamodb_client_sort=1000), sqlite
    Base.metadata.drop_all(engine)
    sqlite.dispose()


def _results(engine: Engine, statement: Any) -> list[Any]:
    with Session(engine) as session:
        return [repr(tuple(row)) for row in session.execute(statement)]


STATEMENTS = {
    "any()": select(User).where(User.addresses.any(Address.email.like("s%"))).order_by(User.id),
    "not any()": select(User).where(~User.addresses.any()).order_by(User.id),
    "has()": select(Address).where(Address.user.has(User.name == "sandy")).order_by(Address.id),
    "not has()": select(Address.id).where(~Address.user.has(User.name == "sandy")).order_by(Address.id),
    "any() of a subclass": select(Company)
    .where(Company.employees.of_type(Engineer).any(Engineer.engineer_name == "e1"))
    .order_by(Company.id),
    "has() from a subclass": select(Manager)
    .where(Manager.company.has(Company.name != "company3"))
    .order_by(Manager.id),
    "in_(select())": select(User.id, User.name)
    .where(User.id.in_(select(Address.user_id).where(Address.email.like("p%"))))
    .order_by(User.name, User.id),
    "in_(select()) of a subclass": select(Company.name)
    .where(Company.id.in_(select(Manager.company_id).where(Manager.manager_name == "m1")))
    .order_by(Company.name),
}


@pytest.mark.parametrize("statement", list(STATEMENTS.values()), ids=list(STATEMENTS))
def test_orm_semi_joins_like_sqlite(engines, statement):
    dynamodb, sqlite = engines
    got = _results(dynamodb, statement)
    assert got == _results(sqlite, statement)
    assert got


@pytest.mark.parametrize("autocommit", [False, True], ids=["session", "autocommit"])
def test_bulk_update_and_delete_by_any_and_has(engines, autocommit):
    counts, tables = [], []
    for engine in engines:
        if autocommit:
            engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        with Session(engine) as session:
            loaded = session.scalars(select(User).order_by(User.id)).all()  # synchronized below
            counts.append(
                (
                    session.execute(
                        update(User)
                        .where(User.addresses.any(Address.email.like("s%")))
                        .values(name="emailed")
                    ).rowcount,
                    session.execute(
                        delete(Engineer).where(
                            Engineer.company.has(Company.name.in_(["company2", "company4"]))
                        )
                    ).rowcount,
                    session.execute(
                        update(Address)
                        .where(Address.user_id.in_(select(User.id).where(User.id < 9)))
                        .values(email="patrick@x")
                    ).rowcount,
                )
            )
            names = [user.name for user in loaded]
            session.commit()
            tables.append(
                (
                    names,
                    _results(engine, select(User.id, User.name).order_by(User.id)),
                    _results(engine, select(Employee.id, Employee.type).order_by(Employee.id)),
                    _results(engine, select(Address.id, Address.email).order_by(Address.id)),
                )
            )
    assert counts[0] == counts[1]
    assert all(count > 1 for count in counts[0]), counts
    assert tables[0] == tables[1]
    assert "emailed" in tables[0][0]  # the session's objects were synchronized
