"""``sa_dynamo.capacity()``: the figures of every statement and commit run on a Connection or
Session while the block runs, against what the driver's transport saw DynamoDB answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Table, insert, select
from sqlalchemy.orm import Session

import sa_dynamo
from sa_dynamo.dbapi.capacity import DATA_PLANE


class Answers:
    """What one DBAPI connection's transport sent and was answered (its observers, no mocks)."""

    def __init__(self, dbapi_connection: Any):
        self.requests = 0
        self.write_units = 0.0
        self.transport = dbapi_connection.transport
        self.transport.observers.append(self.record)

    def record(self, operation: str, body: dict[str, Any], answer: Any) -> None:
        if operation in DATA_PLANE:
            self.requests += 1
            for entry in answer.get("ConsumedCapacity") or []:  # only BatchWriteItem's, on Local
                self.write_units += entry["CapacityUnits"]

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
