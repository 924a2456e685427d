"""Computed (conditional) keys and order-keeping templates: keys recomputed when a source changes,
None keeps an item out of a sparse index, and a range on the source of a fixed-width sort key
is a key condition on the index."""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal
from types import SimpleNamespace

import pytest
from sqlalchemy import Index, Numeric, select
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo


def _status(product) -> str:
    return "ARCHIVED_PRODUCT" if product.archived_at is not None else "ACTIVE_PRODUCT"


def _status_order(product) -> str | None:
    if product.archived_at is not None:
        return product.archived_at.isoformat()
    return product.name


@pytest.fixture(scope="module")
def catalogue(engine):
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = f"cond_{uuid.uuid4().hex[:8]}"
        __table_args__ = (
            Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
            Index("gsi2", "gsi2pk", "gsi2sk", dynamodb_projection="ALL"),
            Index("gsi3", "gsi3pk", "gsi3sk", dynamodb_projection="ALL"),
        )
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        gsi1sk: Mapped[str | None]
        gsi2pk: Mapped[str | None]
        gsi2sk: Mapped[str | None]
        gsi3pk: Mapped[str | None]
        gsi3sk: Mapped[str | None]

    class Product(Item):
        __key_templates__ = {
            "pk": "PRODUCT#{sku}",
            "sk": "PRODUCT",
            "gsi1pk": sa_dynamo.computed_key(_status, "archived_at"),
            "gsi1sk": sa_dynamo.computed_key(_status_order, "archived_at", "name"),
            "gsi2pk": "CATEGORY#{category}",
            "gsi2sk": "PRICE#{price:010.2f}",
            "gsi3pk": "PRODUCTS",
            "gsi3sk": "{weight}",  # not order-keeping: numbers compare as text
        }
        sku: Mapped[str | None]
        name: Mapped[str | None]
        category: Mapped[str | None]
        price: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
        weight: Mapped[int | None]
        archived_at: Mapped[datetime.datetime | None]

    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all(
            [
                Product(sku="a", name="anvil", category="tools", price=Decimal("9.99"), weight=9),
                Product(sku="b", name="bolt", category="tools", price=Decimal("10.00")),
                Product(sku="c", name="clamp", category="tools", price=Decimal("15.50"), weight=10),
                Product(sku="d", name="drill", category="tools", price=Decimal("20.00")),
                Product(sku="e", name="easel", category="art", price=Decimal("12.00")),
                Product(sku="f", name="file", category="tools"),  # no price: not in gsi2
                Product(
                    sku="g",
                    name="gauge",
                    category="tools",
                    price=Decimal("150.00"),
                    archived_at=datetime.datetime(2024, 5, 1, 12, 0),
                ),
            ]
        )
        session.commit()
    yield SimpleNamespace(Base=Base, Item=Item, Product=Product)
    Base.metadata.drop_all(engine)
    Base.registry.dispose()


def _stored(raw, table: str, sku: str) -> dict:
    return raw.get_item(TableName=table, Key={"pk": {"S": f"PRODUCT#{sku}"}, "sk": {"S": "PRODUCT"}})["Item"]


def test_a_computed_key_follows_the_objects_state(engine, raw, catalogue):
    Product, table = catalogue.Product, catalogue.Item.__tablename__
    assert _stored(raw, table, "a")["gsi1pk"] == {"S": "ACTIVE_PRODUCT"}
    assert _stored(raw, table, "a")["gsi1sk"] == {"S": "anvil"}
    assert _stored(raw, table, "g")["gsi1sk"] == {"S": "2024-05-01T12:00:00"}
    with Session(engine) as session:
        product = session.get(Product, ("PRODUCT#b", "PRODUCT"))
        product.archived_at = datetime.datetime(2024, 6, 2, 8, 30)
        session.commit()
    stored = _stored(raw, table, "b")
    assert (stored["gsi1pk"], stored["gsi1sk"]) == ({"S": "ARCHIVED_PRODUCT"}, {"S": "2024-06-02T08:30:00"})
    with Session(engine) as session:
        session.get(Product, ("PRODUCT#b", "PRODUCT")).archived_at = None
        session.commit()
    stored = _stored(raw, table, "b")
    assert (stored["gsi1pk"], stored["gsi1sk"]) == ({"S": "ACTIVE_PRODUCT"}, {"S": "bolt"})


def test_a_fixed_width_template_writes_sortable_keys_and_none_leaves_the_index(raw, catalogue):
    table = catalogue.Item.__tablename__
    assert _stored(raw, table, "a")["gsi2sk"] == {"S": "PRICE#0000009.99"}
    assert "gsi2sk" not in _stored(raw, table, "f") and "gsi2pk" in _stored(raw, table, "f")


def test_active_products_by_name_are_one_query_on_the_conditional_index(engine, catalogue, sent):
    Product = catalogue.Product
    query = select(Product).where(Product.gsi1pk == "ACTIVE_PRODUCT").order_by(Product.gsi1sk)
    with Session(engine) as session:
        # the computed sort key may be None for all the planner knows: gsi1 could miss items
        with pytest.raises(CompileError, match=r"ORDER BY on a scan \(index 'gsi1' leaves out"):
            sa_dynamo.explain(session, query)
        query = query.options(sa_dynamo.use_index("gsi1"))
        assert sa_dynamo.explain(session, query).source == f"{catalogue.Item.__tablename__}.gsi1"
        assert [p.sku for p in session.scalars(query)] == ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize(
    ("condition", "key", "skus"),
    [
        (lambda P: P.price.between(10, 20), '"gsi2sk" BETWEEN ? AND ?', ["b", "c", "d"]),
        (lambda P: P.price > 10, '"gsi2sk" > ?', ["c", "d", "g"]),
        (lambda P: P.price >= Decimal("15.5"), '"gsi2sk" >= ?', ["c", "d", "g"]),
        (lambda P: P.price < 10, '"gsi2sk" < ?', ["a"]),
        (lambda P: P.price <= 10, '"gsi2sk" <= ?', ["a", "b"]),
    ],
)
def test_a_range_on_the_source_is_a_key_condition_on_the_formatted_sort_key(
    engine, catalogue, condition, key, skus
):
    Product = catalogue.Product
    query = select(Product).where(Product.category == "tools", condition(Product))
    with Session(engine) as session:
        plan = sa_dynamo.explain(session, query)
        assert (plan.operation, plan.key_condition) == ("Query", f'"gsi2pk" = ? AND {key}')
        assert sorted(p.sku for p in session.scalars(query)) == skus


def test_a_range_on_a_template_that_does_not_keep_order_is_refused_with_advice(engine, catalogue):
    Product = catalogue.Product
    with Session(engine) as session, pytest.raises(CompileError, match=r"fixed width \(\{weight:010.2f\}"):
        session.scalars(select(Product).where(Product.weight > 9)).all()


def test_a_constant_partition_is_not_used_when_the_index_may_lack_items(engine, catalogue):
    # gsi3 holds only products with a weight; a query by name must see the others too.
    Product = catalogue.Product
    query = select(Product).where(Product.name == "bolt")
    with Session(engine) as session:
        plan = sa_dynamo.explain(session, query.execution_options(dynamodb_scan="allow"))
        assert plan.operation == "Scan"
        rows = session.scalars(query.execution_options(dynamodb_scan="allow")).all()
        assert [p.sku for p in rows] == ["b"]
