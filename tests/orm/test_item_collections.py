"""selectinload of an item collection: one Query per chunk of parent partitions
(``"pk" IN [...] AND begins_with("sk", ?)``), never a JOIN or a Scan; rows regrouped per parent,
options chained below the collection kept."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from sqlalchemy import inspect, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, selectinload

import sa_dynamo
from sa_dynamo.dbapi.limits import MAX_PARTITION_KEYS


def make_shop(table: str) -> SimpleNamespace:
    """Customers, their orders, order lines and notes, all in the customer's partition."""

    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = table
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        customer_id: Mapped[str | None]

    class Customer(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "PROFILE#{customer_id}"}
        name: Mapped[str | None]
        orders = sa_dynamo.item_collection("Order", sort_key_prefix="ORDER#", order_by="Order.sk")

    class Order(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}"}
        order_id: Mapped[str | None]
        status: Mapped[str | None]
        total: Mapped[int | None]
        # The notes on the order's customer, newest first: a second collection to chain.
        customer_notes = sa_dynamo.item_collection("Note", sort_key_prefix="NOTE#", order_by="Note.sk.desc()")

    class OrderLine(Item):
        # Another mapped kind whose sort key starts with ORDER#: never an order.
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}#LINE#{line}"}
        order_id: Mapped[str | None] = mapped_column(use_existing_column=True)
        line: Mapped[int | None]

    class Note(Item):
        __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "NOTE#{note_id}"}
        note_id: Mapped[str | None]
        text: Mapped[str | None]

    return SimpleNamespace(Base=Base, Customer=Customer, Order=Order, OrderLine=OrderLine, Note=Note)


@pytest.fixture(scope="module")
def shop(engine, raw):
    """Ann (three orders, a line, two notes, a foreign Refund under ORDER#), Bob (one order),
    Cid (nothing), and an order of Zed, whose profile is never loaded."""
    models = make_shop(f"shop_{uuid.uuid4().hex[:8]}")
    models.Base.metadata.create_all(engine)
    Customer, Order, OrderLine, Note = models.Customer, models.Order, models.OrderLine, models.Note
    with Session(engine) as session:
        session.add_all(
            [
                Customer(customer_id="ann", name="Ann"),
                Order(customer_id="ann", order_id="3", status="PAID", total=30),
                Order(customer_id="ann", order_id="1", status="PAID", total=10),
                Order(customer_id="ann", order_id="2", status="OPEN", total=20),
                OrderLine(customer_id="ann", order_id="1", line=1),
                Note(customer_id="ann", note_id="1", text="first"),
                Note(customer_id="ann", note_id="2", text="second"),
                Customer(customer_id="bob", name="Bob"),
                Order(customer_id="bob", order_id="7", status="OPEN", total=70),
                Customer(customer_id="cid", name="Cid"),
                Customer(customer_id="zed", name="Zed"),
                Order(customer_id="zed", order_id="9", status="PAID", total=90),
            ]
        )
        session.commit()
    raw.put_item(
        TableName=Customer.__table__.name,
        Item={"pk": {"S": "CUSTOMER#ann"}, "sk": {"S": "ORDER#8"}, "$type": {"S": "Refund"}},
    )
    yield models
    models.Base.metadata.drop_all(engine)
    models.Base.registry.dispose()


@pytest.fixture
def plans(caplog) -> Callable[[], list[str]]:
    """The plan summaries logged so far ("Query on ...", "Scan on ..."), one per statement."""
    caplog.set_level(logging.INFO, logger="sa_dynamo")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "sa_dynamo"]


ORDER_COLUMNS = '"pk", "sk", "$type", "customer_id", "order_id", "status", "total"'
CUSTOMERS = ["CUSTOMER#ann", "CUSTOMER#bob", "CUSTOMER#cid"]


def test_selectinload_gives_each_customer_its_orders_with_one_query(engine, shop, sent, plans):
    Customer = shop.Customer
    with Session(engine) as session:
        customers = session.scalars(
            select(Customer).where(Customer.pk.in_(CUSTOMERS)).options(selectinload(Customer.orders))
        ).all()
        statements = len(sent)
        loaded = {c.name: [(o.order_id, o.total) for o in c.orders] for c in customers}
        assert len(sent) == statements  # already loaded: no lazy load follows
        assert all("orders" in inspect(c).dict for c in customers)
    assert loaded == {"Ann": [("1", 10), ("2", 20), ("3", 30)], "Bob": [("7", 70)], "Cid": []}
    table = Customer.__table__.name
    assert sent == [
        f'SELECT "pk", "sk", "$type", "customer_id", "name" FROM "{table}" WHERE "pk" IN [?, ?, ?] '
        'AND ("$type" IN [?])',
        f'SELECT {ORDER_COLUMNS} FROM "{table}" WHERE "pk" IN [?, ?, ?] AND begins_with("sk", ?) '
        'AND ("$type" IN [?])',
    ]
    assert [p.split(";")[0] for p in plans()] == [f"Query on {table}", f"Query on {table}"]


def test_customers_sharing_a_partition_each_get_all_its_orders(engine, raw, shop, sent):
    Customer, Order = shop.Customer, shop.Order
    table = Customer.__table__.name
    old = {"pk": {"S": "CUSTOMER#ann"}, "sk": {"S": "PROFILE#old"}}
    raw.put_item(TableName=table, Item={**old, "$type": {"S": "Customer"}, "name": {"S": "Ann (old)"}})
    try:
        with Session(engine) as session:
            customers = session.scalars(
                select(Customer).where(Customer.pk == "CUSTOMER#ann").options(selectinload(Customer.orders))
            ).all()
            assert {c.sk: [o.order_id for o in c.orders] for c in customers} == {
                "PROFILE#ann": ["1", "2", "3"],
                "PROFILE#old": ["1", "2", "3"],
            }
            assert all(isinstance(o, Order) for c in customers for o in c.orders)
        assert len(sent) == 2
        assert sent[1].count("?") == 3  # one partition key, the prefix, the type
    finally:
        raw.delete_item(TableName=table, Key=old)


