"""Generated programs of AUTOCOMMIT writes through the fault proxy, on each transport, judged by
SQLite: an INSERT, UPDATE or DELETE by key, by a WHERE on other columns within a partition, or
an executemany of them, each sent with faults scripted on its requests (a reset before or after
DynamoDB saw one, half an answer, a throttle, a 500) and a drawn number of retries. It runs on
a plain table (ExecuteStatement, BatchExecuteStatement: no idempotency token) and on one with a
UNIQUE column (each row a transaction with its guards, resent with its token).

Each statement runs on SQLite first, row by row in a transaction that is rolled back, which
gives the table before and after it. DynamoDB's side must then answer in one of these ways:

- a rowcount: SQLite's, and the table as SQLite's after;
- SQLite's IntegrityError, with the rows it names applied as SQLite applied them;
- an OperationalError: with ``outcome_unknown``, each item touched is as before or as after (a
  batch is not atomic: it may be either, row by row); without it, nothing was applied but the
  rows it names as applied.

Never a wrong rowcount, never an item SQLite's statement could not leave. SQLite is then given
what DynamoDB holds (each item checked to be one of the two outcomes), and the program goes on.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
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
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from support.faultproxy import FAULTS, FaultProxy

from .judge import Draw, scaled
from .known_open import is_open

PROGRAMS = 12  # about 22 s on each transport, most of it the backoff between attempts
SEED = 20261208
PARTITIONS = ("P0", "P1")
KEYS = tuple((pk, f"{i}") for pk in PARTITIONS for i in range(5))
NUMBERS = (None, 0, 1, 2, 3)
STRINGS = (None, "a", "b")
# Faults scripted on a statement's requests: every random one, and half an answer.
LOST = (*FAULTS, "cut_short")
AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}
State = dict[tuple[str, str], tuple[Any, Any]]


def make_table(unique: bool) -> Table:
    """The table; ``unique``: s is a UNIQUE column, so each AUTOCOMMIT write of a row is a
    transaction with its guard items (ExecuteTransaction, whose token makes a resend safe)."""
    return Table(
        f"lost_diff_{uuid.uuid4().hex[:8]}",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
        Column("s", String, unique=unique),
    )


def first_rows(table: Table) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    return [
        {"pk": pk, "sk": sk, "n": rng.choice(NUMBERS), "s": None if table.c.s.unique else rng.choice(STRINGS)}
        for pk, sk in KEYS
        if rng.random() < 0.6
    ]


@dataclass(frozen=True)
class Write:
    """One statement of a program: the Python that runs it, the statement, its parameters (one
    dict per row; ``many``: sent as an executemany), and the key each row writes (None for a
    WHERE on other columns, which may write any item of its partition)."""

    text: str
    statement: Any
    rows: list[dict[str, Any]]
    many: bool
    keys: list[tuple[str, str]] | None
    sets: dict[str, Any] | None = None  # an UPDATE: what it sets, and (by key) the column its WHERE reads
    reads: str | None = None


def _condition(draw: Draw, table: Table) -> tuple[str, str, Any]:
    """A condition on a column beyond the key: its text, the column and the condition."""
    column = draw.choice(["n", "s"])
    if column == "n":
        op, value = draw.choice([">", "<=", "is"]), draw.choice([0, 1, 2])
        if op == "is":
            return "table.c.n.is_(None)", "n", table.c.n.is_(None)
        return f"table.c.n {op} {value}", "n", table.c.n > value if op == ">" else table.c.n <= value
    value = draw.choice(["a", "b"])
    return f"table.c.s == {value!r}", "s", table.c.s == value


def _values(draw: Draw) -> dict[str, Any]:
    values = {"n": draw.choice(NUMBERS), "s": draw.choice(STRINGS)}
    return {name: values[name] for name in draw.choice([("n",), ("s",), ("n", "s")])}


def draw_write(draw: Draw, table: Table) -> Write:
    kind = draw.weighted(
        {"insert": 3, "insert_many": 2, "update_key": 3, "update_where": 2, "update_many": 2}
        | {"delete_key": 2, "delete_where": 1, "delete_many": 1}
    )
    if kind.endswith("_many"):
        keys = draw.data.draw(st.lists(st.sampled_from(KEYS), min_size=2, max_size=4, unique=True))
        if kind == "insert_many":
            rows = [
                {"pk": pk, "sk": sk, "n": draw.choice(NUMBERS), "s": draw.choice(STRINGS)} for pk, sk in keys
            ]
            return Write(f"conn.execute(insert(table), {rows!r})", insert(table), rows, True, keys)
        where = (table.c.pk == bindparam("k_pk"), table.c.sk == bindparam("k_sk"))
        rows = [{"k_pk": pk, "k_sk": sk} for pk, sk in keys]
        text = "table.c.pk == bindparam('k_pk'), table.c.sk == bindparam('k_sk')"
        if kind == "update_many":
            rows = [row | {"v_n": draw.choice(NUMBERS)} for row in rows]
            statement = update(table).where(*where).values(n=bindparam("v_n"))
            return Write(
                f"conn.execute(update(table).where({text}).values(n=bindparam('v_n')), {rows!r})",
                statement,
                rows,
                True,
                keys,
            )
        return Write(
            f"conn.execute(delete(table).where({text}), {rows!r})",
            delete(table).where(*where),
            rows,
            True,
            keys,
        )
    if kind == "insert":
        (pk, sk) = draw.choice(KEYS)
        row = {"pk": pk, "sk": sk, "n": draw.choice(NUMBERS), "s": draw.choice(STRINGS)}
        return Write(f"conn.execute(insert(table), {row!r})", insert(table), [row], False, [(pk, sk)])
    extra_text, reads, extra = _condition(draw, table)
    if kind.endswith("_where"):
        pk = draw.choice(PARTITIONS)
        where, text, keys = (table.c.pk == pk, extra), f"table.c.pk == {pk!r}, {extra_text}", None
        reads = None
    else:
        (pk, sk) = key = draw.choice(KEYS)
        where, text, keys = (
            [table.c.pk == pk, table.c.sk == sk],
            f"table.c.pk == {pk!r}, table.c.sk == {sk!r}",
            [key],
        )
        if draw.chance(50):
            where, text = [*where, extra], f"{text}, {extra_text}"
        else:
            reads = None
    if kind.startswith("update"):
        values = _values(draw)
        statement = update(table).where(*where).values(**values)
        return Write(
            f"conn.execute(update(table).where({text}).values(**{values!r}))",
            statement,
            [{}],
            False,
            keys,
            values,
            reads,
        )
    return Write(f"conn.execute(delete(table).where({text}))", delete(table).where(*where), [{}], False, keys)


@dataclass(frozen=True)
class Scripted:
    """The faults scripted for one statement: per operation, the next requests' faults."""

    scripted: dict[str, list[str]]
    retries: int

    def text(self) -> str:
        calls = [
            f"proxy.script({op!r}, {', '.join(map(repr, faults))})" for op, faults in self.scripted.items()
        ]
        return "; ".join([*calls, f"retries={self.retries}"])


