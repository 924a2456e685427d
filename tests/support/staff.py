"""The employees of the transaction tests: a ``sa_dynamo.SingleTable`` hierarchy (discriminator
``$type``) keyed by an int ``id``, and the two rows those tests start from."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo


class StaffBase(DeclarativeBase):
    pass


class Employee(sa_dynamo.SingleTable, StaffBase):
    __tablename__ = f"staff_{uuid.uuid4().hex[:8]}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]


class Engineer(Employee):
    language: Mapped[str | None]


class Manager(Employee):
    reports: Mapped[int | None]


@contextmanager
def staff_table(engine) -> Iterator[None]:
    """The table, holding engineer Ann (id 1) and manager Bob (id 2), dropped afterwards."""
    StaffBase.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Engineer(id=1, name="Ann", language="py"), Manager(id=2, name="Bob", reports=3)])
        session.commit()
    try:
        yield
    finally:
        StaffBase.metadata.drop_all(engine)
