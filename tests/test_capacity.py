"""``sa_dynamo.capacity()``: the figures of every statement and commit run on a Connection or
Session while the block runs, against what the driver's transport saw DynamoDB answer."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Table, insert, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo
from sa_dynamo.dbapi.capacity import DATA_PLANE

CONTROL_PLANE = frozenset({"DescribeTable", "ListTables", "CreateTable", "DeleteTable", "DescribeTimeToLive"})


class Answers:
    """What one DBAPI connection's transport sent and was answered (its observers, no mocks)."""

    def __init__(self, dbapi_connection: Any):
        self.requests = 0
        self.write_units = self.read_units = 0.0
        self.not_asking: list[str] = []  # requests that did not ask for their consumed capacity
        self.transport = dbapi_connection.transport
        self.transport.observers.append(self.record)

    def record(self, operation: str, body: dict[str, Any], answer: Any) -> None:
        if body.get("ReturnConsumedCapacity") != "INDEXES" and operation not in CONTROL_PLANE:
            self.not_asking.append(operation)
        if operation in DATA_PLANE:
            self.requests += 1
            # On Local: BatchWriteItem's, UpdateItem's and BatchGetItem's, no PartiQL request's
            found = answer.get("ConsumedCapacity") or []
            units = sum(entry["CapacityUnits"] for entry in ([found] if isinstance(found, dict) else found))
            if operation == "BatchGetItem":
                self.read_units += units
            else:
                self.write_units += units

    def stop(self) -> None:
        self.transport.observers.remove(self.record)


@pytest.fixture
def autocommit(engine: Any) -> Iterator[Any]:
    with engine.connect() as connection:
        yield connection.execution_options(isolation_level="AUTOCOMMIT")


rows = st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True)
steps = st.lists(st.tuples(st.sampled_from(["upsert", "insert", "select"]), rows), min_size=1, max_size=5)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=steps)
def test_the_total_of_a_connection_is_the_sum_of_what_its_statements_were_answered(
    autocommit: Any, items: Table, workload: list[tuple[str, list[int]]]
) -> None:
    autocommit.execute(
        items.delete().where(items.c.pk == "p", items.c.sk.in_([f"{n:02}" for n in range(31)]))
    )
    answers = Answers(autocommit.connection.dbapi_connection)
    try:
        with sa_dynamo.capacity(autocommit) as used:
            for kind, numbers in workload:
                values = [{"pk": "p", "sk": f"{n:02}", "n": n} for n in numbers]
                if kind == "upsert":
                    autocommit.execute(sa_dynamo.upsert(items), values)
                elif kind == "insert":  # the keys deleted first, so that the INSERT is new
                    keys = [v["sk"] for v in values]
                    autocommit.execute(items.delete().where(items.c.pk == "p", items.c.sk.in_(keys)))
                    autocommit.execute(insert(items), values)
                else:
                    autocommit.execute(
                        select(items.c.sk).where(items.c.pk == "p", items.c.n.in_(numbers))
                    ).all()
    finally:
        answers.stop()
    assert used.total.requests == answers.requests
    assert used.write_units == answers.write_units
    # BatchWriteItem (upsert) of a small item: 1 WCU; Local reports nothing for PartiQL writes
    assert used.write_units == sum(len(numbers) for kind, numbers in workload if kind == "upsert")
    assert used.read_units == 0.0  # DynamoDB Local reports no capacity for PartiQL reads


def test_a_session_s_total_holds_its_commits(engine: Any, items: Table) -> None:
    with Session(engine) as session:
        with sa_dynamo.capacity(session) as used:
            session.execute(insert(items), [{"pk": "s", "sk": str(n), "n": n} for n in range(3)])
            answers = Answers(session.connection().connection.dbapi_connection)
            session.commit()
            assert session.execute(select(items.c.sk).where(items.c.pk == "s")).scalars().all() == [
                "0",
                "1",
                "2",
            ]
        answers.stop()
    kinds = [record.operation for record in used.records]
    assert kinds == ["", "ExecuteTransaction", "ExecuteStatement"]  # the INSERT is held until the commit
    assert (used.statements, used.total.requests, used.total.rows, used.total.items) == (2, 2, 3, 3)
    assert used.total.requests == answers.requests


class Base(DeclarativeBase):
    pass


class Ticket(Base):
    """Numbered by a counter (one UpdateItem per block of ids), a unique code kept by guards."""

    __tablename__ = f"cost_ticket_{uuid.uuid4().hex[:8]}"
    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(unique=True)


@pytest.fixture
def tickets(engine: Any) -> Iterator[Any]:
    Base.metadata.create_all(engine)
    yield engine
    Base.metadata.drop_all(engine)


def test_an_autoincrement_block_and_a_moved_guard_s_read_are_counted(tickets: Any) -> None:
    """The counter's UpdateItem (reported by DynamoDB Local: 1 WCU) is counted with the INSERT
    it numbers, and the reads of the guard items that check a statement's unique values (as it
    is held) with that statement; every request asks for its capacity."""
    with Session(tickets) as session:
        with sa_dynamo.capacity(session) as used:
            answers = Answers(session.connection().connection.dbapi_connection)
            session.add(Ticket(code="a"))
            session.commit()
            session.get(Ticket, 1).code = "b"
            session.commit()
        answers.stop()
    # UpdateItem and the guard's read, commit, GetItem's read, the item's and guards' reads, commit
    assert answers.requests == 7
    assert used.total.requests == answers.requests
    assert (used.write_units, used.read_units) == (answers.write_units, answers.read_units) == (1.0, 1.0)
    assert [(record.operation, record.requests) for record in used.records if record.requests] == [
        ("BatchGetItem", 2),  # the INSERT, held for the commit: the counter block and "a"'s guard
        ("ExecuteTransaction", 1),
        ("ExecuteStatement", 1),
        ("BatchGetItem", 2),  # the UPDATE, held: the item as committed, then "b"'s guard
        ("ExecuteTransaction", 1),
    ]
    assert answers.not_asking == []
