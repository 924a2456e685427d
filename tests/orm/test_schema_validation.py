"""Classes sharing one DynamoDB table must agree on its key schema and discriminator; key
templates must name mapped attributes. Both are checked when mappers configure."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Integer, LargeBinary, String
from sqlalchemy.orm import DeclarativeBase, Mapped, configure_mappers, mapped_column

import sa_dynamo
from sa_dynamo.exc import KeySchemaMismatchError, KeyTemplateError


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def root(
    name: str,
    table: str,
    sk_name: str = "sk",
    sk_type=String,
    discriminator: str = "$type",
    identity: str = "A",
):
    """A root class ``name`` in its own declarative base (its own MetaData) mapped onto ``table``."""

    class Base(DeclarativeBase):
        pass

    namespace = {
        "__tablename__": table,
        "pk": mapped_column(String, primary_key=True),
        sk_name: mapped_column(sk_type, primary_key=True),
        "kind": mapped_column(discriminator, String),
        "__mapper_args__": {"polymorphic_on": "kind", "polymorphic_identity": identity},
    }
    return Base, type(name, (Base,), namespace)


def two_roots(**second):
    table = unique("shared")
    return root("Left", table), root("Right", table, **{"identity": "B", **second})


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"sk_name": "sort"}, "sort key 'sk' (S) versus sort key 'sort' (S)"),
        ({"sk_type": Integer}, "sort key 'sk' (S) versus sort key 'sk' (N)"),
        ({"sk_type": LargeBinary}, "sort key 'sk' (S) versus sort key 'sk' (B)"),
        (
            {"discriminator": "entityType"},
            "discriminator attribute '$type' versus discriminator attribute 'entityType'",
        ),
        ({"identity": "A"}, "both use discriminator value 'A'"),
    ],
)
def test_mismatch_across_separate_metadata_names_both_classes(second, message):
    # Hold the classes: SQLAlchemy's registries refer to them weakly.
    (first_base, _left), (second_base, _right) = two_roots(**second)
    try:
        with pytest.raises(KeySchemaMismatchError) as raised:
            configure_mappers()
        assert message in str(raised.value)
        assert "Left" in str(raised.value) and "Right" in str(raised.value)
    finally:
        first_base.registry.dispose()
        second_base.registry.dispose()


def test_agreeing_classes_configure():
    (first_base, _left), (second_base, _right) = two_roots()
    try:
        configure_mappers()
    finally:
        first_base.registry.dispose()
        second_base.registry.dispose()


def test_a_disposed_registry_leaves_its_table_to_the_next_mapping():
    """Mapping a model again after registry.dispose() (a reloaded module, a test per driver)
    reuses its discriminator values on the same table; the disposed classes are gone from the
    group, even while something still holds them."""
    table = unique("remapped")
    first_base, first = root("Left", table)
    configure_mappers()
    first_base.registry.dispose()
    second_base, _second = root("Left", table)
    try:
        configure_mappers()
    finally:
        second_base.registry.dispose()
    del first  # held until after the second configure


def test_unrelated_roots_without_a_discriminator_cannot_share_a_table():
    table = unique("plain")
    bases, classes = [], []
    for name in ("Left", "Right"):

        class Base(DeclarativeBase):
            pass

        classes.append(
            type(name, (Base,), {"__tablename__": table, "pk": mapped_column(String, primary_key=True)})
        )
        bases.append(Base)
    try:
        with pytest.raises(KeySchemaMismatchError, match="without a discriminator"):
            configure_mappers()
    finally:
        for base in bases:
            base.registry.dispose()


@pytest.mark.parametrize("attribute", ["$type", "entityType", "type"])
def test_any_discriminator_attribute_name_works(attribute, engine, raw):
    class Base(DeclarativeBase):
        pass

    class Person(Base):
        __tablename__ = unique("people")
        pk: Mapped[str] = mapped_column(primary_key=True)
        kind: Mapped[str] = mapped_column(attribute)
        __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "person"}

    class Employee(Person):
        __mapper_args__ = {"polymorphic_identity": "employee"}

    class Manager(Employee):
        __mapper_args__ = {"polymorphic_identity": "manager"}

    from sqlalchemy import select
    from sqlalchemy.orm import Session

    Base.metadata.create_all(engine)
    try:
        with Session(engine) as session:
            session.add_all([Person(pk="p"), Employee(pk="e"), Manager(pk="m")])
            session.commit()
        stored = raw.get_item(TableName=Person.__tablename__, Key={"pk": {"S": "m"}})["Item"]
        assert stored[attribute] == {"S": "manager"}
        with Session(engine) as session:
            employees = session.scalars(select(Employee).where(Employee.pk.in_(["p", "e", "m"]))).all()
            assert sorted((type(e).__name__, e.pk) for e in employees) == [
                ("Employee", "e"),
                ("Manager", "m"),
            ]
    finally:
        Base.metadata.drop_all(engine)
        Base.registry.dispose()


def test_single_table_mixin_defaults():
    class Base(DeclarativeBase):
        pass

    class Person(sa_dynamo.SingleTable, Base):
        __tablename__ = unique("people")
        pk: Mapped[str] = mapped_column(primary_key=True)

    class Employee(Person):
        pass

    try:
        configure_mappers()
        assert Person.__table__.c["$type"].name == "$type"
        assert Person.__mapper__.polymorphic_identity == "Person"
        assert Employee.__mapper__.polymorphic_identity == "Employee"
        assert Employee(pk="x").type_ == "Employee"
    finally:
        Base.registry.dispose()


@pytest.mark.parametrize(
    ("templates", "message"),
    [
        ({"pk": "CUSTOMER#{customer}"}, "uses 'customer', which Order does not map"),
        ({"missing": "X#{pk}"}, "uses 'missing', which Order does not map"),
        ({"pk": "CUSTOMER#{}"}, "use {attribute} placeholders only"),
    ],
)
def test_bad_key_templates(templates, message):
    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = unique("orders")
        __key_templates__ = templates
        pk: Mapped[str] = mapped_column(primary_key=True)
        customer_id: Mapped[str | None]

    try:
        with pytest.raises(KeyTemplateError) as raised:
            configure_mappers()
        assert message in str(raised.value)
    finally:
        Base.registry.dispose()


def test_subclass_redefining_an_inherited_template_is_a_conflict():
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = unique("items")
        __key_templates__ = {"pk": "ITEM#{code}"}
        pk: Mapped[str] = mapped_column(primary_key=True)
        code: Mapped[str | None]

    class Special(Item):
        __key_templates__ = {"pk": "SPECIAL#{code}"}

    try:
        with pytest.raises(KeyTemplateError, match="Special redefines the key template of 'pk'"):
            configure_mappers()
    finally:
        Base.registry.dispose()
