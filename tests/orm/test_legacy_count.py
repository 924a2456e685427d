"""The legacy ``Query.count()`` counts as ``select(func.count())`` does: one COUNT over the same
conditions, a Query when they pin the partition key."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import ForeignKey, String, event, func, select
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, selectinload

import sa_dynamo
from sa_dynamo.exc import ScanNotAllowed


@pytest.fixture(scope="module")
def staff(engine):
    """Employees of two companies (partition key ``company``), engineers and managers in one table."""

    class Base(DeclarativeBase):
        pass

    badges = f"count_badges_{uuid.uuid4().hex[:8]}"  # each run's own: the mappers of a run outlive it

    class Employee(Base):
        __tablename__ = f"count_staff_{uuid.uuid4().hex[:8]}"
        company: Mapped[str] = mapped_column(String, primary_key=True)
        id: Mapped[int] = mapped_column(primary_key=True)
        kind: Mapped[str]
        name: Mapped[str | None]
        badge_id: Mapped[int | None] = mapped_column(ForeignKey(f"{badges}.id"))
        badge = relationship("Badge")
        __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "employee"}

    class Engineer(Employee):
        __mapper_args__ = {"polymorphic_identity": "engineer"}

    class Manager(Employee):
        __mapper_args__ = {"polymorphic_identity": "manager"}

    class Badge(Base):
        __tablename__ = badges
        id: Mapped[int] = mapped_column(primary_key=True)

    Employee.__table__.create(engine)
    with Session(engine) as session:
        session.add_all(
            [Engineer(company="acme", id=i, name=f"e{i}") for i in range(4)]
            + [Manager(company="acme", id=10, name="m"), Engineer(company="initech", id=1, name="x")]
        )
        session.commit()
    yield SimpleNamespace(Employee=Employee, Engineer=Engineer, Manager=Manager)
    Employee.__table__.drop(engine)


@pytest.fixture
def strict(engine):
    return engine.execution_options(dynamodb_scan="error")


@pytest.fixture
def sent(strict):
    statements: list[str] = []
    listener = lambda conn, cursor, statement, *args: statements.append(statement)  # noqa: E731
    event.listen(strict, "before_cursor_execute", listener)
    yield statements
    event.remove(strict, "before_cursor_execute", listener)


def test_count_with_a_key_condition_is_one_count_query(strict, staff, sent):
    Engineer = staff.Engineer
    with Session(strict) as session:
        query = session.query(Engineer).filter(Engineer.company == "acme")
        assert query.count() == 4 == len(query.all())
    table = Engineer.__table__.name
    assert sent[0] == f'SELECT "company" FROM "{table}" WHERE "company" = ? AND ("kind" IN [?])'


def test_count_keeps_every_condition_and_drops_what_only_shapes_objects(strict, staff):
    Employee, Engineer, Manager = staff.Employee, staff.Engineer, staff.Manager
    with Session(strict) as session:
        assert session.query(Employee).filter(Employee.company == "acme").order_by(Employee.name).count() == 5
        assert session.query(Manager).filter(Manager.company == "acme").count() == 1
        assert session.query(Engineer).filter(Engineer.company == "acme", Engineer.id >= 2).count() == 2
        assert (
            session.query(Engineer.name).filter(Engineer.company == "acme", Engineer.name > "e1").count() == 2
        )
        loaded = session.query(Employee).options(selectinload(Employee.badge))
        assert loaded.filter(Employee.company == "initech").count() == 1
        # the count of a select() run through the Session is rewritten the same way
        subquery = select(Engineer).where(Engineer.company == "acme").subquery()
        assert session.scalar(select(func.count()).select_from(subquery)) == 4


def test_count_without_a_key_condition_is_a_scan_for_the_guard(strict, engine, staff):
    Engineer = staff.Engineer
    with Session(strict) as session, pytest.raises(ScanNotAllowed, match="scans the whole table"):
        session.query(Engineer).filter(Engineer.name == "x").count()
    with Session(engine) as session:
        allowed = session.query(Engineer).execution_options(dynamodb_scan="allow")
        assert allowed.filter(Engineer.name.in_(["e1", "x"])).count() == 2


def test_a_count_that_is_not_the_where_s_matches_is_still_refused(strict, staff):
    """LIMIT caps the rows counted: that is not a COUNT of the WHERE, so it stays a subquery."""
    Engineer = staff.Engineer
    with Session(strict) as session, pytest.raises(CompileError, match="subquery"):
        session.query(Engineer).filter(Engineer.company == "acme").limit(2).count()


def test_a_base_class_count_counts_only_the_kinds_it_loads(engine, raw):
    """An item of a kind no class maps (another service's) is not loaded, so it is not counted."""

    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = f"count_kinds_{uuid.uuid4().hex[:8]}"
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)

    class Customer(Item):
        pass

    Base.metadata.create_all(engine)
    try:
        with Session(engine) as session:
            session.add_all([Customer(pk="A", sk="1"), Customer(pk="A", sk="2")])
            session.commit()
        raw.put_item(
            TableName=Item.__tablename__, Item={"pk": {"S": "A"}, "sk": {"S": "3"}, "$type": {"S": "Invoice"}}
        )
        with Session(engine) as session:
            query = session.query(Item).filter(Item.pk == "A")
            assert query.count() == len(query.all()) == 2
            assert session.scalar(select(func.count()).select_from(Item).where(Item.pk == "A")) == 2
    finally:
        Base.metadata.drop_all(engine)
