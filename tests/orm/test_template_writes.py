"""Key templates on writes that bypass the flush (Core and ORM bulk INSERT/UPDATE, through a
Session or a Connection): the keys derived from what they write are written with it, so the item
is found by its new values; what cannot be derived, or would move a key, is refused before
anything is sent."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Index, bindparam, insert, select, update
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo


@pytest.fixture(scope="module")
def models(engine):
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = f"writes_{uuid.uuid4().hex[:8]}"
        __table_args__ = (
            Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
            Index("gsi2", "gsi2pk", dynamodb_projection="ALL"),
        )
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        gsi1sk: Mapped[str | None]
        gsi2pk: Mapped[str | None]

    class Order(Item):
        __key_templates__ = {
            "pk": "CUSTOMER#{customer_id}",
            "sk": "ORDER#{order_id}",
            "gsi1pk": "STATUS#{status}",
            "gsi1sk": "ORDER#{order_id}",
            "gsi2pk": "{region}#{channel}",  # two sources
        }
        customer_id: Mapped[str | None]
        order_id: Mapped[str | None]
        status: Mapped[str | None]
        region: Mapped[str | None]
        channel: Mapped[str | None]

    Base.metadata.create_all(engine)
    yield Item, Order
    Base.metadata.drop_all(engine)
    Base.registry.dispose()


def _new_order(engine, Order, status="PAID") -> tuple[str, str]:
    """A fresh order (customer and order id), written by a flush."""
    customer, order = uuid.uuid4().hex[:6], "1"
    with Session(engine) as session:
        session.add(Order(customer_id=customer, order_id=order, status=status, region="EU", channel="WEB"))
        session.commit()
    return customer, order


def _by_status(engine, Order, status: str, customer: str) -> list[tuple]:
    """The customer's orders found through gsi1 by their status, with the keys stored."""
    with Session(engine) as session:
        query = select(Order).where(Order.status == status)
        assert sa_dynamo.explain(session, query).index == "gsi1"
        found = session.scalars(query.execution_options(dynamodb_scan="error"))
        return [(o.order_id, o.gsi1pk, o.gsi2pk) for o in found if o.customer_id == customer]


def _key(Order, customer: str, order: str):
    return (Order.pk == f"CUSTOMER#{customer}", Order.sk == f"ORDER#{order}")


def test_a_core_update_of_a_source_writes_the_keys_derived_from_it(engine, models):
    _Item, Order = models
    customer, order = _new_order(engine, Order)
    with engine.begin() as conn:
        conn.execute(update(Order).where(*_key(Order, customer, order)).values(status="SHIPPED"))
    assert _by_status(engine, Order, "SHIPPED", customer) == [("1", "STATUS#SHIPPED", "EU#WEB")]
    assert _by_status(engine, Order, "PAID", customer) == []


def test_a_session_update_of_a_source_writes_the_derived_keys_and_updates_the_objects(engine, models):
    _Item, Order = models
    customer, order = _new_order(engine, Order)
    with Session(engine) as session:
        loaded = session.get(Order, (f"CUSTOMER#{customer}", f"ORDER#{order}"))
        session.execute(update(Order).where(*_key(Order, customer, order)).values(status="LOST"))
        assert (loaded.status, loaded.gsi1pk) == ("LOST", "STATUS#LOST")  # synchronized in the session
        session.commit()
    assert _by_status(engine, Order, "LOST", customer) == [("1", "STATUS#LOST", "EU#WEB")]


def test_a_bulk_update_by_primary_key_writes_each_rows_keys(engine, models):
    _Item, Order = models
    first, second = _new_order(engine, Order), _new_order(engine, Order)
    with Session(engine) as session:
        rows = [
            {"pk": f"CUSTOMER#{customer}", "sk": "ORDER#1", "status": status}
            for (customer, _), status in ((first, "FOUND"), (second, "KEPT"))
        ]
        session.execute(update(Order), rows)
        session.commit()
    assert _by_status(engine, Order, "FOUND", first[0]) == [("1", "STATUS#FOUND", "EU#WEB")]
    assert _by_status(engine, Order, "KEPT", second[0]) == [("1", "STATUS#KEPT", "EU#WEB")]


