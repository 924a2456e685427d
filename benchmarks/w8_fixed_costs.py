"""W8: costs that must not grow where they have nothing to do: a commit's cost per object from
1 to 100 objects; point reads inside a transaction that has written only to another table
(the read-your-writes overlay has nothing to lay over them) against the same reads outside;
and the share of the write checks (validate.py) in writes whose rows all pass.

Repetitions alternate between the two sides so that a shared machine's drift hits both, and
our side's CPU (time.process_time) decides the verdicts, as in W9.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from sa_dynamo.dbapi import tables as tables_module

from .common import Env, Result, target
from .models import items, orm_model

NAME = "W8 fixed costs"
FLAT = 1.25
OVERLAY_LIMIT = 1.05
VALIDATION_LIMIT = 0.05
COMMIT_OBJECTS = 100


def _alternate(env: Env, sides: list[Callable[[], None]]) -> list[tuple[float, float, int]]:
    """Median wall and CPU seconds of each side, repetitions interleaved, and its calls."""
    walls: list[list[float]] = [[] for _ in sides]
    cpus: list[list[float]] = [[] for _ in sides]
    calls = [0 for _ in sides]
    for _ in range(max(3, env.repetitions)):
        for number, side in enumerate(sides):
            with env.proxy.counting() as sent:
                wall, cpu = time.perf_counter(), time.process_time()
                side()
                walls[number].append(time.perf_counter() - wall)
                cpus[number].append(time.process_time() - cpu)
            calls[number] = sent.calls
    return [
        (statistics.median(w), statistics.median(c), n) for w, c, n in zip(walls, cpus, calls, strict=True)
    ]


def run(env: Env, reads: int = 1000) -> None:
    _commits(env)
    _overlay(env, reads)
    _validation(env, reads)


def _commits(env: Env) -> None:
    table = env.table_name("w8c")
    env.create_table(table)
    model = orm_model(table)

    def commit(size: int) -> Callable[[], None]:
        def work() -> None:
            with Session(env.engine) as session:
                session.add_all([model(**row) for row in items(uuid.uuid4().hex, size)])
                session.commit()

        return work

    one, hundred = _alternate(env, [commit(1), commit(100)])
    growth = (hundred[1] / 100) / one[1]
    for size, (wall, cpu, calls) in ((1, one), (100, hundred)):
        note = f"{wall / size * 1000:6.2f} ms/object wall, {cpu / size * 1000:6.2f} ms/object CPU"
        verdict = target(calls == 1, f"one ExecuteTransaction: {calls} calls")
        if size == 100:
            verdict += "  " + target(
                growth <= FLAT, f"cost per object flat (1 -> 100: {growth:.2f}x CPU/object)"
            )
        env.results.append(Result(NAME, f"session.commit of {size} object(s)", wall, calls, note, verdict))


def _overlay(env: Env, reads: int) -> None:
    table, other = env.table_name("w8r"), env.table_name("w8w")
    env.create_table(table)
    env.create_table(other)
    env.load(table, items("P", reads))
    model, written = orm_model(table), orm_model(other)
    keys = [("P", f"{i:06}") for i in range(reads)]

    def outside() -> None:
        with Session(env.engine) as session:
            for key in keys:
                session.get(model, key)
                session.expunge_all()

    def inside() -> None:
        with Session(env.engine) as session:
            session.begin()
            session.add(written(**items(uuid.uuid4().hex, 1)[0]))
            session.flush()  # the transaction now holds a write, to another table
            for key in keys:
                session.get(model, key)
                session.expunge_all()
            session.rollback()

    (out_wall, out_cpu, out_calls), (in_wall, in_cpu, in_calls) = _alternate(env, [outside, inside])
    ratio = in_cpu / out_cpu
    env.results.append(
        Result(
            NAME,
            f"{reads} session.get outside a transaction",
            out_wall,
            out_calls,
            f"CPU {out_cpu * 1000:.0f} ms",
        )
    )
    verdicts = [
        target(ratio <= OVERLAY_LIMIT, f"<= {OVERLAY_LIMIT}x the reads outside: {ratio:.2f}x CPU"),
        target(in_calls == out_calls, f"no extra calls: {in_calls} vs {out_calls}"),
    ]
    env.results.append(
        Result(
            NAME,
            f"{reads} session.get in a transaction that wrote elsewhere",
            in_wall,
            in_calls,
            f"CPU {in_cpu * 1000:.0f} ms",
            "  ".join(verdicts),
        )
    )


@contextmanager
def _timed_checks() -> Iterator[list[float]]:
    """The process CPU spent in the driver's write checks (validate.check_write, as the
    driver's table rules call it) within the block, in a one-item list."""
    spent = [0.0]
    check = tables_module.check_write

    def timed(*args: Any, **kwargs: Any) -> None:
        started = time.process_time()
        try:
            check(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - started

    tables_module.check_write = timed
    try:
        yield spent
    finally:
        tables_module.check_write = check


def _validation(env: Env, size: int) -> None:
    """The write checks' share of an AUTOCOMMIT executemany and of a commit whose rows all
    pass: the time spent checking over the whole statement's time (the median run's)."""
    table = env.table_name("w8v")
    env.create_table(table)
    model = orm_model(table)

    def executemany() -> None:
        with env.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(insert(model.__table__), items(uuid.uuid4().hex, size))

    def commit() -> None:
        with Session(env.engine) as session:
            session.add_all([model(**row) for row in items(uuid.uuid4().hex, COMMIT_OBJECTS)])
            session.commit()

    labelled = (
        (f"an AUTOCOMMIT executemany of {size} rows", executemany),
        (f"a commit of {COMMIT_OBJECTS}", commit),
    )
    for label, work in labelled:
        runs = []
        for _ in range(max(3, env.repetitions)):
            with _timed_checks() as spent:
                wall = time.perf_counter()
                work()
                wall = time.perf_counter() - wall
            runs.append((spent[0] / wall, wall))
        share, wall = sorted(runs)[len(runs) // 2]
        verdict = target(share <= VALIDATION_LIMIT, f"<= {VALIDATION_LIMIT:.0%} of the time: {share:.1%}")
        env.results.append(
            Result(NAME, f"write checks in {label}", wall, None, f"{share:.1%} of the time", verdict)
        )
