"""What sa_dynamo registers with SQLAlchemy acts on DynamoDB sessions only: a SQLite session in
the same process, with the same models, sends exactly what SQLAlchemy alone would send and gets
SQLite's rows, while the DynamoDB session beside it gets its key conditions, type filters,
templated keys and selectin loads by Query."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, event, func, select
from sqlalchemy.orm import Session, selectinload

import sa_dynamo

from .conftest import make_store


@pytest.fixture(scope="module")
def models():
    models = make_store(f"scope_{uuid.uuid4().hex[:8]}")
    yield models
    models.Base.registry.dispose()


def _rows(models, keys: bool) -> list:
    """Ann and her orders; ``keys``: with the keys a SQLite user sets (templates are DynamoDB's)."""

    def key(pk: str, sk: str) -> dict:
        return {"pk": pk, "sk": sk} if keys else {}

    return [
        models.Customer(customer_id="42", name="Ann", **key("CUSTOMER#42", "METADATA")),
        models.Order(customer_id="42", order_id="1", status="PAID", total=3, **key("CUSTOMER#42", "ORDER#1")),
        models.Order(customer_id="42", order_id="2", status="LOST", total=5, **key("CUSTOMER#42", "ORDER#2")),
    ]


def _plain(statement, engine) -> str:
    """What SQLAlchemy alone sends for an ORM statement."""
    return " ".join(str(statement.compile(engine, compile_kwargs={"render_postcompile": True})).split())


def test_a_sqlite_session_beside_a_dynamodb_one_is_untouched(engine, models):
    Base, Customer, Order, Item = models.Base, models.Customer, models.Order, models.Item
    sqlite = create_engine("sqlite://")
    sent: list[str] = []
    event.listen(sqlite, "before_cursor_execute", lambda c, cur, statement, *a: sent.append(statement))
    for bind in (sqlite, engine):
        Base.metadata.create_all(bind)
    try:
        with Session(engine) as dynamodb_session, Session(sqlite) as sqlite_session:
            dynamodb_session.add_all(_rows(models, keys=False))
            dynamodb_session.commit()
            sqlite_session.add_all(_rows(models, keys=True))
            sqlite_session.commit()
            # templates fill the keys on DynamoDB only
            assert dynamodb_session.get(Order, ("CUSTOMER#42", "ORDER#1")).gsi1pk == "STATUS#PAID"
            assert sqlite_session.get(Order, ("CUSTOMER#42", "ORDER#1")).gsi1pk is None

            queries = [
                select(Order).where(Order.customer_id == "42", Order.status == "PAID"),
                select(Item).where(Item.pk == "CUSTOMER#42"),
                select(Customer).options(selectinload(Customer.orders)),
            ]
            for query in queries:
                sent.clear()
                dynamodb_rows = dynamodb_session.scalars(query.execution_options(dynamodb_scan="allow")).all()
                sqlite_rows = sqlite_session.scalars(query).all()
                assert _plain(query, sqlite) == " ".join(sent[0].split())
                assert sorted(r.sk for r in sqlite_rows) == sorted(r.sk for r in dynamodb_rows)
            # the DynamoDB session's statements were rewritten: a key condition, a type filter
            assert (
                sa_dynamo.explain(dynamodb_session, queries[0]).key_condition
                == '"pk" = ? AND begins_with("sk", ?)'
            )
            assert '"$type" IN' in sa_dynamo.explain(dynamodb_session, queries[1]).filter

            sent.clear()
            count = sqlite_session.query(Order).filter(Order.customer_id == "42").count()
            assert count == 2 and "FROM (SELECT" in sent[0]  # SQLAlchemy's own subquery
            assert dynamodb_session.query(Order).filter(Order.customer_id == "42").count() == 2
            assert sqlite_session.scalar(select(func.count()).select_from(Item)) == 3
    finally:
        Base.metadata.drop_all(engine)
        sqlite.dispose()
