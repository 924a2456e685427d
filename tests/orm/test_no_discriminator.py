"""A shared table without a discriminator (``__discriminator__ = None``, EF Core's
``HasNoDiscriminator()``): no type attribute written, no type filter injected, key schema still
checked, and kinds kept apart by their key patterns alone."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Integer, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, configure_mappers, mapped_column

import sa_dynamo
from sa_dynamo.exc import KeySchemaMismatchError


def _root(name: str, table: str, opted_out: bool, sk_type=String):
    class Base(DeclarativeBase):
        pass

    namespace = {
        "__tablename__": table,
        "pk": mapped_column(String, primary_key=True),
        "sk": mapped_column(sk_type, primary_key=True),
    }
    if opted_out:
        namespace["__discriminator__"] = None
    return Base, type(name, (Base,), namespace)


def _configure(*roots):
    try:
        configure_mappers()
    finally:
        for base, _class in roots:
            base.registry.dispose()


def test_unrelated_roots_that_opt_out_share_a_table():
    table = f"plain_{uuid.uuid4().hex[:8]}"
    _configure(_root("Left", table, True), _root("Right", table, True))


def test_opting_out_on_one_side_only_is_refused():
    table = f"plain_{uuid.uuid4().hex[:8]}"
    with pytest.raises(KeySchemaMismatchError, match="__discriminator__ = None on both"):
        _configure(_root("Left", table, True), _root("Right", table, False))


def test_the_key_schema_is_still_checked():
    table = f"plain_{uuid.uuid4().hex[:8]}"
    with pytest.raises(KeySchemaMismatchError, match="sort key 'sk' \\(S\\) versus sort key 'sk' \\(N\\)"):
        _configure(_root("Left", table, True), _root("Right", table, True, sk_type=Integer))


def _hierarchy(table: str, opted_out: bool):
    """Entry with two subclasses on its table, and no polymorphic_on."""
    Base, Entry = _root("Entry", table, opted_out)
    # held until configured: a registry holds its classes weakly
    Entry.kinds = [
        type("Profile", (Entry,), {}),
        type("Purchase", (Entry,), {"order_id": mapped_column(String)}),
    ]
    return Base, Entry


def test_one_hierarchy_without_a_discriminator_is_refused_unless_it_opts_out():
    """Nothing on an item would say which subclass loads it: select(Purchase) would load the
    profiles as purchases (as it does on SQLite)."""
    table = f"plain_{uuid.uuid4().hex[:8]}"
    with pytest.raises(
        KeySchemaMismatchError,
        match=r"Entry and Profile \(one hierarchy, root Entry\) .* __discriminator__ = None on Entry$",
    ):
        _configure(_hierarchy(table, opted_out=False))
    _configure(_hierarchy(f"plain_{uuid.uuid4().hex[:8]}", opted_out=True))


@pytest.fixture(scope="module")
def kinds(engine):
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = f"nodisc_{uuid.uuid4().hex[:8]}"
        __discriminator__ = None
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        customer_id: Mapped[str | None]

    class Customer(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "PROFILE"}
        name: Mapped[str | None]

    class Order(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}"}
        order_id: Mapped[str | None]

    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Customer(customer_id="1", name="Ann"), Order(customer_id="1", order_id="9")])
        session.commit()
    yield Item, Customer, Order
    Base.metadata.drop_all(engine)
    Base.registry.dispose()


def test_no_type_attribute_is_written(raw, kinds):
    Item, _customer, _order = kinds
    stored = raw.get_item(
        TableName=Item.__tablename__, Key={"pk": {"S": "CUSTOMER#1"}, "sk": {"S": "ORDER#9"}}
    )["Item"]
    assert sorted(stored) == ["customer_id", "order_id", "pk", "sk"]


def test_queries_get_no_type_filter_and_key_patterns_keep_kinds_apart(engine, kinds, sent):
    Item, _customer, Order = kinds
    with Session(engine) as session:
        orders = session.scalars(select(Order).where(Order.customer_id == "1")).all()
        assert [(type(o).__name__, o.order_id) for o in orders] == [("Order", "9")]
    assert sent == [
        f'SELECT "pk", "sk", "customer_id", "order_id" FROM "{Item.__tablename__}" '
        'WHERE "pk" = ? AND begins_with("sk", ?) AND ("customer_id" = ?)'
    ]
