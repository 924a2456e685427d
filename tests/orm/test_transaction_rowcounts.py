"""UPDATE and DELETE statements in a transaction report SQL's rowcount at once: the item is read
consistently and tested against the statement's WHERE; one that matches nothing writes nothing
and the rest of the transaction commits. A matched write still carries its conditions, so a
concurrent change before the commit is a StaleDataError and nothing is written."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import bindparam, create_engine, delete, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError
from support.sent import bodies_sent, requests_sent
from support.staff import Employee, Manager, staff_table


@pytest.fixture
def staff(engine):
    with staff_table(engine):
        yield


@pytest.fixture
def requests(engine):
    """The statements DynamoDB receives, each with whether it read consistently: call it."""
    with engine.connect() as conn:
        connection = conn.connection.dbapi_connection
    with bodies_sent(connection) as sent:
        yield lambda: [
            (statement["Statement"], bool(params.get("ConsistentRead")))
            for params in sent
            for statement in params.get("TransactStatements", [params])
        ]


def names(engine) -> dict[int, str]:
    with Session(engine) as session:
        return {
            e.id: e.name for e in session.scalars(select(Employee).execution_options(dynamodb_scan="allow"))
        }


def test_an_update_of_another_kind_matches_nothing_and_the_rest_commits(engine, staff):
    with Session(engine) as session:
        result = session.execute(update(Manager).where(Manager.id == 1).values(name="x"))
        assert result.rowcount == 0  # item 1 is an Engineer
        session.add(Manager(id=3, name="Cid"))
        session.commit()
    assert names(engine) == {1: "Ann", 2: "Bob", 3: "Cid"}


def test_updates_and_deletes_count_at_execute(engine, staff):
    with Session(engine) as session:
        assert session.execute(update(Employee).where(Employee.id == 9).values(name="x")).rowcount == 0
        assert session.execute(update(Manager).where(Manager.id == 2).values(name="Bo")).rowcount == 1
        assert session.execute(delete(Employee).where(Employee.id == 1)).rowcount == 1
        assert session.execute(delete(Employee).where(Employee.id == 9)).rowcount == 0
        filtered = delete(Employee).where(Employee.id == 2, Employee.name == "nobody")
        assert session.execute(filtered).rowcount == 0
        session.commit()
    assert names(engine) == {2: "Bo"}


def executemany_in_a_transaction(engine) -> tuple[int, int, dict[int, str]]:
    """An executemany UPDATE and DELETE in one transaction, some of their rows matching nothing:
    their rowcounts and the names stored afterwards. The DELETE tests a name the UPDATE wrote."""
    table = Employee.__table__
    with staff_table(engine):
        with engine.begin() as conn:
            renamed = conn.execute(
                update(table).where(table.c.id == bindparam("key")).values(name=bindparam("new")),
                [{"key": 1, "new": "A"}, {"key": 9, "new": "X"}],
            ).rowcount
            deleted = conn.execute(
                delete(table).where(table.c.id == bindparam("key"), table.c.name == bindparam("was")),
                [{"key": 2, "was": "Bob"}, {"key": 1, "was": "Ann"}, {"key": 7, "was": "Ann"}],
            ).rowcount
        return renamed, deleted, names(engine)


def test_an_executemany_counts_its_matching_rows_and_the_rest_commits(engine):
    assert executemany_in_a_transaction(create_engine("sqlite://")) == (1, 1, {1: "A"})
    assert executemany_in_a_transaction(engine) == (1, 1, {1: "A"})


def test_an_executemany_reads_the_items_it_tests_in_one_batch(engine, staff):
    table = Employee.__table__
    with engine.connect() as conn, requests_sent(conn.connection.dbapi_connection) as sent:
        where = table.c.id == bindparam("key")
        conn.execute(update(table).where(where).values(name="x"), [{"key": k} for k in (1, 2, 9)])
        conn.commit()
    assert [operation for operation, _ in sent] == ["BatchGetItem", "ExecuteTransaction"]
    assert len(json.loads(sent[1][1])["TransactStatements"]) == 2  # item 9 matched nothing


def test_each_count_is_one_consistent_read_and_the_commit_one_call(engine, staff, requests):
    with Session(engine) as session:
        session.execute(update(Employee).where(Employee.id == 1).values(name="A"))
        session.execute(delete(Employee).where(Employee.id == 9))
        session.commit()
    table = Employee.__tablename__
    assert requests() == [
        (f'SELECT * FROM "{table}" WHERE "id" = ?', True),
        (f'SELECT * FROM "{table}" WHERE "id" = ?', True),
        (f'UPDATE "{table}" SET "name" = ? WHERE "id" = ?', False),
    ]


def test_a_flush_of_loaded_objects_reads_nothing_more(engine, staff, requests):
    with Session(engine) as session:
        session.get(Employee, 1).name = "A"
        session.commit()
    assert [statement.split(" ", 1)[0] for statement, _ in requests()] == ["SELECT", "UPDATE"]
    assert [consistent for _, consistent in requests()] == [False, False]


def test_a_change_between_execute_and_commit_is_stale_and_writes_nothing(engine, staff, raw):
    table = Employee.__tablename__
    with Session(engine) as session:
        matched = session.execute(
            update(Employee).where(Employee.id == 1, Employee.name == "Ann").values(name="A")
        )
        assert matched.rowcount == 1
        session.add(Manager(id=4, name="Dee"))
        raw.update_item(
            TableName=table,
            Key={"id": {"N": "1"}},
            UpdateExpression="SET #n = :n",
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={":n": {"S": "Other"}},
        )
        with pytest.raises(StaleDataError):
            session.commit()
    assert names(engine) == {1: "Other", 2: "Bob"}


def test_a_delete_of_an_item_deleted_meanwhile_is_stale_and_writes_nothing(engine, staff, raw):
    with Session(engine) as session:
        assert session.execute(delete(Employee).where(Employee.id == 1)).rowcount == 1
        session.add(Manager(id=4, name="Dee"))
        raw.delete_item(TableName=Employee.__tablename__, Key={"id": {"N": "1"}})
        with pytest.raises(StaleDataError):
            session.commit()
    assert names(engine) == {2: "Bob"}


def test_autocommit_counts_zero_for_no_match(engine, staff):
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        assert conn.execute(update(Employee.__table__).where(Employee.id == 9).values(name="x")).rowcount == 0
        assert conn.execute(delete(Employee.__table__).where(Employee.id == 9)).rowcount == 0
        assert conn.execute(delete(Employee.__table__).where(Employee.id == 2)).rowcount == 1