def draw_faults(draw: Draw, write: Write, unique: bool) -> Scripted:
    # A WHERE on other columns reads its keys (ExecuteStatement), then writes them in a batch.
    sends = "BatchExecuteStatement" if write.many or write.keys is None else "ExecuteStatement"
    operations = {sends: 4, "BatchGetItem": 1} | ({"ExecuteStatement": 2} if write.keys is None else {})
    if unique:
        operations["ExecuteTransaction"] = 4
    scripted: dict[str, list[str]] = {}
    # Mostly one fault and a retry: the lost answer that is resent and must be resolved.
    for _ in range(draw.weighted({0: 1, 1: 4, 2: 1})):
        faults = [draw.choice(LOST) for _ in range(draw.weighted({1: 3, 2: 1}))]
        scripted.setdefault(draw.weighted(operations), []).extend(faults)
    return Scripted(scripted, draw.weighted({0: 1, 1: 2, 2: 2}))


def echoes(write: Write, rowcounts: list[int | str], before: State) -> bool:
    """Whether the statement is the open finding "new-identical-after-lost-answer": a row SQLite
    does not apply (a duplicate INSERT, an UPDATE whose WHERE is false) whose item already holds
    exactly what it writes, where the WHERE reads what it sets. After a lost answer the driver
    cannot tell that item from its own first attempt's, and counts the row."""
    for row, (key, count) in enumerate(zip(write.keys or [], rowcounts, strict=False)):
        stored = before.get(key)
        if count == "IntegrityError" and stored == (write.rows[row].get("n"), write.rows[row].get("s")):
            return True
        if count == 0 and write.sets is not None and write.reads in write.sets and stored is not None:
            held = dict(zip(("n", "s"), stored, strict=True))
            if all(held[name] == value for name, value in write.sets.items()):
                return True
    return False