def test_chained_selectinload_is_one_query_per_level(engine, shop, sent, plans):
    Customer, Order = shop.Customer, shop.Order
    with Session(engine) as session:
        customers = session.scalars(
            select(Customer)
            .where(Customer.pk.in_(CUSTOMERS))
            .options(selectinload(Customer.orders).selectinload(Order.customer_notes))
        ).all()
        statements = len(sent)
        notes = {o.order_id: [n.text for n in o.customer_notes] for c in customers for o in c.orders}
        assert len(sent) == statements
    assert notes == {"1": ["second", "first"], "2": ["second", "first"], "3": ["second", "first"], "7": []}
    table = Customer.__table__.name
    assert sent[2] == (
        f'SELECT "pk", "sk", "$type", "customer_id", "note_id", "text" FROM "{table}" '
        'WHERE "pk" IN [?, ?] AND begins_with("sk", ?) AND ("$type" IN [?])'
    )
    assert len(sent) == 3
    assert all(p.startswith(f"Query on {table}") for p in plans())


def test_criteria_and_column_options_on_the_collection_are_kept(engine, shop, sent):
    Customer, Order = shop.Customer, shop.Order
    with Session(engine) as session:
        customers = session.scalars(
            select(Customer)
            .where(Customer.pk.in_(CUSTOMERS))
            .options(selectinload(Customer.orders.and_(Order.status == "PAID")).load_only(Order.status))
        ).all()
        paid = {c.name: [o.sk for o in c.orders] for c in customers}
        (ann,) = (c for c in customers if c.name == "Ann")
        assert "total" not in inspect(ann.orders[0]).dict
    assert paid == {"Ann": ["ORDER#1", "ORDER#3"], "Bob": [], "Cid": []}
    table = Customer.__table__.name
    assert sent[1] == (
        f'SELECT "pk", "sk", "$type", "status" FROM "{table}" WHERE "pk" IN [?, ?, ?] '
        'AND begins_with("sk", ?) AND ("status" = ? AND "$type" IN [?])'
    )


def test_populate_existing_reaches_the_collection(engine, raw, shop):
    Customer = shop.Customer
    query = select(Customer).where(Customer.pk == "CUSTOMER#bob").options(selectinload(Customer.orders))
    table = Customer.__table__.name

    def set_total(total: int) -> None:
        raw.update_item(
            TableName=table,
            Key={"pk": {"S": "CUSTOMER#bob"}, "sk": {"S": "ORDER#7"}},
            UpdateExpression="SET #t = :t",
            ExpressionAttributeNames={"#t": "total"},
            ExpressionAttributeValues={":t": {"N": str(total)}},
        )

    with Session(engine) as session:
        (bob,) = session.scalars(query).all()
        assert bob.orders[0].total == 70
        set_total(71)
        try:
            session.scalars(query).all()
            assert bob.orders[0].total == 70  # the identity map wins
            session.scalars(query.execution_options(populate_existing=True)).all()
            assert bob.orders[0].total == 71
        finally:
            set_total(70)


def test_lazy_loading_is_unchanged(engine, shop, sent):
    Customer = shop.Customer
    with Session(engine) as session:
        ann = session.get(Customer, ("CUSTOMER#ann", "PROFILE#ann"))
        assert [o.order_id for o in ann.orders] == ["1", "2", "3"]
    assert sent[-1] == (
        f'SELECT {ORDER_COLUMNS} FROM "{Customer.__table__.name}" WHERE "pk" = ? AND begins_with("sk", ?) '
        'AND ("$type" IN [?]) ORDER BY "sk"'
    )


def test_many_parents_are_queried_in_chunks_of_partition_keys(engine, sent, plans):
    """120 customers, every other one with an order: 120 parents in one selectin load become
    Queries of at most 50 partition keys (DynamoDB's documented IN limit on the partition key)."""
    models = make_shop(f"shop_many_{uuid.uuid4().hex[:8]}")
    models.Base.metadata.create_all(engine)
    Customer, Order = models.Customer, models.Order
    try:
        ids = [f"{n:03}" for n in range(120)]
        with Session(engine) as session:
            for start in range(0, len(ids), 40):  # a commit is one transaction of at most 100 writes
                for customer_id in ids[start : start + 40]:
                    session.add(Customer(customer_id=customer_id))
                    if int(customer_id) % 2 == 0:
                        session.add(Order(customer_id=customer_id, order_id=customer_id))
                session.commit()
        sent.clear()
        plans_before = len(plans())
        with Session(engine) as session:
            customers = session.scalars(
                select(Customer)
                .options(selectinload(Customer.orders))
                .execution_options(dynamodb_scan="allow")
            ).all()
            loaded = {c.customer_id: [o.order_id for o in c.orders] for c in customers}
        assert loaded == {i: [i] if int(i) % 2 == 0 else [] for i in ids}
        table = Customer.__table__.name
        chunks = [MAX_PARTITION_KEYS, MAX_PARTITION_KEYS, 20]
        assert [statement.count("?") for statement in sent[1:]] == [n + 2 for n in chunks]  # prefix, $type
        assert all('WHERE "pk" IN [' in statement for statement in sent[1:])
        assert [p.split(";")[0] for p in plans()[plans_before:]] == [f"Scan on {table}"] + [
            f"Query on {table}"
        ] * 3
    finally:
        models.Base.metadata.drop_all(engine)
        models.Base.registry.dispose()
