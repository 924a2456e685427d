"""Relationships across tables: with index=True on the foreign key every load is a Query (SQLAlchemy's
ORM Quick Start runs without one scan); without it, each load scans, and both the warning and
``sa-dynamo check`` say how to fix it."""

from __future__ import annotations

import logging
import sys
import uuid
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import ForeignKey, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, selectinload
from support.quick_start import quick_start_users

from sa_dynamo import check
from sa_dynamo.exc import ScanWarning


def quick_start_models(indexed: bool) -> SimpleNamespace:
    """The User/Address models of SQLAlchemy's ORM Quick Start, on fresh table names. ``indexed``:
    index=True on the foreign key (and on User.name, which the Quick Start queries by)."""
    suffix = uuid.uuid4().hex[:8]

    class Base(DeclarativeBase):
        pass

    class User(Base):
        __tablename__ = f"user_account_{suffix}"
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str] = mapped_column(String(30), index=indexed)
        fullname: Mapped[str | None]
        addresses: Mapped[list[Address]] = relationship(back_populates="user", cascade="all, delete-orphan")

    class Address(Base):
        __tablename__ = f"address_{suffix}"
        id: Mapped[int] = mapped_column(primary_key=True)
        email_address: Mapped[str]
        user_id: Mapped[int] = mapped_column(ForeignKey(f"{User.__tablename__}.id"), index=indexed)
        user: Mapped[User] = relationship(back_populates="addresses")

    return SimpleNamespace(Base=Base, User=User, Address=Address)


@pytest.fixture
def models(engine, request):
    models = quick_start_models(indexed=request.param)
    models.Base.metadata.create_all(engine)
    yield models
    models.Base.metadata.drop_all(engine)
    models.Base.registry.dispose()


@pytest.fixture
def plans(caplog):
    """The access path of each statement run from now on (the sa_dynamo log's plan lines)."""
    caplog.set_level(logging.INFO, logger="sa_dynamo")
    return lambda: [
        r.getMessage() for r in caplog.records if r.name == "sa_dynamo" and " on " in r.getMessage()
    ]


@pytest.mark.parametrize("models", [True], indirect=True)
def test_the_orm_quick_start_never_scans(engine, models, plans):
    User, Address = models.User, models.Address
    strict = engine.execution_options(dynamodb_scan="error")
    with Session(strict) as session:
        session.add_all(quick_start_users(User, Address))
        session.commit()

    with Session(strict) as session:
        # Simple SELECT (User.name is indexed: a Query on its index)
        found = session.scalars(select(User).where(User.name.in_(["spongebob", "sandy"]))).all()
        assert sorted(user.name for user in found) == ["sandy", "spongebob"]
        # SELECT with JOIN, as its two Queries: the user by name, then its addresses
        sandy = session.scalars(select(User).where(User.name == "sandy")).one()
        sandy_address = session.scalars(
            select(Address).where(
                Address.user_id == sandy.id, Address.email_address == "sandy@sqlalchemy.org"
            )
        ).one()
        assert sandy_address.id == 2
        # Make changes: a lazy load of patrick.addresses, an update of sandy's address
        patrick = session.scalars(select(User).where(User.name == "patrick")).one()
        patrick.addresses.append(Address(id=4, email_address="patrickstar@sqlalchemy.org"))
        sandy_address.email_address = "sandy_cheeks@sqlalchemy.org"
        session.commit()
        # Some deletes: a delete-orphan, then a user with its addresses (loaded to cascade)
        sandy = session.get(User, 2)
        sandy.addresses.remove(sandy_address)
        session.flush()
        session.delete(patrick)
        session.commit()

    with Session(strict) as session:
        users = session.scalars(
            select(User).where(User.id.in_([1, 2, 3])).options(selectinload(User.addresses))
        )
        assert sorted((u.name, sorted(a.email_address for a in u.addresses)) for u in users) == [
            ("sandy", ["sandy@squirrelpower.org"]),
            ("spongebob", ["spongebob@sqlalchemy.org"]),
        ]
        assert session.get(Address, 2) is None and session.get(Address, 4) is None
    operations = {plan.split(" on ")[0] for plan in plans()}
    assert operations <= {"GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem"}, plans()
    assert "Query" in operations


@pytest.mark.parametrize("models", [True], indirect=True)
def test_a_selectin_load_of_many_parents_is_queries_of_50_keys(engine, models, plans):
    """SQLAlchemy loads up to 500 parents' children in one statement; DynamoDB reads at most 50
    partitions in one Query."""
    User, Address = models.User, models.Address
    strict = engine.execution_options(dynamodb_scan="error")
    for start in (0, 40, 80):  # a transaction holds at most 100 writes
        with Session(strict) as session:
            session.add_all([User(id=i, name="crew") for i in range(start, start + 40)])
            session.add_all(
                [Address(id=i, user_id=i - i % 2, email_address=f"{i}@x") for i in range(start, start + 40)]
            )
            session.commit()
    with Session(strict) as session:
        crew = session.scalars(
            select(User).where(User.name == "crew").options(selectinload(User.addresses))
        ).all()
        assert sorted((u.id, sorted(a.id for a in u.addresses)) for u in crew) == [
            (i, [i, i + 1] if i % 2 == 0 else []) for i in range(120)
        ]
    loads = [plan for plan in plans() if plan.startswith(f"Query on {Address.__tablename__}.")]
    assert [plan.count("?") for plan in loads] == [50, 50, 20]


HERE = str(Path(__file__).resolve())


@pytest.mark.parametrize("models", [False], indirect=True)
def test_a_load_by_an_unindexed_foreign_key_warns_with_the_fix(engine, models):
    User, Address = models.User, models.Address
    with Session(engine) as session:
        session.add(User(id=1, name="ann", addresses=[Address(id=1, email_address="a@x")]))
        session.commit()
    with Session(engine) as session, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ann = session.get(User, 1)
        lazy_line = _next_line()
        assert [a.id for a in ann.addresses] == [1]
        session.expunge_all()
        selectin_line = _next_line()
        users = session.scalars(select(User).where(User.id == 1).options(selectinload(User.addresses))).all()
        assert [a.id for a in users[0].addresses] == [1]
    assert [(w.category, w.filename, w.lineno) for w in caught] == [
        (ScanWarning, HERE, lazy_line),
        (ScanWarning, HERE, selectin_line),
    ]
    for warning in caught:
        assert f"scans the whole table {Address.__tablename__!r}" in str(warning.message)
        assert (
            f"It loads relationship User.addresses, by {Address.__tablename__}.user_id, which is not the "
            "partition key of the table or of a global index: declare user_id with index=True (a global "
            "secondary index, created with the table or by Index.create) and these loads become Queries, "
            "or pass dynamodb_scan='allow'"
        ) in str(warning.message)


def _next_line() -> int:
    """The line after the caller's."""
    return sys._getframe(1).f_lineno + 1


@pytest.mark.parametrize("models", [False, True], indirect=True, ids=["unindexed", "indexed"])
def test_check_lists_relationships_whose_loads_scan(engine, models):
    Address = models.Address
    differences = [d for d in check.check(models.Base, engine) if d.attribute == "user_id"]
    if Address.__table__.c.user_id.index:
        assert differences == []
        return
    assert [str(d) for d in differences] == [
        f"relationship User.addresses loads by {Address.__tablename__}.user_id, which is not the partition "
        "key of the table or of a global index, so each lazy load and selectinload scans the whole table "
        f"{Address.__tablename__}: declare user_id with index=True (a global secondary index; Index.create "
        "or a migration creates it on the live table)"
    ]