def table_state(conn: Any, table: Table) -> State:
    query = select(table).execution_options(dynamodb_scan="allow", dynamodb_consistent_read=True)
    return {(row.pk, row.sk): (row.n, row.s) for row in conn.execute(query)}


def on_sqlite(sqlite: Engine, table: Table, write: Write) -> tuple[list[int | str], State, State]:
    """Each row's rowcount (or "IntegrityError"), and the table before and after the statement,
    which is rolled back: the table keeps what DynamoDB ends up holding."""
    with sqlite.connect() as conn:
        outer = conn.begin()
        before, rowcounts = table_state(conn, table), []
        for row in write.rows:
            savepoint = conn.begin_nested()
            try:
                rowcounts.append(conn.execute(write.statement, row).rowcount)
                savepoint.commit()
            except IntegrityError:
                savepoint.rollback()
                rowcounts.append("IntegrityError")
        after = table_state(conn, table)
        outer.rollback()
    return rowcounts, before, after


def settle(sqlite: Engine, table: Table, state: State) -> None:
    """SQLite holds ``state`` from now on."""
    with sqlite.begin() as conn:
        conn.execute(delete(table))
        rows = [{"pk": pk, "sk": sk, "n": n, "s": s} for (pk, sk), (n, s) in state.items()]
        if rows:
            conn.execute(insert(table), rows)


def misjudged(
    write: Write, answer: Any, rowcounts: list[int | str], before: State, after: State, got: State
) -> str | None:
    """What is wrong with DynamoDB's ``answer`` (a rowcount or the DBAPIError raised) and the
    table it left (``got``), given SQLite's; None when it is one SQLite allows."""
    keys = set(before) | set(after) | set(got)
    foreign = [key for key in keys if got.get(key) not in (before.get(key), after.get(key))]
    if foreign:
        return f"items no outcome leaves: {[(key, before.get(key), after.get(key), got.get(key)) for key in foreign]}"
    failed = [row for row, count in enumerate(rowcounts) if count == "IntegrityError"]
    if isinstance(answer, int):
        if failed:
            return f"rowcount {answer}, SQLite raised IntegrityError at rows {failed}"
        if answer != sum(rowcounts):
            return f"rowcount {answer}, SQLite's {sum(rowcounts)}"
        return None if got == after else "the rowcount is SQLite's but the table is not"
    error = answer.orig
    if isinstance(answer, IntegrityError) and not failed:
        return f"IntegrityError where SQLite raised none: {error}"
    if not isinstance(answer, (IntegrityError, OperationalError)):
        return f"{type(answer).__name__}: {error}"
    unknown_outcome = getattr(error, "outcome_unknown", False)
    applied, unapplied, unknown = (getattr(error, name, None) for name in ("applied", "unapplied", "unknown"))
    if applied is None:  # one write, or a WHERE's read that failed: applied whole, or not at all
        if unknown_outcome or got == before:
            return None
        return "an error that says nothing was applied, but the table changed"
    if set(applied) & set(failed):
        return f"rows {sorted(set(applied) & set(failed))} reported applied, SQLite refused them"
    if write.keys is None:  # the rows are the items the WHERE matched, in an order of its own
        changed = sum(got.get(key) != before.get(key) for key in keys)
        return (
            None
            if len(applied) <= changed <= len(applied) + len(unknown)
            else f"{changed} items changed: {error}"
        )
    for rows, allowed in ((applied, (after,)), (unapplied, (before,)), (unknown, (before, after))):
        for row in rows:
            key = write.keys[row]
            if got.get(key) not in [state.get(key) for state in allowed]:
                return f"row {row} ({key}) is {got.get(key)}: {error}"
    return None


@dataclass
class Run:
    """What the run saw, to check that it did what it is for."""

    programs: list[list[str]] = field(default_factory=list)
    answers: Counter[str] = field(default_factory=Counter)
    disagreements: list[str] = field(default_factory=list)


