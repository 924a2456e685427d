"""A FastAPI service on sa_dynamo's async dialect: one AsyncSession per request, pages of orders
with signed tokens, and an increment that retries lost races.

Run it from the repository's root (uvicorn is in no extra of sa_dynamo, so install it too)::

    pip install ".[async]" fastapi uvicorn
    uvicorn examples.fastapi_app:app

``SA_DYNAMO_URL`` chooses the database, the embedded DynamoDB Local by default (Java 17 and npm
fetch it once); tests/aio/test_fastapi_app.py drives it with httpx.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

import sa_dynamo


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = os.environ.get("SA_DYNAMO_ORDERS_TABLE", "fastapi_orders")
    customer_id: Mapped[str] = mapped_column(primary_key=True)
    order_id: Mapped[str] = mapped_column(primary_key=True)
    total: Mapped[int]
    version: Mapped[int] = mapped_column(nullable=False)
    __mapper_args__ = {"version_id_col": version}


class OrderIn(BaseModel):
    order_id: str
    total: int


class OrderOut(OrderIn):
    customer_id: str


class OrdersPage(BaseModel):
    orders: list[OrderOut]
    next: str | None


engine = create_async_engine(os.environ.get("SA_DYNAMO_URL", "dynamodb+aiolocal://"), dynamodb_scan="error")
sessions = async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    yield
    await engine.dispose()


app = FastAPI(lifespan=lifespan)


async def session() -> AsyncIterator[AsyncSession]:
    async with sessions() as opened:
        yield opened


Session = Annotated[AsyncSession, Depends(session)]


def shown(order: Order) -> OrderOut:
    return OrderOut(customer_id=order.customer_id, order_id=order.order_id, total=order.total)


@app.post("/customers/{customer_id}/orders", status_code=201)
async def add_order(customer_id: str, order: OrderIn, db: Session) -> OrderOut:
    added = Order(customer_id=customer_id, order_id=order.order_id, total=order.total)
    db.add(added)
    try:
        await db.commit()
    except IntegrityError:  # INSERT never overwrites: the key is taken
        raise HTTPException(
            409, f"customer {customer_id!r} has an order {order.order_id!r} already"
        ) from None
    return shown(added)


@app.get("/customers/{customer_id}/orders/{order_id}")
async def get_order(customer_id: str, order_id: str, db: Session) -> OrderOut:
    order = await db.get(Order, (customer_id, order_id))
    if order is None:
        raise HTTPException(404, f"no order {order_id!r} for customer {customer_id!r}")
    return shown(order)


@app.get("/customers/{customer_id}/orders")
async def list_orders(customer_id: str, db: Session, size: int = 10, after: str | None = None) -> OrdersPage:
    """One page of a customer's orders (a Query on the partition); ``next`` fetches the next."""
    query = select(Order).where(Order.customer_id == customer_id)
    try:
        page = await db.run_sync(sa_dynamo.paginate, query, size, after)
    except sa_dynamo.exc.InvalidPageToken:  # altered, or from another query
        raise HTTPException(400, "the page token is not one this list gave: start again without it") from None
    return OrdersPage(orders=[shown(order) for order in page.rows], next=page.next)


@app.post("/customers/{customer_id}/orders/{order_id}/add")
async def add_to_total(customer_id: str, order_id: str, amount: int) -> OrderOut:
    """Concurrent calls all land: a lost race (the version check) is retried."""

    async def add(db: AsyncSession) -> Order:
        order = await db.get(Order, (customer_id, order_id))
        if order is None:
            raise HTTPException(404, f"no order {order_id!r} for customer {customer_id!r}")
        order.total += amount
        return order

    return shown(await sa_dynamo.run_async_transaction(sessions, add))
