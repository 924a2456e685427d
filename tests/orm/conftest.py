"""The canonical single-table store (customers, orders, order items in one partition; a GSI for
orders by status), mapped once per test module on a fresh table, and an employee hierarchy.

Every test here that takes ``engine`` runs twice: on boto3, and on aiobotocore through an
AsyncEngine (its ``sync_engine``, the test run under greenlet_spawn: tests/support/aio.py)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import Index
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from support.aio import dispose, engine_for

import sa_dynamo


@pytest.fixture(scope="module")
def engine(driver: str, endpoint_url: str):
    """The ORM tests' engine, once per driver (module-scoped: its async variant is disposed by
    the module's last test, on the event loop its connections belong to)."""
    engine = engine_for(driver, endpoint_url, pool_use_lifo=True)
    yield engine
    dispose(engine)


def make_store(table: str):
    """Customer / Order / OrderItem in one table, with key templates and a status GSI."""

    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = table
        __table_args__ = (Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),)
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        gsi1sk: Mapped[str | None]
        customer_id: Mapped[str | None]

    class Customer(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "METADATA"}
        name: Mapped[str | None]
        orders = sa_dynamo.item_collection("Order", sort_key_prefix="ORDER#", order_by="Order.sk")

    class Order(Item):
        __key_templates__ = {
            "pk": "CUSTOMER#{customer_id}",
            "sk": "ORDER#{order_id}",
            "gsi1pk": "STATUS#{status}",
            "gsi1sk": "ORDER#{order_id}",
        }
        order_id: Mapped[str | None]
        status: Mapped[str | None]
        total: Mapped[int | None]

    class OrderItem(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}#ITEM#{line}"}
        order_id: Mapped[str | None] = mapped_column(use_existing_column=True)
        line: Mapped[int | None]
        product: Mapped[str | None]

    return SimpleNamespace(Base=Base, Item=Item, Customer=Customer, Order=Order, OrderItem=OrderItem)


@pytest.fixture(scope="module")
def store(engine):
    models = make_store(f"store_{uuid.uuid4().hex[:8]}")
    models.Base.metadata.create_all(engine)
    yield models
    models.Base.metadata.drop_all(engine)
    models.Base.registry.dispose()


def make_staff(table: str, sort_key: bool):
    """Employee / Engineer / Manager: plain SQLAlchemy single-table inheritance (a ``kind``
    discriminator; subclass attributes load only when asked for), keyed by ``pk`` alone or by
    ``pk`` and ``sk``."""

    class Base(DeclarativeBase):
        pass

    class Employee(Base):
        __tablename__ = table
        __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "employee"}
        pk: Mapped[str] = mapped_column(primary_key=True)
        if sort_key:
            sk: Mapped[str] = mapped_column(primary_key=True)
        kind: Mapped[str]
        name: Mapped[str]

    class Engineer(Employee):
        __mapper_args__ = {"polymorphic_identity": "engineer"}
        language: Mapped[str | None]

    class Manager(Employee):
        __mapper_args__ = {"polymorphic_identity": "manager"}
        reports: Mapped[int | None]

    return SimpleNamespace(Base=Base, Employee=Employee, Engineer=Engineer, Manager=Manager)