def answer_kind(answer: Any) -> str:
    if isinstance(answer, int):
        return "rowcount"
    unknown = getattr(answer.orig, "outcome_unknown", False) or bool(getattr(answer.orig, "unknown", None))
    return f"{type(answer).__name__}{' (outcome unknown)' if unknown else ''}"


@pytest.fixture(params=["plain", "unique"])
def lost_tables(engine: Engine, request: pytest.FixtureRequest) -> Iterator[tuple[Engine, Table]]:
    table = make_table(request.param == "unique")
    sqlite = create_engine("sqlite://")
    for side in (sqlite, engine):
        table.metadata.create_all(side)
        with side.connect().execution_options(**AUTOCOMMIT) as conn:
            conn.execute(insert(table), first_rows(table))
    yield sqlite, table
    table.metadata.drop_all(engine)
    sqlite.dispose()


def test_autocommit_writes_whose_answers_are_lost_agree_with_sqlite(
    engine: Engine, lost_tables: tuple[Engine, Table], start_proxy: Callable[..., FaultProxy], through
) -> None:
    sqlite, table = lost_tables
    proxy = start_proxy(max_requests=20_000, time_limit=240)
    proxied = {retries: through(proxy, retries) for retries in (0, 1, 2)}
    run = Run()

    def step(draw: Draw, lines: list[str]) -> bool:
        write = draw_write(draw, table)
        faults = draw_faults(draw, write, bool(table.c.s.unique))
        rowcounts, before, after = on_sqlite(sqlite, table, write)
        if is_open("new-identical-after-lost-answer") and echoes(write, rowcounts, before):
            faults = Scripted({}, faults.retries)  # the generator leaves the open finding out
        lost = proxy.counts.of("reset_after") + proxy.counts.of("cut_short")
        for operation, scripted in faults.scripted.items():
            proxy.script(operation, *scripted)
        try:
            with proxied[faults.retries].connect().execution_options(**AUTOCOMMIT) as conn:
                answer: Any = conn.execute(
                    write.statement, write.rows if write.many else write.rows[0]
                ).rowcount
        except DBAPIError as error:
            answer = error
        left = proxy.unscript()
        with engine.connect() as conn:
            got = table_state(conn, table)
        shown = answer if isinstance(answer, int) else f"{type(answer).__name__}: {str(answer.orig)[:200]}"
        lines.append(
            f"{faults.text()}  # not met: {left}\n{write.text}  # DynamoDB: {shown}; SQLite: {rowcounts}"
        )
        run.answers[answer_kind(answer)] += 1
        if isinstance(answer, int) and proxy.counts.of("reset_after") + proxy.counts.of("cut_short") > lost:
            run.answers["rowcount after a lost answer"] += 1
        wrong = misjudged(write, answer, rowcounts, before, after, got)
        if wrong is not None:
            lines.append(
                f"#   <-- {wrong}\n#   before {before}\n#   SQLite after {after}\n#   DynamoDB {got}"
            )
            run.disagreements.append("\n".join(lines))
            with engine.connect().execution_options(**AUTOCOMMIT) as conn:  # start the next program afresh
                conn.execute(delete(table).execution_options(dynamodb_scan="allow"))
                conn.execute(insert(table), first_rows(table))
            got = {(r["pk"], r["sk"]): (r["n"], r["s"]) for r in first_rows(table)}
        settle(sqlite, table, got)
        return wrong is None

    @settings(
        max_examples=scaled(PROGRAMS),
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(st.data())
    def program(data: st.DataObject) -> None:
        draw = Draw(data)
        with engine.connect() as conn:
            lines = [f"# table at the start: {table_state(conn, table)}"]
        run.programs.append(lines)
        for _ in range(draw.integer(3, 8)):
            if not step(draw, lines):
                return

    program()
    assert not run.disagreements, "\n\n".join(run.disagreements)
    # The faults reached what they are for: answers lost and resolved, and some left unknown.
    assert run.answers["rowcount"] >= 20 and run.answers["IntegrityError"] >= 5, run.answers
    if table.c.s.unique:
        assert (
            sum(n for (_, operation), n in proxy.counts.faults.items() if operation == "ExecuteTransaction")
            >= 5
        )
    else:
        assert run.answers["rowcount after a lost answer"] >= 1, run.answers
        assert run.answers["OperationalError (outcome unknown)"] >= 5, run.answers
