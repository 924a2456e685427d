"""A product catalogue in one table, after DynamoMapper's single-table guide.

Access patterns, each a GetItem or a Query (never a Scan):
- a product by its SKU (GetItem),
- the reviews of a product (Query on its partition),
- active products by name, archived products by archive date (Query on the conditional index
  ``gsi1``: ``ACTIVE_PRODUCT``/name or ``ARCHIVED_PRODUCT``/date, chosen by ``computed_key``),
- the products of a category in a price range (Query on ``gsi2``, whose sort key
  ``PRICE#{price:010.2f}`` keeps the order of prices),
- attributes the model does not map, kept in an attribute bag and written back.

Run it: ``python examples/catalogue.py`` (starts a private DynamoDB Local).
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Index, Numeric, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo


class Base(DeclarativeBase):
    pass


class CatalogueItem(sa_dynamo.SingleTable, Base):
    __tablename__ = "catalogue"
    __table_args__ = (
        Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
        Index("gsi2", "gsi2pk", "gsi2sk", dynamodb_projection="ALL"),
    )
    pk: Mapped[str] = mapped_column(primary_key=True)
    sk: Mapped[str] = mapped_column(primary_key=True)
    gsi1pk: Mapped[str | None]
    gsi1sk: Mapped[str | None]
    gsi2pk: Mapped[str | None]
    gsi2sk: Mapped[str | None]
    sku: Mapped[str | None]


def listing(product: Any) -> str:
    """The conditional index's partition: archived products apart from active ones."""
    return "ARCHIVED_PRODUCT" if product.archived_at is not None else "ACTIVE_PRODUCT"


def listing_order(product: Any) -> str | None:
    """Archived products sort by archive date, active ones by name."""
    if product.archived_at is not None:
        return product.archived_at.isoformat(timespec="seconds")
    return product.name


class Product(CatalogueItem):
    __key_templates__ = {
        "pk": "PRODUCT#{sku}",
        "sk": "PRODUCT",
        "gsi1pk": sa_dynamo.computed_key(listing, "archived_at"),
        "gsi1sk": sa_dynamo.computed_key(listing_order, "archived_at", "name"),
        "gsi2pk": "CATEGORY#{category}",
        "gsi2sk": "PRICE#{price:010.2f}",
    }
    name: Mapped[str | None]
    category: Mapped[str | None]
    price: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
    archived_at: Mapped[datetime.datetime | None]
    extra: Mapped[dict] = sa_dynamo.attribute_bag()
    reviews = sa_dynamo.item_collection("Review", sort_key_prefix="REVIEW#", order_by="Review.sk")


class Review(CatalogueItem):
    __key_templates__ = {"pk": "PRODUCT#{sku}", "sk": "REVIEW#{review_id}"}
    review_id: Mapped[str | None]
    stars: Mapped[int | None]


def product(session: Session, sku: str) -> Product | None:
    return session.get(Product, sa_dynamo.key_of(Product, sku=sku))


def active_products() -> Any:
    """gsi1 holds every active product (listing_order always gives it a sort key), which the
    planner cannot know of a computed key: the query names the index."""
    return (
        select(Product)
        .where(Product.gsi1pk == "ACTIVE_PRODUCT")
        .order_by(Product.gsi1sk)
        .options(sa_dynamo.use_index("gsi1"))
    )


def archived_between(start: datetime.datetime, end: datetime.datetime) -> Any:
    bounds = (start.isoformat(timespec="seconds"), end.isoformat(timespec="seconds"))
    return select(Product).where(Product.gsi1pk == "ARCHIVED_PRODUCT", Product.gsi1sk.between(*bounds))


def in_price_range(category: str, low: Decimal, high: Decimal) -> Any:
    return select(Product).where(Product.category == category, Product.price.between(low, high))


def sample(session: Session) -> None:
    session.add_all(
        [
            Product(sku="a1", name="anvil", category="tools", price=Decimal("49.00")),
            Product(sku="b2", name="bolt", category="tools", price=Decimal("0.35"), extra={"pack": 100}),
            Product(sku="c3", name="clamp", category="tools", price=Decimal("12.50")),
            Product(
                sku="d4",
                name="dial",
                category="tools",
                price=Decimal("18.00"),
                archived_at=datetime.datetime(2024, 3, 1, 9, 0),
            ),
            Review(sku="a1", review_id="1", stars=5),
            Review(sku="a1", review_id="2", stars=4),
        ]
    )
    session.commit()


def main() -> None:
    engine = create_engine("dynamodb+local://")
    Base.metadata.create_all(engine)
    try:
        with Session(engine) as session:
            sample(session)
            print("anvil:", product(session, "a1").name, [r.stars for r in product(session, "a1").reviews])
            print("active:", [p.name for p in session.scalars(active_products())])
            print(
                "10-20:", [p.name for p in session.scalars(in_price_range("tools", Decimal(10), Decimal(20)))]
            )
            bolt = product(session, "b2")
            bolt.extra["pack"] = 200
            session.commit()
            print("bolt pack:", product(session, "b2").extra)
    finally:
        Base.metadata.drop_all(engine)


if __name__ == "__main__":
    main()
