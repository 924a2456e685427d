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
        # a strict bound reads its own key too: other values may share it (see the next test)
        (lambda P: P.price > 10, '"gsi2sk" >= ?', ["c", "d", "g"]),
        (lambda P: P.price >= Decimal("15.5"), '"gsi2sk" >= ?', ["c", "d", "g"]),
        (lambda P: P.price < 10, '"gsi2sk" <= ?', ["a"]),
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


def test_a_key_agrees_with_its_source_as_the_column_stores_it(engine, raw, catalogue):
    """Numeric(10, 2) rounds 12.345 half up to 12.35 (as PostgreSQL does); the key is rendered
    from that, not from the value before rounding (format() rounds half to even: 12.34)."""
    Product, table = catalogue.Product, catalogue.Item.__tablename__
    with Session(engine) as session:
        session.add(Product(sku="h", name="hook", category="garden", price=Decimal("12.345")))
        session.commit()
    try:
        assert _stored(raw, table, "h")["gsi2sk"] == {"S": "PRICE#0000012.35"}
        with Session(engine) as session:
            stored = session.get(Product, ("PRODUCT#h", "PRODUCT")).price
            assert stored == Decimal("12.35")
            query = select(Product).where(Product.category == "garden", Product.price == stored)
            assert sa_dynamo.explain(session, query).key_condition == '"gsi2pk" = ? AND "gsi2sk" = ?'
            assert [p.sku for p in session.scalars(query)] == ["h"]
            # a float is compared as the decimal it is sent as, and so is its key rendered
            assert [p.sku for p in session.scalars(query.where(Product.price == 12.35))] == ["h"]
    finally:
        with Session(engine) as session:
            session.delete(session.get(Product, ("PRODUCT#h", "PRODUCT")))
            session.commit()


@pytest.mark.parametrize(
    ("condition", "skus"),
    [
        # 9.995 formats as 10.00, the key of b's 10.00 too: > must read that key and filter
        (lambda P: P.price > Decimal("9.995"), ["b", "c", "d", "g"]),
        (lambda P: P.price < Decimal("10.004"), ["a", "b"]),  # 10.004 formats as 10.00
        (lambda P: P.price.between(Decimal("9.995"), Decimal("15.504")), ["b", "c"]),
        (lambda P: P.price == Decimal("9.995"), []),
    ],
)
def test_a_bound_finer_than_the_format_loses_no_row(engine, catalogue, condition, skus):
    Product = catalogue.Product
    query = select(Product).where(Product.category == "tools", condition(Product))
    with Session(engine) as session:
        assert sa_dynamo.explain(session, query).index == "gsi2"
        assert sorted(p.sku for p in session.scalars(query)) == skus


def test_an_index_whose_sort_key_a_match_may_lack_is_not_read(engine, catalogue):
    """gsi2's sort key is built from price: a product without one (f) is not in gsi2, so a query
    by category alone reads elsewhere (here the table, as the scan warning says); with a
    condition on price that no NULL passes, gsi2 holds every match and is read."""
    Product = catalogue.Product
    by_category = select(Product).where(Product.category == "tools")
    with Session(engine) as session:
        plan = sa_dynamo.explain(session, by_category.execution_options(dynamodb_scan="allow"))
        assert plan.index is None
        rows = session.scalars(by_category.execution_options(dynamodb_scan="allow"))
        assert sorted(p.sku for p in rows) == ["a", "b", "c", "d", "f", "g"]
        priced = by_category.where(Product.price.is_not(None))
        assert sa_dynamo.explain(session, priced).key_condition == '"gsi2pk" = ? AND begins_with("gsi2sk", ?)'
        assert sorted(p.sku for p in session.scalars(priced)) == ["a", "b", "c", "d", "g"]


def test_a_computed_key_is_computed_again_only_when_a_source_changes(engine, raw):
    """A key that reads the clock (here: a counter of calls) moves only when its declared
    source changes, not on an update of anything else."""
    calls = []

    def listed_at(product) -> str:
        calls.append(product.status)
        return f"{product.status}#{len(calls)}"

    class Base(DeclarativeBase):
        pass

    class Listing(Base):
        __tablename__ = f"clock_{uuid.uuid4().hex[:8]}"
        __table_args__ = (Index("by_status", "gsi1pk", dynamodb_projection="ALL"),)
        __key_templates__ = {"pk": "LISTING#{sku}", "gsi1pk": sa_dynamo.computed_key(listed_at, "status")}
        pk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        sku: Mapped[str]
        status: Mapped[str | None]
        name: Mapped[str | None]

    Base.metadata.create_all(engine)
    try:
        key = {"pk": {"S": "LISTING#a"}}
        with Session(engine) as session:
            session.add(Listing(sku="a", status="NEW", name="anvil"))
            session.commit()
            session.get(Listing, "LISTING#a").name = "big anvil"
            session.commit()
            assert raw.get_item(TableName=Listing.__tablename__, Key=key)["Item"]["gsi1pk"] == {"S": "NEW#1"}
            session.get(Listing, "LISTING#a").status = "SOLD"
            session.commit()
        assert raw.get_item(TableName=Listing.__tablename__, Key=key)["Item"]["gsi1pk"] == {"S": "SOLD#2"}
        assert calls == ["NEW", "SOLD"]
    finally:
        Base.metadata.drop_all(engine)
        Base.registry.dispose()
