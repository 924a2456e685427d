"""A read leaves no reference cycle behind: its execution context, cursor and pages are freed by
reference counting when the read is done, as on SQLite. A cycle per read left them all to Python's
cyclic garbage collector: under 32 asyncio tasks, whose reads are in flight when a young
collection runs, they survived into the oldest generation and forced full collections of the
whole process (issue 28's W7). Each test runs on both drivers (the engine fixture)."""

from __future__ import annotations

import gc
import uuid
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = f"cycles_{uuid.uuid4().hex[:8]}"
    pk: Mapped[str] = mapped_column(primary_key=True)
    sk: Mapped[str] = mapped_column(primary_key=True)
    text: Mapped[str]


@pytest.fixture(scope="module")
def notes(engine) -> Iterator[None]:
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Note(pk="P", sk=f"{i}", text=f"note {i}") for i in range(3)])
        session.commit()
    yield
    Base.metadata.drop_all(engine)


def contexts_left(engine: Any, read: Callable[[], Any]) -> list[Any]:
    """The execution contexts of ``read``'s statements still alive once it returned, the cyclic
    garbage collector held off meanwhile (so only reference counting frees anything)."""
    contexts: list[weakref.ref] = []

    def seen(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        contexts.append(weakref.ref(context))

    event.listen(engine, "after_cursor_execute", seen)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        read()
        alive = [context() for context in contexts if context() is not None]
    finally:
        if was_enabled:
            gc.enable()
        event.remove(engine, "after_cursor_execute", seen)
    assert contexts, "the read executed nothing"
    return alive


def test_session_get_leaves_no_cycle(engine, notes):
    with Session(engine) as session:
        session.get(Note, ("P", "1"))  # the statement compiled and cached first

        def read() -> None:
            assert session.get(Note, ("P", "2")).text == "note 2"

        session.expunge_all()
        assert contexts_left(engine, read) == []


def test_core_point_read_leaves_no_cycle(engine, notes):
    with engine.connect() as connection:

        def read() -> None:
            row = connection.execute(select(Note.text).where(Note.pk == "P", Note.sk == "0")).one()
            assert row.text == "note 0"

        assert contexts_left(engine, read) == []


def test_read_in_a_transaction_that_wrote_leaves_no_cycle(engine, notes):
    """The read whose items are tested against the transaction's own writes (the test the
    cursor holds is what made the cycle): its result still sees the write."""
    with Session(engine) as session:
        session.add(Note(pk="P", sk="new", text="written"))
        session.flush()

        def read() -> None:
            texts = session.scalars(select(Note.text).where(Note.pk == "P", Note.sk == "new")).all()
            assert texts == ["written"]

        assert contexts_left(engine, read) == []
        session.rollback()