def test_a_core_executemany_writes_each_rows_keys(engine):
    """(A subclass's UPDATE carries SQLAlchemy's IN of its identities, which executemany cannot
    take, on any database: a class of its own table here.)"""

    class Base(DeclarativeBase):
        pass

    class Ticket(Base):
        __tablename__ = f"tickets_{uuid.uuid4().hex[:8]}"
        __table_args__ = (Index("by_state", "gsi1pk", dynamodb_projection="ALL"),)
        __key_templates__ = {"pk": "TICKET#{number}", "gsi1pk": "STATE#{state}"}
        pk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        number: Mapped[int]
        state: Mapped[str | None]

    Base.metadata.create_all(engine)
    try:
        with Session(engine) as session:
            session.add_all([Ticket(number=n, state="OPEN") for n in (1, 2, 3)])
            session.commit()
        statement = update(Ticket).where(Ticket.pk == bindparam("b_pk")).values(state=bindparam("b_state"))
        with engine.begin() as conn:
            conn.execute(
                statement, [{"b_pk": "TICKET#1", "b_state": "DONE"}, {"b_pk": "TICKET#2", "b_state": "HELD"}]
            )
        with Session(engine) as session:
            found = session.scalars(select(Ticket).where(Ticket.state.in_(["DONE", "HELD", "OPEN"])))
            assert sorted((t.number, t.state, t.gsi1pk) for t in found) == [
                (1, "DONE", "STATE#DONE"),
                (2, "HELD", "STATE#HELD"),
                (3, "OPEN", "STATE#OPEN"),
            ]
    finally:
        Base.metadata.drop_all(engine)
        Base.registry.dispose()


def test_a_source_set_to_none_removes_the_derived_keys(engine, raw, models):
    Item, Order = models
    customer, order = _new_order(engine, Order)
    with engine.begin() as conn:
        conn.execute(update(Order).where(*_key(Order, customer, order)).values(status=None))
    stored = raw.get_item(
        TableName=Item.__tablename__, Key={"pk": {"S": f"CUSTOMER#{customer}"}, "sk": {"S": "ORDER#1"}}
    )["Item"]
    assert not {"status", "gsi1pk"} & stored.keys() and stored["gsi1sk"] == {"S": "ORDER#1"}


def test_a_bulk_insert_writes_the_templated_keys(engine, models):
    _Item, Order = models
    customer = uuid.uuid4().hex[:6]
    with Session(engine) as session:
        rows = [{"type_": "Order", "customer_id": customer, "order_id": n, "status": "NEW"} for n in "12"]
        session.execute(insert(Order), rows)
        session.commit()
    with engine.begin() as conn:
        conn.execute(insert(Order).values(type_="Order", customer_id=customer, order_id="3", status="NEW"))
    # no region nor channel: gsi2pk is left out, as a flush leaves it
    assert sorted(_by_status(engine, Order, "NEW", customer)) == [(n, "STATUS#NEW", None) for n in "123"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"order_id": "9"}, r"builds the key attribute sk: it would move the item"),
        (
            {"region": "US"},
            r"sets region, .* builds gsi2pk, but cannot render it: channel is neither set to a value nor",
        ),
        ({"status": "X", "gsi1pk": "STATUS#Y"}, r"sets gsi1pk, .* leave gsi1pk out of the values"),
    ],
)
def test_a_write_whose_keys_cannot_follow_is_refused_before_sending(engine, models, sent, values, message):
    _Item, Order = models
    customer, order = _new_order(engine, Order)
    sent.clear()
    with engine.begin() as conn, pytest.raises(InvalidRequestError, match=message):
        conn.execute(update(Order).where(*_key(Order, customer, order)).values(**values))
    assert sent == []


def test_a_table_write_that_sets_a_source_without_its_key_is_refused(engine, models, sent):
    Item, Order = models
    customer, _order = _new_order(engine, Order)
    table = Item.__table__
    statement = update(table).where(table.c.pk == f"CUSTOMER#{customer}", table.c.sk == "ORDER#1")
    sent.clear()
    with (
        engine.begin() as conn,
        pytest.raises(InvalidRequestError, match=r"write through the class \(update\(Order\)"),
    ):
        conn.execute(statement.values(status="SHIPPED"))
    assert sent == []
    with engine.begin() as conn:  # with the derived keys, it is the caller's to say
        conn.execute(statement.values(status="SHIPPED", gsi1pk="STATUS#SHIPPED"))
    assert _by_status(engine, Order, "SHIPPED", customer) == [("1", "STATUS#SHIPPED", "EU#WEB")]
