"""A statement's own dynamodb_* execution options win over its connection's. SQLAlchemy merges a
connection's options over a statement's, so without this a connection-wide setting silently
undoes what one statement asked for (DynamoDBExecutionContext.options_in_force)."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from support.sent import bodies_sent


@pytest.fixture
def loaded(engine, items):
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(items.insert(), [{"pk": "p", "sk": f"s{i}", "n": 3 - i} for i in range(3)])
    return items


def sent_by(conn, statement):
    with bodies_sent(conn.connection.dbapi_connection, "ExecuteStatement") as sent:
        rows = conn.execute(statement).all()
    return rows, sent


def test_consistent_read(engine, loaded):
    query = select(loaded.c.sk).where(loaded.c.pk == "p")
    with engine.connect().execution_options(dynamodb_consistent_read=True) as conn:
        _, sent = sent_by(conn, query.execution_options(dynamodb_consistent_read=False))
        assert [body.get("ConsistentRead", False) for body in sent] == [False]
        _, sent = sent_by(conn, query)
        assert [body.get("ConsistentRead", False) for body in sent] == [True]


def test_page_size(engine, loaded):
    query = select(loaded.c.sk).where(loaded.c.pk == "p")
    with engine.connect().execution_options(dynamodb_page_size=100) as conn:
        rows, sent = sent_by(conn, query.execution_options(dynamodb_page_size=1))
        assert [row.sk for row in rows] == ["s0", "s1", "s2"]
        assert [body["Limit"] for body in sent] == [1, 1, 1, 1]  # the fourth finds the end


def test_client_sort(engine, loaded):
    query = select(loaded.c.sk).where(loaded.c.pk == "p").order_by(loaded.c.n)
    with engine.connect().execution_options(dynamodb_client_sort=1) as conn:
        rows, _ = sent_by(conn, query.execution_options(dynamodb_client_sort=10))
        assert [row.sk for row in rows] == ["s2", "s1", "s0"]
        with pytest.raises(OperationalError, match="more than dynamodb_client_sort=1 allows"):
            conn.execute(query).all()
