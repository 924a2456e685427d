"""The modeled family of the surface differential: the single-table features of docs/modeling.md
(key templates with fixed-width and precision-losing formats, a computed key, an attribute bag,
many-to-many memberships in one table with an inverted index) on DynamoDB's side, and the plain
relational models a SQL database would hold on SQLite's side.

Both sides have classes of the same names and attributes, so one piece of ORM code runs on
each: ``Product`` (its key built from ``sku``, three indexes keyed by its category and sorted
by ``price``, ``added`` and ``rank``), ``User``, ``Group`` and ``Membership``. The values
SQLite's side writes to its ``Numeric(10, 2)`` are rounded first (``rounded``), as docs/types.md
says such a column stores them (PostgreSQL's numeric); SQLite would store them unrounded.
"""

from __future__ import annotations

import datetime
import random
from decimal import ROUND_HALF_UP, Decimal
from types import SimpleNamespace
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Numeric, String
from sqlalchemy.ext.associationproxy import association_proxy
from sqlalchemy.ext.mutable import MutableDict
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from support.memberships import membership_models

import sa_dynamo

SEED = 20261202
CATEGORIES = ("tools", "art", "food")
SKUS = tuple(f"s{n:02}" for n in range(30))  # s00-s23 stored at first, the others free
STORED = 24
USERS = ("u1", "u2", "u3", "u4")
GROUPS = ("g1", "g2", "g3")
ROLES = ("admin", "member", "guest")
T0 = datetime.datetime(2024, 3, 1, 10, 0)
# Prices: two places (as the column stores them), and some with a third, which the column rounds.
PRICES = tuple(Decimal(p) for p in ("0.70", "10.00", "12.34", "12.35", "12.50", "99.99"))
FINE_PRICES = tuple(Decimal(p) for p in ("12.345", "12.355", "12.499", "0.705"))
# Times: whole seconds, and some within a second (the key format drops sub-seconds)
MOMENTS = tuple(T0 + datetime.timedelta(seconds=s) for s in (0, 1, 60, 3600))
FINE_MOMENTS = tuple(T0 + datetime.timedelta(microseconds=m) for m in (300000, 500000, 1300000))
RANKS = (0, 7, 42, 500, 99999)


def listing(product: Any) -> str:
    """The computed key of the listing index: archived products apart from active ones."""
    return "ARCHIVED" if product.archived_at is not None else "ACTIVE"


def rounded(values: dict[str, Any]) -> dict[str, Any]:
    """Values as SQLite should store them: a price rounded half away from zero to the column's
    2 places, as docs/types.md says Numeric(p, s) stores it (SQLite would keep it unrounded).
    Only writes round; a comparison uses the value as given."""
    price = values.get("price")
    if price is None:
        return values
    return {**values, "price": Decimal(price).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)}


