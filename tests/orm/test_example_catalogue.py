"""examples/catalogue.py (after DynamoMapper's guide): every access pattern is a GetItem or a
Query, never a Scan, and returns exactly the expected objects."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from support.examples import loaded_example

import sa_dynamo


@pytest.fixture(scope="module")
def catalogue(engine):
    yield from loaded_example("catalogue", engine)


@pytest.fixture
def session(engine):
    with Session(engine.execution_options(dynamodb_scan="error")) as session:
        yield session


def _plan(session, query) -> tuple[str, str | None]:
    plan = sa_dynamo.explain(session, query)
    return plan.operation, plan.index


def test_a_product_by_sku_is_a_get_item_and_its_reviews_one_query(catalogue, session, sent):
    anvil = catalogue.product(session, "a1")
    assert (anvil.name, [(r.review_id, r.stars) for r in anvil.reviews]) == ("anvil", [("1", 5), ("2", 4)])
    table = catalogue.CatalogueItem.__tablename__
    assert sent[0].endswith(f'FROM "{table}" WHERE "pk" = ? AND "sk" = ? AND ("$type" IN [?])')
    assert sent[1].endswith(
        f'FROM "{table}" WHERE "pk" = ? AND begins_with("sk", ?) AND ("$type" IN [?]) ORDER BY "sk"'
    )


def test_active_products_by_name(catalogue, session):
    query = catalogue.active_products()
    assert _plan(session, query) == ("Query", "gsi1")
    assert [p.sku for p in session.scalars(query)] == ["a1", "b2", "c3"]


def test_archived_products_by_date(catalogue, session):
    query = catalogue.archived_between(datetime.datetime(2024, 1, 1), datetime.datetime(2024, 12, 31))
    assert _plan(session, query) == ("Query", "gsi1")
    assert [p.sku for p in session.scalars(query)] == ["d4"]


def test_a_category_in_a_price_range(catalogue, session):
    query = catalogue.in_price_range("tools", Decimal(10), Decimal(20))
    plan = sa_dynamo.explain(session, query)
    assert (plan.operation, plan.index, plan.key_condition) == (
        "Query",
        "gsi2",
        '"gsi2pk" = ? AND "gsi2sk" BETWEEN ? AND ?',
    )
    assert sorted(p.sku for p in session.scalars(query)) == ["c3", "d4"]


def test_unmapped_attributes_round_trip_through_the_bag(catalogue, session, raw):
    bolt = catalogue.product(session, "b2")
    assert bolt.extra == {"pack": 100}
    bolt.extra["pack"] = 200
    session.commit()
    stored = raw.get_item(
        TableName=catalogue.CatalogueItem.__tablename__,
        Key={"pk": {"S": "PRODUCT#b2"}, "sk": {"S": "PRODUCT"}},
    )["Item"]
    assert stored["pack"] == {"N": "200"} and "extra" not in stored


def test_a_base_class_query_fills_a_bag_as_loading_its_class_does(catalogue, engine, raw):
    """Another service gives the clamp a `stars` attribute, which only the sibling Review maps:
    the clamp's bag holds it whether the clamp is loaded as a Product or by a query for every
    kind (which also selects the reviews' columns), and in a transaction that wrote it too."""
    table = catalogue.CatalogueItem.__tablename__
    raw.update_item(
        TableName=table,
        Key={"pk": {"S": "PRODUCT#c3"}, "sk": {"S": "PRODUCT"}},
        UpdateExpression="SET stars = :s",
        ExpressionAttributeValues={":s": {"N": "3"}},
    )
    everything = select(catalogue.CatalogueItem).where(catalogue.CatalogueItem.pk == "PRODUCT#c3")
    with Session(engine) as session:
        alone = catalogue.product(session, "c3").extra
    with Session(engine) as session:
        (clamp,) = session.scalars(everything)
        assert clamp.extra == alone == {"stars": 3}
        clamp.extra["colour"] = "red"
        session.flush()  # buffered in the transaction: the next read lays it over DynamoDB's
        session.expire_all()
        (clamp,) = session.scalars(everything)
        assert clamp.extra == {"stars": 3, "colour": "red"}
        session.rollback()
