"""Users with addresses, and companies with employees of a single-table hierarchy (Engineer,
Manager): the ORM models the join and semi-join tests compare with SQLite, each test module on
tables of its own."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from sqlalchemy import Engine, ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

NAMES = ["sandy", "spongebob", "patrick", "squidward"]


def org_models(prefix: str, *, company_index: bool = True) -> SimpleNamespace:
    """Base, User, Address, Company, Employee, Engineer, Manager; ``company_index``: whether
    Employee.company_id is indexed (without, a company's employees can only be scanned for)."""
    run = uuid.uuid4().hex[:8]

    class Base(DeclarativeBase):
        pass

    class User(Base):
        __tablename__ = f"{prefix}_users_{run}"
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str] = mapped_column(String(30))
        addresses: Mapped[list[Address]] = relationship(back_populates="user")

        def __repr__(self) -> str:
            return f"User({self.id}, {self.name!r})"

    class Address(Base):
        __tablename__ = f"{prefix}_addresses_{run}"
        id: Mapped[int] = mapped_column(primary_key=True)
        email: Mapped[str]
        user_id: Mapped[int | None] = mapped_column(ForeignKey(User.id), index=True)
        user: Mapped[User | None] = relationship(back_populates="addresses")

        def __repr__(self) -> str:
            return f"Address({self.id}, {self.email!r})"

    class Company(Base):
        __tablename__ = f"{prefix}_companies_{run}"
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str]
        employees: Mapped[list[Employee]] = relationship(back_populates="company")

        def __repr__(self) -> str:
            return f"Company({self.id}, {self.name!r})"

    class Employee(Base):
        __tablename__ = f"{prefix}_employees_{run}"
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str]
        type: Mapped[str]
        company_id: Mapped[int | None] = mapped_column(ForeignKey(Company.id), index=company_index)
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

    return SimpleNamespace(
        Base=Base,
        User=User,
        Address=Address,
        Company=Company,
        Employee=Employee,
        Engineer=Engineer,
        Manager=Manager,
    )


def fill_org(engine: Engine, models: SimpleNamespace, companies: int, spread: int) -> None:
    """20 users, ``companies`` companies, 40 addresses (some of no user, some of a missing one)
    and 30 employees, every eighth of no company, the others of company ``j % spread + 1``."""
    m = models
    with Session(engine) as session:
        session.add_all(m.User(id=i, name=NAMES[i % 4]) for i in range(1, 21))
        session.add_all(m.Company(id=i, name=f"company{i}") for i in range(1, companies + 1))
        session.commit()
        session.add_all(
            m.Address(id=100 + j, email=f"{NAMES[j % 4][0]}{j}@x", user_id=None if j % 9 == 0 else j % 24 + 1)
            for j in range(40)
        )
        session.commit()
        for j in range(30):
            kind = (m.Engineer, m.Manager, m.Employee)[j % 3]
            extra = {m.Engineer: {"engineer_name": f"e{j % 4}"}, m.Manager: {"manager_name": f"m{j % 2}"}}
            company = None if j % 8 == 0 else j % spread + 1
            session.add(kind(id=200 + j, name=f"emp{j}", company_id=company, **extra.get(kind, {})))
        session.commit()