def dynamodb_models(prefix: str) -> SimpleNamespace:
    """The single-table models, as docs/modeling.md declares them."""

    class Base(DeclarativeBase):
        pass

    class Product(Base):
        __tablename__ = f"{prefix}_products"
        __table_args__ = (
            Index("listing", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
            Index("by_price", "gsi2pk", "gsi2sk", dynamodb_projection="ALL"),
            Index("by_added", "gsi3pk", "gsi3sk", dynamodb_projection="ALL"),
            Index("by_rank", "gsi4pk", "gsi4sk", dynamodb_projection="ALL"),
        )
        __key_templates__ = {
            "pk": "PRODUCT#{sku}",
            "gsi1pk": sa_dynamo.computed_key(listing, "archived_at"),
            "gsi1sk": "{name}",
            "gsi2pk": "CATEGORY#{category}",
            "gsi2sk": "PRICE#{price:010.2f}",  # half-even to 2 places; the column rounds half-up
            "gsi3pk": "CATEGORY#{category}",
            "gsi3sk": "{added:%Y-%m-%dT%H:%M:%S}",  # the docs' format: no sub-seconds
            "gsi4pk": "CATEGORY#{category}",
            "gsi4sk": "RANK#{rank:05d}",  # fixed width and exact
        }
        pk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        gsi1sk: Mapped[str | None]
        gsi2pk: Mapped[str | None]
        gsi2sk: Mapped[str | None]
        gsi3pk: Mapped[str | None]
        gsi3sk: Mapped[str | None]
        gsi4pk: Mapped[str | None]
        gsi4sk: Mapped[str | None]
        sku: Mapped[str]
        name: Mapped[str]
        category: Mapped[str]
        price: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
        added: Mapped[datetime.datetime | None]
        archived_at: Mapped[datetime.datetime | None]
        rank: Mapped[int | None]
        stock: Mapped[int | None]
        note: Mapped[str | None]
        extra: Mapped[dict] = sa_dynamo.attribute_bag()

    social = membership_models(Base, f"{prefix}_social")
    User, Group, Membership = social.User, social.Group, social.Membership

    return SimpleNamespace(
        Base=Base,
        Product=Product,
        User=User,
        Group=Group,
        Membership=Membership,
        written=lambda values: values,  # DynamoDB's side rounds a Numeric(10, 2) itself
        product_key=lambda sku: sa_dynamo.key_of(Product, sku=sku),
        user_key=lambda user_id: sa_dynamo.key_of(User, user_id=user_id),
        group_key=lambda group_id: sa_dynamo.key_of(Group, group_id=group_id),
        membership_key=lambda user_id, group_id: sa_dynamo.key_of(
            Membership, user_id=user_id, group_id=group_id
        ),
        listed=lambda active: Product.gsi1pk == ("ACTIVE" if active else "ARCHIVED"),
        by_name=Product.gsi1sk,
    )


def sqlite_models() -> SimpleNamespace:
    """The same classes as plain relational models: what SQL means by them."""

    class Base(DeclarativeBase):
        pass

    class Product(Base):
        __tablename__ = "products"
        sku: Mapped[str] = mapped_column(primary_key=True)
        name: Mapped[str]
        category: Mapped[str]
        price: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
        added: Mapped[datetime.datetime | None]
        archived_at: Mapped[datetime.datetime | None]
        rank: Mapped[int | None]
        stock: Mapped[int | None]
        note: Mapped[str | None]
        extra: Mapped[dict | None] = mapped_column(MutableDict.as_mutable(JSON(none_as_null=True)))

    class User(Base):
        __tablename__ = "users"
        user_id: Mapped[str] = mapped_column(primary_key=True)
        name: Mapped[str | None]
        memberships: Mapped[list[Membership]] = relationship(
            back_populates="user", cascade="all, delete-orphan"
        )
        groups = association_proxy("memberships", "group")

    class Group(Base):
        __tablename__ = "groups"
        group_id: Mapped[str] = mapped_column(primary_key=True)
        title: Mapped[str | None]
        memberships: Mapped[list[Membership]] = relationship(
            back_populates="group", cascade="all, delete-orphan"
        )

    class Membership(Base):
        __tablename__ = "memberships"
        user_id: Mapped[str] = mapped_column(ForeignKey("users.user_id"), primary_key=True)
        group_id: Mapped[str] = mapped_column(String, ForeignKey("groups.group_id"), primary_key=True)
        role: Mapped[str | None]
        user: Mapped[User] = relationship(back_populates="memberships")
        group: Mapped[Group] = relationship(back_populates="memberships")

    return SimpleNamespace(
        Base=Base,
        Product=Product,
        User=User,
        Group=Group,
        Membership=Membership,
        written=rounded,
        product_key=lambda sku: sku,
        user_key=lambda user_id: user_id,
        group_key=lambda group_id: group_id,
        membership_key=lambda user_id, group_id: (user_id, group_id),
        listed=lambda active: Product.archived_at.is_(None) if active else Product.archived_at.is_not(None),
        by_name=Product.name,
    )


def base_products(fine: bool) -> list[dict[str, Any]]:
    """The products every program starts from; ``fine``: with prices and times finer than the
    key formats keep (finding 7 leaves them out while it is open)."""
    rng = random.Random(SEED)
    prices = PRICES + (FINE_PRICES if fine else ())
    moments = MOMENTS + (FINE_MOMENTS if fine else ())
    products = []
    for number, sku in enumerate(SKUS[:STORED]):
        products.append(
            {
                "sku": sku,
                "name": f"{rng.choice(('anvil', 'bolt', 'clamp', 'dial'))}-{sku}",  # unique: a total order
                "category": CATEGORIES[number % len(CATEGORIES)],
                "price": None if rng.random() < 0.15 else rng.choice(prices),
                "added": None if rng.random() < 0.15 else rng.choice(moments),
                "archived_at": None if rng.random() < 0.7 else rng.choice(MOMENTS),
                "rank": None if rng.random() < 0.2 else rng.choice(RANKS),
                "stock": None if rng.random() < 0.3 else rng.randint(0, 9),
                "note": None if rng.random() < 0.5 else rng.choice(("new", "old", "sale")),
                "extra": {}
                if rng.random() < 0.4
                else {"color": rng.choice(("red", "blue")), "size": rng.randint(1, 3)},
            }
        )
    return products


def base_memberships() -> list[tuple[str, str, str | None]]:
    rng = random.Random(SEED + 1)
    return [(u, g, rng.choice((*ROLES, None))) for u in USERS for g in GROUPS if rng.random() < 0.5]
