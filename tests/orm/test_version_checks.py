"""``version_id_col`` checked at the flush: SQLAlchemy raises StaleDataError from the flush whose
UPDATE or DELETE matched nothing (code that wraps ``session.flush()`` relies on it, as
SQLAlchemy's versioned_history example does), in the words it uses on SQLite. The items of a
flush's versioned writes are read once for it (one BatchGetItem, of any tables), counted in the
capacity; the version stays the commit's condition, for a change between flush and commit."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import Integer, String, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.orm.exc import StaleDataError
from support.sent import operations_sent

import sa_dynamo


def make_models(suffix: str) -> SimpleNamespace:
    class Base(DeclarativeBase):
        pass

    class Page(Base):
        __tablename__ = f"pages_{suffix}"
        pk: Mapped[str] = mapped_column(String, primary_key=True)
        sk: Mapped[str] = mapped_column(String, primary_key=True)
        title: Mapped[str]
        version: Mapped[int] = mapped_column(Integer, nullable=False)
        __mapper_args__ = {"version_id_col": version}

    class Tag(Base):
        __tablename__ = f"tags_{suffix}"
        name: Mapped[str] = mapped_column(String, primary_key=True)
        uses: Mapped[int]
        version: Mapped[int] = mapped_column(Integer, nullable=False)
        __mapper_args__ = {"version_id_col": version}

    return SimpleNamespace(Base=Base, Page=Page, Tag=Tag)


@pytest.fixture(scope="module")
def models(engine: Any) -> Iterator[SimpleNamespace]:
    models = make_models(uuid.uuid4().hex[:8])
    models.Base.metadata.create_all(engine)
    yield models
    models.Base.metadata.drop_all(engine)
    models.Base.registry.dispose()


@pytest.fixture
def sqlite(models: SimpleNamespace, tmp_path: Any) -> Iterator[Any]:
    """The same tables in SQLite, in a file: two sessions see each other's commits."""
    engine = create_engine(f"sqlite:///{tmp_path / 'versions.db'}")
    models.Base.metadata.create_all(engine)
    yield engine
    engine.dispose()


def lost_update(bind: Any, models: SimpleNamespace, pk: str, change: Callable[[Session, Any], None]) -> str:
    """Two sessions load one page; the first commits a new title; the second changes its copy
    (``change``) and flushes, as SQLAlchemy's versioned_history example does: what flush() raised."""
    Page = models.Page
    with Session(bind) as session, session.begin():
        session.add(Page(pk=pk, sk="v", title="first"))
    with Session(bind) as first, Session(bind) as second:
        mine, theirs = first.get(Page, (pk, "v")), second.get(Page, (pk, "v"))
        mine.title = "mine"
        first.commit()
        change(second, theirs)
        try:
            second.flush()
        except StaleDataError as error:
            second.rollback()
            return str(error)
        return "flushed"


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda session, page: setattr(page, "title", "theirs"), id="update"),
        pytest.param(lambda session, page: session.delete(page), id="delete"),
    ],
)
def test_a_stale_versioned_write_raises_at_the_flush_as_on_sqlite(engine, sqlite, models, change):
    pk = f"P#{uuid.uuid4().hex[:6]}"
    on_dynamodb = lost_update(engine, models, pk, change)
    assert on_dynamodb == lost_update(sqlite, models, pk, change)
    assert "expected to" in on_dynamodb and "0 were matched." in on_dynamodb  # raised by flush()
    with Session(engine) as session:
        assert session.get(models.Page, (pk, "v")).title == "mine"  # nothing of theirs written


def test_a_flush_reads_its_versioned_items_once(engine, models):
    """Three versioned UPDATEs of two tables and a versioned DELETE in one flush: one
    BatchGetItem for them all, by the first write; capacity() counts its read units."""
    Page, Tag = models.Page, models.Tag
    pk = f"P#{uuid.uuid4().hex[:6]}"
    with Session(engine) as session, session.begin():
        session.add_all([Page(pk=pk, sk=str(n), title=f"t{n}") for n in range(3)])
        session.add(Tag(name=pk, uses=0))
    with Session(engine) as session:
        pages = [session.get(Page, (pk, str(n))) for n in range(3)]
        tag = session.get(Tag, pk)
        pages[0].title, pages[1].title, tag.uses = "a", "b", 1
        session.delete(pages[2])
        connection = session.connection().connection.dbapi_connection
        with sa_dynamo.capacity(session) as used, operations_sent(connection) as sent:
            session.flush()
        assert sent == ["BatchGetItem"]
        assert used.read_units > 0
        with operations_sent(connection) as sent:
            session.commit()
        assert sent == ["ExecuteTransaction"]
    with Session(engine) as session:
        assert [session.get(Page, (pk, str(n))) is None for n in range(3)] == [False, False, True]
        assert (session.get(Page, (pk, "0")).version, session.get(Tag, pk).uses) == (2, 1)


def test_a_flush_of_new_and_unchanged_objects_reads_nothing(engine, models):
    """An object inserted in this transaction and updated by a later flush is tested on its
    held write; an unchanged one is written by no flush."""
    Page = models.Page
    pk = f"P#{uuid.uuid4().hex[:6]}"
    with Session(engine) as session:
        page = Page(pk=pk, sk="v", title="new")
        session.add(page)
        session.flush()
        connection = session.connection().connection.dbapi_connection
        with operations_sent(connection) as sent:
            page.title = "newer"
            session.flush()
            session.flush()
        assert sent == []
        session.commit()
    with Session(engine) as session:
        assert (session.get(Page, (pk, "v")).title, session.get(Page, (pk, "v")).version) == ("newer", 2)


def test_a_change_between_flush_and_commit_still_fails_the_commit(engine, models):
    Page = models.Page
    pk = f"P#{uuid.uuid4().hex[:6]}"
    with Session(engine) as session, session.begin():
        session.add(Page(pk=pk, sk="v", title="first"))
    with Session(engine) as first, Session(engine) as second:
        mine, theirs = first.get(Page, (pk, "v")), second.get(Page, (pk, "v"))
        theirs.title = "theirs"
        second.flush()  # still matches
        mine.title = "mine"
        first.commit()
        with pytest.raises(StaleDataError, match="matched no item at commit"):
            second.commit()
    with Session(engine) as session:
        assert session.get(Page, (pk, "v")).title == "mine"
