"""Differential transactions: seeded random sequences of ORM and Core work (add, change, delete,
reads of every kind, flush, commit, rollback) over a single-table-inheritance model, run in
lockstep on SQLite and on DynamoDB Local. Every read returns the same rows, every rowcount is
equal, every error happens on both sides or neither, and after each sequence the tables hold
the same items. Inside a transaction that is the read-your-own-writes guarantee.

The model has a UNIQUE column drawn from a few values, written by adds, ORM changes and UPDATEs
by key and by any WHERE (several rows at once), inside the transactions and, after each
sequence, in AUTOCOMMIT: a statement that takes a held value fails at that statement on both
sides, whatever follows it, and changes nothing.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, String, create_engine, delete, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

SEQUENCES = 300
SEED = 20261126
GROUPS = ("g0", "g1", "g2")
NUMBERS = range(8)
NAMES = ("ann", "bob", "cid", "dee", "al")
CODES = (None, None, "c1", "c2", "c3")  # the UNIQUE column's values: NULL often, collisions often
AUTOCOMMIT_STEPS = 2  # UPDATEs run in AUTOCOMMIT after each sequence
SCAN = {"dynamodb_scan": "allow"}  # the UPDATEs by any WHERE read whole partitions or the table


class Base(DeclarativeBase):
    pass


class Entry(Base):
    __tablename__ = f"entries_{uuid.uuid4().hex[:8]}"
    group: Mapped[str] = mapped_column(String, primary_key=True)
    n: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str]
    name: Mapped[str]
    score: Mapped[int | None]
    code: Mapped[str | None] = mapped_column(String, unique=True)
    __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "entry"}


class Task(Entry):
    done: Mapped[bool | None]
    __mapper_args__ = {"polymorphic_identity": "task"}


class Memo(Entry):
    body: Mapped[str | None]
    __mapper_args__ = {"polymorphic_identity": "memo"}


CLASSES = (Entry, Task, Memo)


def observed(obj: Entry | None) -> tuple | None:
    """What a read shows of an object: its class and every attribute."""
    if obj is None:
        return None
    extra = getattr(obj, "done", None) if isinstance(obj, Task) else getattr(obj, "body", None)
    return (type(obj).__name__, obj.group, obj.n, obj.name, obj.score, obj.code, extra)


@dataclass
class Model:
    """The keys each side holds, as the judge (SQLite) reports them: committed and in the
    transaction. The generator draws from it, so both sides get the same steps."""

    committed: set[tuple[str, int]] = field(default_factory=set)
    current: set[tuple[str, int]] = field(default_factory=set)


Step = tuple[str, Callable[[Session], Any], Callable[[Any, Model], None]]


def no_change(result: Any, model: Model) -> None:
    pass


def steps(rng: random.Random, model: Model) -> Iterator[Step]:
    """An endless stream of (description, action on a session, how the action's judged result
    changes the model)."""
    while True:
        yield _step(rng, model)


def _existing(rng: random.Random, model: Model) -> tuple[str, int] | None:
    return rng.choice(sorted(model.current)) if model.current else None


def _step(rng: random.Random, model: Model) -> Step:
    choice = rng.choice(
        ["add"] * 4
        + ["orm_update"] * 2
        + ["core_update"] * 3
        + ["bulk_update"] * 3
        + ["orm_delete", "core_delete"] * 2
        + ["get", "partition", "ordered", "count", "subclass", "flush"] * 2
        + ["commit", "rollback"]
    )
    group, number = rng.choice(GROUPS), rng.choice(NUMBERS)
    existing = _existing(rng, model)
    if choice == "add":
        free = [(g, n) for g in GROUPS for n in NUMBERS if (g, n) not in model.current]
        if not free:
            return "flush", lambda s: s.flush(), no_change
        key = rng.choice(free)
        cls = rng.choice(CLASSES)
        fields = {
            "name": rng.choice(NAMES),
            "score": rng.choice([None, 1, 2, 3, 5]),
            "code": rng.choice(CODES),
        }
        if cls is Task:
            fields["done"] = rng.choice([None, True, False])
        elif cls is Memo:
            fields["body"] = rng.choice([None, "x", "yz"])

        def add(s: Session) -> None:
            s.add(cls(group=key[0], n=key[1], **fields))

        return f"add {cls.__name__}{key} {fields}", add, lambda r, m: m.current.add(key)
    if choice == "orm_update" and existing is not None:
        score, name, code = rng.choice([None, 0, 2, 4]), rng.choice(NAMES), rng.choice(CODES)

        def change(s: Session) -> None:
            obj = s.get(Entry, existing)
            obj.score, obj.name, obj.code = score, name, code

        return f"orm update {existing} score={score} name={name} code={code}", change, no_change
    if choice == "core_update":
        key = existing if existing is not None and rng.random() < 0.8 else (group, number)
        cls = rng.choice(CLASSES)
        extra = rng.choice(
            [[], [cls.score > 1], [cls.score.is_(None)], [cls.name.startswith("a")], [cls.name == "bob"]]
        )
        score, code = rng.choice([None, 1, 7]), rng.choice(CODES)
        statement = (
            update(cls)
            .where(cls.group == key[0], cls.n == key[1], *extra)
            .values(score=score, code=code)
            .execution_options(synchronize_session="evaluate")
        )
        return (
            f"core {statement} {key} score={score} code={code}",
            lambda s: s.execute(statement).rowcount,
            no_change,
        )
    if choice == "bulk_update":
        statement, text = bulk_update(rng)
        return text, lambda s: s.execute(statement).rowcount, no_change
    if choice == "orm_delete" and existing is not None:

        def remove(s: Session) -> None:
            s.delete(s.get(Entry, existing))

        return f"orm delete {existing}", remove, lambda r, m: m.current.discard(existing)
    if choice == "core_delete":
        key = existing if existing is not None and rng.random() < 0.8 else (group, number)
        cls = rng.choice(CLASSES)
        extra = rng.choice([[], [cls.score < 3], [cls.name != "ann"]])
        statement = (
            delete(cls)
            .where(cls.group == key[0], cls.n == key[1], *extra)
            .execution_options(synchronize_session="evaluate")
        )

        def forget(rowcount: int, m: Model) -> None:
            if rowcount:
                m.current.discard(key)

        return f"core {statement} {key}", lambda s: s.execute(statement).rowcount, forget
    if choice == "get":
        key = existing if existing is not None and rng.random() < 0.7 else (group, number)
        cls = rng.choice(CLASSES)
        return f"get {cls.__name__}{key}", lambda s: observed(s.get(cls, key)), no_change
    if choice in ("partition", "subclass"):
        cls = rng.choice(CLASSES) if choice == "subclass" else Entry
        extra = rng.choice([[], [cls.score >= 2], [cls.score.is_(None)], [cls.name.in_(["ann", "al"])]])
        query = select(cls).where(cls.group == group, *extra)
        return (
            f"select {query} {group}",
            lambda s: sorted((observed(o) for o in s.scalars(query)), key=repr),
            no_change,
        )
    if choice == "ordered":
        query = (
            select(Entry).where(Entry.group == group).order_by(Entry.n.desc()).limit(rng.choice([1, 3, 10]))
        )
        return f"ordered {query} {group}", lambda s: [observed(o) for o in s.scalars(query)], no_change
    if choice == "count":
        extra = rng.choice([[], [Entry.score > 1], [Entry.kind == "task"]])
        query = select(func.count()).select_from(Entry).where(Entry.group == group, *extra)
        return f"count {query} {group}", lambda s: s.scalar(query), no_change
    if choice == "commit":

        def committed(result: Any, m: Model) -> None:
            m.committed = set(m.current)

        return "commit", lambda s: s.commit(), committed
    if choice == "rollback":

        def rolled_back(result: Any, m: Model) -> None:
            m.current = set(m.committed)

        return "rollback", lambda s: s.rollback(), rolled_back
    return "flush", lambda s: s.flush(), no_change


def bulk_update(rng: random.Random) -> tuple[Any, str]:
    """An UPDATE by a WHERE that is not the key, which may match several rows, setting the
    UNIQUE column to one value (two rows given one value fail, whichever is first, as they do
    in SQLite) and sometimes the score; and its description."""
    cls = rng.choice(CLASSES)
    where = rng.choice(
        [
            [cls.group == rng.choice(GROUPS)],
            [cls.group == rng.choice(GROUPS), cls.score > 1],
            [cls.name == rng.choice(NAMES)],
            [cls.code.is_(None), cls.score.is_not(None)],
            [or_(cls.name.startswith("a"), cls.score == 5)],
            [cls.code == rng.choice(CODES[2:])],
        ]
    )
    values = {"code": rng.choice(CODES)}
    if rng.random() < 0.5:
        values["score"] = rng.choice([None, 2, 6])
    statement = update(cls).where(*where).values(**values).execution_options(**SCAN)
    return statement.execution_options(synchronize_session="evaluate"), f"bulk {statement} {values}"


def autocommit_updates(rng: random.Random, engines: tuple[Engine, Engine], history: list[str]) -> int:
    """UPDATEs by any WHERE in AUTOCOMMIT, each its own statement on both sides; how many the
    UNIQUE column refused."""
    refused = 0
    for _ in range(AUTOCOMMIT_STEPS):
        statement, text = bulk_update(rng)
        history.append(f"autocommit {text}")
        got = []
        for engine in engines:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                got.append(outcome(lambda c, run=statement: c.execute(run).rowcount, conn))
        assert got[0] == got[1], "\n".join(history)
        refused += got[0] == ("error", "IntegrityError")
    return refused


def outcome(action: Callable[[Any], Any], session: Session | Connection) -> tuple[str, Any]:
    """What a step did: its result, or the kind of error it raised (the session is rolled back
    after an error, as an application would)."""
    try:
        return "ok", action(session)
    except SQLAlchemyError as error:
        session.rollback()
        return "error", type(error).__name__


def contents(engine: Engine) -> list[tuple]:
    with Session(engine) as session:
        query = select(Entry).execution_options(dynamodb_scan="allow")
        return sorted((observed(o) for o in session.scalars(query)), key=repr)


@pytest.fixture
def both(endpoint_url: str) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    for engine in (sqlite, dynamodb):
        Base.metadata.create_all(engine)
    yield sqlite, dynamodb
    Base.metadata.drop_all(dynamodb)
    for engine in (sqlite, dynamodb):
        engine.dispose()


def test_random_transactions_agree_with_sqlite(both: tuple[Engine, Engine]) -> None:
    sqlite, dynamodb = both
    rng = random.Random(SEED)
    model = Model()
    lengths, kinds, refused = [], Counter(), Counter()
    for sequence in range(SEQUENCES):
        length = rng.randint(5, 20)
        lengths.append(length)
        history: list[str] = []
        with Session(sqlite) as judged, Session(dynamodb) as tested:
            source = steps(rng, model)
            for _ in range(length):
                description, action, effect = next(source)
                history.append(description)
                expected, got = outcome(action, judged), outcome(action, tested)
                assert got == expected, f"sequence {sequence}, step {len(history)}: " + "\n".join(history)
                kinds[description.split()[0], expected[0], expected[1] not in (None, [], 0)] += 1
                refused[description.split()[0]] += expected == ("error", "IntegrityError")
                if expected[0] == "ok":
                    effect(expected[1], model)
                else:
                    model.current = set(model.committed)
            description, action, effect = ("final commit", lambda s: s.commit(), None)
            history.append(description)
            expected = outcome(action, judged)
            assert outcome(action, tested) == expected, "\n".join(history)
            if expected[0] == "ok":
                model.committed = set(model.current)
            else:  # a flush that the UNIQUE column refused: the transaction is rolled back
                model.current = set(model.committed)
        refused["autocommit"] += autocommit_updates(rng, both, history)
        assert contents(dynamodb) == contents(sqlite), f"after sequence {sequence}:\n" + "\n".join(history)
    assert sum(lengths) >= SEQUENCES * 5
    # the sequences did what they are for: reads and rowcounts that found rows, and some that did not
    for kind in ("get", "select", "ordered", "count", "core", "bulk"):
        assert kinds[kind, "ok", True] >= 50 and kinds[kind, "ok", False] >= 5, (kind, kinds)
    # and the UNIQUE column refused writes: UPDATEs by any WHERE, in and out of transactions,
    # and flushes of the ORM's changes
    assert refused["bulk"] >= 20 and refused["autocommit"] >= 20 and refused["flush"] >= 5, refused
