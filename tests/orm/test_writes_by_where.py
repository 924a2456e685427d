"""The ORM's UPDATE and DELETE by any WHERE (``session.execute(update(Engineer).where(...))``),
run on SQLite and on DynamoDB Local: the same rowcounts, the same objects in the session after
each ``synchronize_session`` strategy, the same rows afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, delete, select, update
from sqlalchemy.orm import Session
from support.staff import Employee, Engineer, Manager, StaffBase, staff_table

ALLOW = {"dynamodb_scan": "allow"}
STRATEGIES = ["auto", "evaluate", "fetch", False]


@pytest.fixture
def engines(engine) -> Iterator[tuple]:
    sqlite = create_engine("sqlite://")
    StaffBase.metadata.create_all(sqlite)
    with Session(sqlite) as session:
        session.add_all([Engineer(id=1, name="Ann", language="py"), Manager(id=2, name="Bob", reports=3)])
        session.commit()
    with staff_table(engine):
        for session_engine in (engine, sqlite):
            with Session(session_engine) as session:
                session.add_all(
                    [Engineer(id=3, name="Cy", language="go"), Engineer(id=4, name="Bea", language=None)]
                )
                session.commit()
        yield engine, sqlite
    sqlite.dispose()


def everyone(engine) -> list[tuple]:
    with Session(engine) as session:
        return sorted(
            (e.id, type(e).__name__, e.name, getattr(e, "language", None), getattr(e, "reports", None))
            for e in session.scalars(select(Employee).execution_options(**ALLOW))
        )


def on_both(engines, step) -> list:
    results = [step(e) for e in engines]
    assert results[0] == results[1]
    assert everyone(engines[0]) == everyone(engines[1])
    return results[0]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_update_of_a_subclass_by_name(engines, strategy):
    def step(engine):
        with Session(engine) as session:
            loaded = session.scalars(select(Employee).execution_options(**ALLOW)).all()
            statement = (
                update(Engineer).where(Engineer.name.in_(["Ann", "Bob", "Bea"])).values(language="rust")
            )
            result = session.execute(statement, execution_options={"synchronize_session": strategy, **ALLOW})
            seen = sorted((e.id, getattr(e, "language", None)) for e in loaded)
            session.commit()
            return result.rowcount, seen

    count, seen = on_both(engines, step)
    assert count == 2  # Bob is a Manager: the ORM's discriminator keeps him out
    if strategy:
        assert seen == [(1, "rust"), (2, None), (3, "go"), (4, "rust")]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_delete_by_where_removes_the_objects(engines, strategy):
    def step(engine):
        with Session(engine) as session:
            loaded = session.scalars(select(Employee).execution_options(**ALLOW)).all()
            statement = delete(Employee).where(Employee.name.startswith("B"))
            result = session.execute(statement, execution_options={"synchronize_session": strategy, **ALLOW})
            left = sorted(e.id for e in loaded if e in session) if strategy else None
            session.commit()
            return result.rowcount, left

    count, left = on_both(engines, step)
    assert count == 2
    if strategy:
        assert left == [1, 3]


def test_the_unit_of_work_and_a_bulk_update_in_one_transaction(engines):
    def step(engine):
        with Session(engine) as session:
            session.add(Engineer(id=5, name="Dee", language="c"))
            session.flush()
            result = session.execute(
                update(Engineer).where(Engineer.language.is_not(None)).values(name="dev"),
                execution_options=ALLOW,
            )
            names = sorted(e.name for e in session.scalars(select(Engineer).execution_options(**ALLOW)))
            session.commit()
            return result.rowcount, names

    assert on_both(engines, step) == (3, ["Bea", "dev", "dev", "dev"])
