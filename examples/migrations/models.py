"""The shop's models: customers and their orders in ONE DynamoDB table, told apart by "$type".

``gsi1`` lists orders by status; its key attributes are computed from each order by key
templates. Migration 0002 added it, and backfilled it for the orders written before.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import Index, Numeric
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

import sa_dynamo


class Base(DeclarativeBase):
    pass


class Item(sa_dynamo.SingleTable, Base):
    __tablename__ = "shop"
    __table_args__ = (Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),)
    pk: Mapped[str] = mapped_column(primary_key=True)
    sk: Mapped[str] = mapped_column(primary_key=True)
    gsi1pk: Mapped[str | None]
    gsi1sk: Mapped[str | None]
    customer_id: Mapped[str | None]


class Customer(Item):
    __key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "PROFILE"}
    name: Mapped[str | None]


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
