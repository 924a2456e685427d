"""UPDATE and DELETE by any WHERE: the keys of the matching items are read (a planned read,
under the scan policy), then each item is written by its key with the WHERE as its condition.
Rowcounts and final tables are compared with SQLite running the same statements; the requests
are counted; a concurrent change between the read and the commit is a StaleDataError."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    create_engine,
    delete,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import registry  # noqa: F401  (the dialect is registered by the package)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.orm.exc import StaleDataError
from support.sent import requests_built

import sa_dynamo
from sa_dynamo.dialect.base import DynamoDBDialect

ROWS = [
    {"pk": f"P{i % 4}", "sk": f"{i:03}", "n": None if i % 6 == 0 else i % 7, "s": "xyz"[i % 3]}
    for i in range(48)
]
ALLOW = {"dynamodb_scan": "allow"}


def make_table(name: str) -> Table:
    return Table(
        name,
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
        Column("s", String),
    )


@pytest.fixture
def databases(engine: Engine, table_name: str) -> Iterator[tuple[Engine, Engine, Table]]:
    """DynamoDB Local and SQLite holding the same rows, for one test."""
    table = make_table(table_name)
    sqlite = create_engine("sqlite://")
    for each in (engine, sqlite):
        table.metadata.create_all(each)
        with each.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(table.insert(), ROWS)
    yield engine, sqlite, table
    table.metadata.drop_all(engine)
    sqlite.dispose()


def contents(engine: Engine, table: Table) -> list[tuple]:
    with engine.connect() as conn:
        return sorted(tuple(row) for row in conn.execute(select(table).execution_options(**ALLOW)))


def both(databases: tuple[Engine, Engine, Table], statements: Any, autocommit: bool) -> list[int]:
    """Run the statements on both databases (in one transaction, or each on its own); their
    rowcounts, which must agree, as must the tables afterwards."""
    dynamodb, sqlite, table = databases
    counts = []
    for engine in (dynamodb, sqlite):
        options = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
        with engine.connect().execution_options(**options) as conn:
            counts.append([conn.execute(s(table).execution_options(**ALLOW)).rowcount for s in statements])
            if not autocommit:
                conn.commit()
    assert counts[0] == counts[1]
    assert contents(dynamodb, table) == contents(sqlite, table)
    return counts[0]


WHERES = [
    lambda t: t.c.n > 3,
    lambda t: t.c.n.is_(None),
    lambda t: t.c.pk == "P1",
    lambda t: (t.c.pk == "P2") & (t.c.sk > "020") & (t.c.s != "x"),
    lambda t: t.c.pk.in_(["P0", "P3"]) & t.c.n.not_in([1, 2]),
    lambda t: or_(t.c.s == "y", t.c.n == 0),
    lambda t: t.c.sk.startswith("01"),
    lambda t: t.c.n == 99,  # matches nothing
]


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
@pytest.mark.parametrize("where", range(len(WHERES)))
def test_update_and_delete_by_any_where_like_sqlite(databases, where, autocommit):
    condition = WHERES[where]
    counts = both(
        databases,
        [
            lambda t: update(t).where(condition(t)).values(s="new", n=None),
            lambda t: delete(t).where(condition(t) | (t.c.s == "y")),
        ],
        autocommit,
    )
    assert min(counts) >= 0  # exact, never unknown


def test_an_executemany_by_where_counts_every_row(databases):
    dynamodb, sqlite, table = databases
    statement = update(table).where(table.c.n == bindparam("old")).values(s=bindparam("new"))
    rows = [{"old": 1, "new": "one"}, {"old": 2, "new": "two"}, {"old": 9, "new": "none"}]
    got = []
    for engine in (dynamodb, sqlite):
        with engine.connect() as conn:
            got.append(conn.execute(statement.execution_options(**ALLOW), rows).rowcount)
            conn.commit()
    assert got[0] == got[1] == 12
    assert contents(dynamodb, table) == contents(sqlite, table)


def test_the_program_is_a_read_then_writes_by_key():
    table = make_table("things")
    compiled = update(table).where(table.c.n > 3, table.c.pk.in_(["a", "b"])).values(s="x")
    compiled = compiled.compile(dialect=DynamoDBDialect())
    assert (
        compiled.string
        == (
            'SELECT "pk", "sk" FROM "things" WHERE "pk" IN [?, ...] AND ("n" > ?);\n'
            'UPDATE "things" SET "s" = ? WHERE "pk" = ? AND "sk" = ? AND ("n" > ?)'  # the key decided: pk IN left out
        )
    )
    plan = compiled.record.plan
    assert plan.operation == "UpdateItem"
    assert [(s.operation, s.reason) for s in plan.steps] == [
        ("Query", "the keys of the items the WHERE matches"),
        ("UpdateItem", "one UPDATE for each key read, the WHERE its condition"),
    ]
    deleted = delete(table).where(table.c.s.is_(None)).compile(dialect=DynamoDBDialect())
    assert deleted.string == (
        'SELECT "pk", "sk" FROM "things" WHERE ("s" IS NULL OR "s" IS MISSING);\n'
        'DELETE FROM "things" WHERE "pk" = ? AND "sk" = ? AND (("s" IS NULL OR "s" IS MISSING)) '
        "RETURNING ALL OLD *"
    )
    assert deleted.record.plan.steps[0].reason.startswith(
        "the keys of the items the WHERE matches; the WHERE has no"
    )


def test_explain_shows_both_steps(databases):
    dynamodb, _, table = databases
    plan = sa_dynamo.explain(dynamodb, update(table).where(table.c.s == "x").values(n=1))
    text = str(plan)
    assert "step 1:\n  operation:     Scan" in text
    assert "step 2:\n  operation:     UpdateItem" in text
    assert contents(dynamodb, table) == sorted(tuple(r.values()) for r in ROWS)  # nothing sent


def test_in_a_transaction_one_read_and_one_action_per_match(databases):
    dynamodb, _, table = databases
    with dynamodb.connect() as conn, requests_built(conn) as sent:
        count = conn.execute(update(table).where(table.c.pk == "P1", table.c.n > 2).values(s="q")).rowcount
        assert [operation for operation, _ in sent] == ["ExecuteStatement"]  # the read; the writes wait
        conn.commit()
    assert count == 7
    assert [operation for operation, _ in sent] == ["ExecuteStatement", "ExecuteTransaction"]
    assert len(sent[1][1]["TransactStatements"]) == count


def test_in_autocommit_the_writes_go_25_a_batch(databases):
    dynamodb, _, table = databases
    with (
        dynamodb.connect().execution_options(isolation_level="AUTOCOMMIT") as conn,
        requests_built(conn) as sent,
    ):
        count = conn.execute(
            update(table).where(table.c.s != "z").values(n=5).execution_options(**ALLOW)
        ).rowcount
    assert count == 32
    assert [operation for operation, _ in sent] == [
        "ExecuteStatement",
        "BatchExecuteStatement",
        "BatchExecuteStatement",
    ]


def test_a_change_between_the_read_and_the_commit_is_stale_and_nothing_is_written(databases):
    dynamodb, _, table = databases
    before = contents(dynamodb, table)
    with dynamodb.connect() as conn:
        assert (
            conn.execute(update(table).where(table.c.pk == "P3", table.c.s == "x").values(n=100)).rowcount
            == 4
        )
        with dynamodb.connect().execution_options(isolation_level="AUTOCOMMIT") as other:
            other.execute(update(table).where(table.c.pk == "P3", table.c.sk == "003").values(s="moved"))
        with pytest.raises(StaleDataError, match="matched no item at commit"):
            conn.commit()
    after = contents(dynamodb, table)
    assert [row for row in after if row[2] == 100] == []
    assert len([row for row in before if row != tuple(r for r in row)]) == 0


def test_an_item_written_by_two_statements_must_still_match_both_at_commit(databases):
    """Each statement's WHERE holds apart in the one action the item commits as: an OR in one
    does not swallow the other's condition, so an item changed meanwhile to match only the
    second is a StaleDataError, not deleted."""
    dynamodb, _, table = databases
    first = table.c.pk == "P1", table.c.sk < "005"  # the one item P1/001, n=1
    with dynamodb.connect() as conn:
        conn.execute(update(table).where(*first, or_(table.c.n == 1, table.c.n == 0)).values(s="q"))
        assert conn.execute(delete(table).where(*first, or_(table.c.n == 1, table.c.n == 5))).rowcount == 1
        with dynamodb.connect().execution_options(isolation_level="AUTOCOMMIT") as other:
            other.execute(update(table).where(table.c.pk == "P1", table.c.sk == "001").values(n=5))
        with pytest.raises(StaleDataError, match="matched no item at commit"):
            conn.commit()
    assert ("P1", "001", 5, "y") in contents(dynamodb, table)


def rounds(lo: int, hi: int, who: str, gone: list[str]) -> list[Any]:
    """An UPDATE by a WHERE with an IN list (which an executemany of its writes cannot take,
    so the list is written out), a DELETE by another, the same UPDATE again."""

    def again(t: Table) -> Any:
        return update(t).where(or_(t.c.n.between(lo, hi), t.c.s == who), t.c.n.not_in([0])).values(s="w")

    return [again, lambda t: delete(t).where(t.c.s.in_(gone)), again]


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
def test_the_writes_take_this_executions_values(databases, autocommit):
    """The writes by key of a statement compiled once (SQLAlchemy's cache) carry the values of
    each execution, not of the first: an IN list written out for the executemany of the writes
    kept the other conditions' values it was compiled with, which failed the writes (AUTOCOMMIT:
    rows missing from the rowcount; a transaction: a StaleDataError at commit)."""
    assert both(databases, rounds(5, 6, "x", ["y"]), autocommit)[0] > 0
    assert both(databases, rounds(1, 2, "z", ["x", "w"]), autocommit)[0] > 0


class Base(DeclarativeBase):
    pass


class Person(Base):
    __tablename__ = f"by_read_people_{uuid.uuid4().hex[:8]}"
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str]
    name: Mapped[str]
    fullname: Mapped[str | None]
    tier: Mapped[int | None]
    __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "person"}


class Member(Person):
    __mapper_args__ = {"polymorphic_identity": "member"}


def test_a_subclass_updated_deleted_and_updated_again_commits_like_sqlite(engine):
    """Issue 40's sequence on a subclass, whose writes carry the discriminator's IN list: run
    with other values first, it commits and leaves what SQLite leaves, no StaleDataError."""

    def sequence(session: Session, lo: int, hi: int, who: str, gone: list[str]) -> list[int]:
        changed = update(Member).where(Member.tier.between(lo, hi) | (Member.name == who))
        options = {"synchronize_session": False, **ALLOW}
        changed = changed.values(fullname=None).execution_options(**options)
        removed = delete(Member).where(Member.name.in_(gone)).execution_options(**options)
        counts = [session.execute(s).rowcount for s in (changed, removed, changed)]
        session.commit()
        return counts

    names = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]
    sqlite, got = create_engine("sqlite://"), []
    for each in (sqlite, engine):
        Base.metadata.create_all(each)
        with Session(each) as session:
            session.add_all(
                [Member(id=i, name=n, fullname=n.upper(), tier=i % 4) for i, n in enumerate(names)]
            )
            session.commit()
            counts = [
                sequence(session, 3, 3, "eve", ["fay", "gus"]),
                sequence(session, 1, 2, "dee", ["ann", "cy"]),
            ]
            rows = sorted(
                (m.id, m.fullname) for m in session.scalars(select(Member).execution_options(**ALLOW))
            )
            got.append((counts, rows))
        Base.metadata.drop_all(each)
    sqlite.dispose()
    assert got[0] == got[1]
    assert min(got[1][0][1]) > 0  # the second sequence updated and deleted rows


def test_a_transaction_writes_by_where_over_what_it_wrote(databases):
    """The read sees the transaction's own writes; an item it wrote is tested on its image."""
    counts = both(
        databases,
        [
            lambda t: t.insert().values(pk="P9", sk="900", n=5, s="x"),
            lambda t: update(t).where(t.c.pk == "P0", t.c.sk == "004").values(n=50),
            lambda t: update(t).where(t.c.n >= 5).values(s="big"),
            lambda t: delete(t).where(t.c.s == "big", t.c.pk.in_(["P9", "P0"])),
        ],
        False,
    )
    assert counts[2] > 0 and counts[3] >= 2


def test_the_scan_policy_holds_and_nothing_is_written(databases):
    dynamodb, _, table = databases
    with dynamodb.connect() as conn, pytest.raises(sa_dynamo.exc.ScanNotAllowed):
        conn.execute(
            update(table).where(table.c.n == 1).values(s="x").execution_options(dynamodb_scan="error")
        )
    assert contents(dynamodb, table) == sorted(tuple(r.values()) for r in ROWS)


def test_more_than_a_hundred_matches_is_the_transactions_clear_error(databases):
    dynamodb, _, table = databases
    with dynamodb.connect() as conn:
        conn.execute(table.insert(), [{"pk": "P8", "sk": f"{i:03}", "n": 1} for i in range(100)])
        conn.commit()
        assert (
            conn.execute(
                update(table).where(table.c.n == 1).values(s="x").execution_options(**ALLOW)
            ).rowcount
            > 100
        )
        with pytest.raises(Exception, match="at most 100"):
            conn.commit()
