"""The ORM's join() and outerjoin() over relationships (1:N and N:1, to a single-table-inheritance
subclass too), and GROUP BY over them, compared with SQLite holding the same objects."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, ForeignKey, String, create_engine, func, or_, select
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    aliased,
    joinedload,
    mapped_column,
    relationship,
    with_polymorphic,
)

RUN = uuid.uuid4().hex[:8]


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = f"orm_join_users_{RUN}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(30))
    addresses: Mapped[list[Address]] = relationship(back_populates="user")

    def __repr__(self) -> str:
        return f"User({self.id}, {self.name!r})"


class Address(Base):
    __tablename__ = f"orm_join_addresses_{RUN}"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str]
    user_id: Mapped[int | None] = mapped_column(ForeignKey(User.id), index=True)
    user: Mapped[User | None] = relationship(back_populates="addresses")

    def __repr__(self) -> str:
        return f"Address({self.id}, {self.email!r})"


class Company(Base):
    __tablename__ = f"orm_join_companies_{RUN}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    employees: Mapped[list[Employee]] = relationship(back_populates="company")

    def __repr__(self) -> str:
        return f"Company({self.id}, {self.name!r})"


class Employee(Base):
    __tablename__ = f"orm_join_employees_{RUN}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    type: Mapped[str]
    company_id: Mapped[int | None] = mapped_column(ForeignKey(Company.id), index=True)
    company: Mapped[Company | None] = relationship(back_populates="employees")
    __mapper_args__ = {"polymorphic_on": "type", "polymorphic_identity": "employee"}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id}, {self.name!r})"


class Engineer(Employee):
    engineer_name: Mapped[str | None]
    __mapper_args__ = {"polymorphic_identity": "engineer"}


class Manager(Employee):
    manager_name: Mapped[str | None]
    __mapper_args__ = {"polymorphic_identity": "manager"}


NAMES = ["sandy", "spongebob", "patrick", "squidward"]


@pytest.fixture(scope="module")
def engines(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        Base.metadata.create_all(each)
        with Session(each) as session:
            session.add_all(User(id=i, name=NAMES[i % 4]) for i in range(1, 21))
            session.add_all(Company(id=i, name=f"company{i}") for i in range(1, 6))
            session.commit()
            session.add_all(
                Address(
                    id=100 + j, email=f"{NAMES[j % 4][0]}{j}@x", user_id=None if j % 9 == 0 else j % 24 + 1
                )
                for j in range(40)
            )
            session.commit()
            for j in range(30):
                kind = (Engineer, Manager, Employee)[j % 3]
                extra = {Engineer: {"engineer_name": f"e{j % 4}"}, Manager: {"manager_name": f"m{j % 2}"}}
                company = None if j % 8 == 0 else j % 6 + 1
                session.add(kind(id=200 + j, name=f"emp{j}", company_id=company, **extra.get(kind, {})))
            session.commit()
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


@pytest.mark.xfail(
    strict=True,
    raises=CompileError,
    reason="the discriminator filter sa_dynamo injects (orm/discriminator.py, with_loader_criteria) names "
    "the employees table, not the with_polymorphic alias the statement joins: refused, not yet joined",
)
def test_a_join_to_with_polymorphic_like_sqlite(engines):
    statement = (
        select(Company.name, eng_manager.name)
        .join(Company.employees.of_type(eng_manager))
        .where(or_(eng_manager.Engineer.engineer_name == "e1", eng_manager.Manager.manager_name == "m0"))
        .order_by(eng_manager.id)
    )
    assert len(_same(engines, statement)) > 1
