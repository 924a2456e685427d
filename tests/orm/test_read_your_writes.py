"""A transaction reads its own writes: rows added, changed or deleted and not yet committed are
seen by every read of the same transaction as SQL says (autoflush, then query), and by nobody else."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Table, delete, func, select, text, update
from sqlalchemy.exc import NotSupportedError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from support.sent import observed
from support.staff import Employee, Engineer, Manager, staff_table

import sa_dynamo


class Base(DeclarativeBase):
    pass


class Note(Base):
    """An item collection: notes of one owner, sorted by their number."""

    __tablename__ = f"ryw_notes_{uuid.uuid4().hex[:8]}"
    owner: Mapped[str] = mapped_column(primary_key=True)
    n: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str | None]
    tag: Mapped[str | None] = mapped_column(index=True)


@pytest.fixture
def tables(engine):
    Base.metadata.create_all(engine)
    with staff_table(engine):
        with Session(engine) as session:
            session.add_all(
                Note(owner="o", n=n, body=f"b{n}", tag="t" if n % 2 else None) for n in (1, 2, 3, 5)
            )
            session.commit()
        yield
    Base.metadata.drop_all(engine)


def notes(session: Session, *where, order=None, limit=None) -> list[tuple[int, str | None]]:
    query = select(Note.n, Note.body).where(Note.owner == "o", *where)
    if order is not None:
        query = query.order_by(order)
    if limit is not None:
        query = query.limit(limit)
    return [tuple(row) for row in session.execute(query)]


def test_an_added_object_is_found_by_a_query_in_the_same_session(engine, tables):
    with Session(engine) as session:
        session.add(Engineer(id=4, name="Patrick", language="go"))
        found = session.scalars(
            select(Engineer).where(Engineer.name == "Patrick").execution_options(dynamodb_scan="allow")
        ).all()
        assert [(e.id, e.language) for e in found] == [(4, "go")]
        session.expunge_all()
        assert session.get(Employee, 4).name == "Patrick"
        assert session.get(Manager, 4) is None  # another kind: the discriminator filter holds
    with Session(engine) as other:  # nobody else sees it before the commit
        assert other.get(Employee, 4) is None


def test_a_deleted_object_disappears_and_a_changed_one_shows_its_new_values(engine, tables):
    with Session(engine) as session:
        session.delete(session.get(Note, ("o", 2)))
        session.get(Note, ("o", 3)).body = "changed"
        session.flush()
        assert notes(session) == [(1, "b1"), (3, "changed"), (5, "b5")]
        assert notes(session, Note.body == "b3") == []  # moved out of the WHERE
        assert notes(session, Note.body == "changed") == [(3, "changed")]


def test_order_by_and_limit_hold_after_the_merge(engine, tables):
    with Session(engine) as session:
        session.add_all([Note(owner="o", n=4, body="b4"), Note(owner="o", n=0, body="b0")])
        session.add(Note(owner="other", n=3, body="elsewhere"))
        session.flush()
        assert notes(session) == [(0, "b0"), (1, "b1"), (2, "b2"), (3, "b3"), (4, "b4"), (5, "b5")]
        assert notes(session, order=Note.n.desc(), limit=3) == [(5, "b5"), (4, "b4"), (3, "b3")]
        assert notes(session, Note.n.between(2, 4), order=Note.n.desc()) == [(4, "b4"), (3, "b3"), (2, "b2")]
        assert notes(session, Note.n > 3, limit=1) == [(4, "b4")]


def test_count_and_a_sparse_index_see_the_writes(engine, tables):
    with Session(engine) as session:
        session.add(Note(owner="o", n=7, body="b7", tag="t"))
        session.get(Note, ("o", 1)).tag = None  # leaves the sparse index
        session.flush()
        count = select(func.count()).select_from(Note).where(Note.owner == "o")
        assert session.scalar(count) == 5
        assert session.scalar(select(func.count(Note.tag)).where(Note.owner == "o")) == 3
        tagged = session.scalars(select(Note.n).where(Note.tag == "t")).all()
        assert sorted(tagged) == [3, 5, 7]


def test_core_writes_and_sql_text_reads_in_one_transaction(engine, tables):
    notes_table: Table = Note.__table__
    with engine.begin() as conn:
        conn.execute(notes_table.insert().values(owner="o", n=9, body="b9"))
        assert (
            conn.execute(
                update(notes_table).where(notes_table.c.owner == "o", notes_table.c.n == 1).values(body="x")
            ).rowcount
            == 1
        )
        assert (
            conn.execute(delete(notes_table).where(notes_table.c.owner == "o", notes_table.c.n == 2)).rowcount
            == 1
        )
        rows = conn.execute(
            text(f'SELECT n, body FROM "{notes_table.name}" WHERE owner = :o AND n >= :low'),
            {"o": "o", "low": 1},
        ).all()
        assert [tuple(r) for r in rows] == [(1, "x"), (3, "b3"), (5, "b5"), (9, "b9")]
        driver_sql = f'SELECT n FROM "{notes_table.name}" WHERE owner = ? AND n <= ? ORDER BY n DESC'
        assert conn.exec_driver_sql(driver_sql, ("o", 3)).scalars().all() == [3, 1]
        # an UPDATE tests its WHERE on the item as the transaction left it
        again = update(notes_table).where(
            notes_table.c.owner == "o", notes_table.c.n == 1, notes_table.c.body == "b1"
        )
        assert conn.execute(again.values(body="y")).rowcount == 0
        then = update(notes_table).where(
            notes_table.c.owner == "o", notes_table.c.n == 1, notes_table.c.body == "x"
        )
        assert conn.execute(then.values(body="z")).rowcount == 1
        assert (
            conn.execute(delete(notes_table).where(notes_table.c.owner == "o", notes_table.c.n == 2)).rowcount
            == 0
        )
    with engine.connect() as conn:
        stored = conn.execute(
            select(notes_table.c.n, notes_table.c.body).where(notes_table.c.owner == "o")
        ).all()
    assert [tuple(r) for r in stored] == [(1, "z"), (3, "b3"), (5, "b5"), (9, "b9")]


def test_rollback_forgets_the_writes(engine, tables):
    with Session(engine) as session:
        session.add(Note(owner="o", n=8, body="b8"))
        session.flush()
        assert (8, "b8") in notes(session)
        session.rollback()
        assert (8, "b8") not in notes(session)


def test_paginate_refuses_rather_than_miss_the_writes(engine, tables):
    with Session(engine) as session:
        session.add(Note(owner="o", n=8, body="b8"))
        session.flush()
        with pytest.raises(NotSupportedError, match="paginate"):
            sa_dynamo.paginate(session, select(Note).where(Note.owner == "o"), page_size=2)


@pytest.fixture
def requests(engine):
    """The operations DynamoDB receives, with the statement of each ExecuteStatement."""
    with engine.connect() as conn:
        connection = conn.connection.dbapi_connection
    with observed(
        connection, lambda operation, body, _: f"{operation} {body.get('Statement', '')}".strip()
    ) as seen:
        yield seen


def test_what_the_overlay_costs(engine, tables, requests):
    notes_table, staff = Note.__tablename__, Employee.__tablename__
    with Session(engine) as session:
        loaded = session.scalars(select(Note).where(Note.owner == "o", Note.n < 3)).all()
        for note in loaded:
            note.body = "changed"
        assert session.get(Employee, 1).name == "Ann"  # another table: no flush, no overlay
        assert notes(session) == [(1, "changed"), (2, "changed"), (3, "b3"), (5, "b5")]
        assert notes(session, Note.n == 2) == [(2, "changed")]  # the committed items are read once
        session.rollback()
    assert requests == [
        f'ExecuteStatement SELECT "owner", "n", "body", "tag" FROM "{notes_table}" WHERE "owner" = ? AND "n" < ?',
        f'ExecuteStatement SELECT "id", "name", "$type", "language", "reports" FROM "{staff}" '
        'WHERE "id" = ? AND ("$type" IN [?, ?, ?])',
        "BatchGetItem",
        f'ExecuteStatement SELECT * FROM "{notes_table}" WHERE "owner" = ?',
        f'ExecuteStatement SELECT * FROM "{notes_table}" WHERE "owner" = ? AND "n" = ?',
    ]


def test_conditional_updates_of_one_item_in_one_transaction(engine, tables):
    with Session(engine) as session:
        first = update(Note).where(Note.owner == "o", Note.n == 3, Note.tag == "t").values(body="one")
        assert session.execute(first).rowcount == 1
        second = update(Note).where(Note.owner == "o", Note.n == 3, Note.body == "one").values(tag="u")
        assert session.execute(second).rowcount == 1
        stale = update(Note).where(Note.owner == "o", Note.n == 3, Note.tag == "t").values(body="two")
        assert session.execute(stale).rowcount == 0  # the tag is "u" now
        session.commit()
    with Session(engine) as session:
        note = session.get(Note, ("o", 3))
        assert (note.body, note.tag) == ("one", "u")


def test_key_lists_and_client_sorts_see_the_writes(engine, tables):
    from sqlalchemy import tuple_

    with Session(engine) as session:
        session.add(Note(owner="o", n=4, body="a4"))
        session.delete(session.get(Note, ("o", 1)))
        session.get(Note, ("o", 5)).body = "a5"
        session.flush()
        keys = [("o", 1), ("o", 4), ("o", 5), ("o", 9)]
        listed = select(Note.n, Note.body).where(tuple_(Note.owner, Note.n).in_(keys))
        assert sorted(tuple(r) for r in session.execute(listed)) == [(4, "a4"), (5, "a5")]
        assert session.scalars(listed.with_only_columns(Note.n).where(Note.body == "a5")).all() == [5]
        by_body = (
            select(Note.n)
            .where(Note.owner == "o")
            .order_by(Note.body.desc())
            .execution_options(dynamodb_client_sort=100)
        )
        assert session.scalars(by_body).all() == [3, 2, 5, 4]
