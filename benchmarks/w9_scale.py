"""W9: as the data grows: stream a partition with yield_per (peak memory growth, time per item),
COUNT over it, and paginate() deep into it (time per page). Each at two sizes, with a verdict on
whether the cost per unit stays flat.

Our side's CPU per unit (time.process_time, the least of the repetitions) decides "flat": it is
what this package can make grow, and unlike wall time it does not move with the other processes
of a shared machine. A stream reads pages of ten batches (10,000 items with yield_per(1000)), so
below that size each page grows with the partition, and with it the work of Python's cyclic
garbage collector over the page's objects: flat is judged from 10,000 items up.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlalchemy import func, select
from sqlalchemy.orm import Session

import sa_dynamo

from .common import Env, Result, target
from .models import items, orm_model

NAME = "W9 scale"
FLAT = 1.25  # "flat": the cost per unit at the larger size at most this times the smaller's
PEAK_MB = 50
PAGE_SIZE = 10
# The sizes are 10,000 and 1,000,000 items; W9 at 1,000,000 takes about half an hour
# on a 2-core machine, so the larger size is ten times the smaller unless
# ``run.py --scale-items 1000000`` asks for the issue's.
SMALL = 10_000


@dataclass
class Run:
    size: int
    wall: float
    cpu: float
    calls: int
    peak_mb: float = 0.0

    def per_item(self) -> str:
        return (
            f"{self.wall / self.size * 1e6:6.1f} us/item wall, {self.cpu / self.size * 1e6:6.1f} us/item CPU"
        )


def _run(size: int, work: Callable[[], int], env: Env, memory: bool = False) -> Run:
    """Time ``work`` (the least CPU of ``repetitions`` runs, the wall time of that run), count
    its API calls and, with ``memory``, its peak allocations in one more run of its own:
    tracemalloc slows every allocation, so it never runs while the CPU is timed. Each run must
    handle ``size`` items."""
    best = None
    for _ in range(max(env.repetitions, 1)):
        with env.proxy.counting() as calls:
            wall, cpu = time.perf_counter(), time.process_time()
            handled = work()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if handled != size:
            raise AssertionError(f"{work} handled {handled} items, expected {size}")
        if best is None or cpu < best.cpu:
            best = Run(size, wall, cpu, calls.calls)
    if memory:
        tracemalloc.start()
        try:
            work()
            best.peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        finally:
            tracemalloc.stop()
    return best


def _flat(what: str, small: Run, large: Run) -> str:
    growth = (large.cpu / large.size) / max(small.cpu / small.size, 1e-12)
    return target(
        growth <= FLAT, f"{what} flat ({small.size:,} -> {large.size:,} items: {growth:.2f}x CPU/item)"
    )


def run(env: Env, small: int = SMALL, large: int | None = None) -> None:
    large = large or 10 * small
    table = env.table_name("w9")
    env.create_table(table)
    env.load(table, items("S", small) + items("L", large))
    model = orm_model(table)

    def stream(partition: str) -> int:
        with Session(env.engine) as session:
            query = select(model).where(model.pk == partition).execution_options(yield_per=1000)
            return sum(1 for _ in session.scalars(query))

    def count(partition: str) -> int:
        with Session(env.engine) as session:
            return session.scalar(select(func.count()).select_from(model).where(model.pk == partition))

    stream("S"), count("S")  # compiled and cached before anything is timed
    streams = [
        _run(small, partial(stream, "S"), env, memory=True),
        _run(large, partial(stream, "L"), env, memory=True),
    ]
    counts = [
        _run(small, partial(count, "S"), env),
        _run(large, partial(count, "L"), env),
    ]
    peak = target(streams[1].peak_mb < PEAK_MB, f"< {PEAK_MB} MB")
    for done, verdict in ((streams[0], ""), (streams[1], f"{_flat('time per item', *streams)}  {peak}")):
        note = f"{done.per_item()}, peak {done.peak_mb:.1f} MB"
        contender = f"stream {done.size:,} items, yield_per(1000)"
        env.results.append(Result(NAME, contender, done.wall, done.calls, note, verdict))
    for done, verdict in ((counts[0], ""), (counts[1], _flat("COUNT per item", *counts))):
        env.results.append(
            Result(NAME, f"COUNT over {done.size:,} items", done.wall, done.calls, done.per_item(), verdict)
        )
    _paginate(env, model, small // PAGE_SIZE)


def _paginate(env: Env, model: type, deepest: int) -> None:
    """Walk paginate() to page ``deepest``; the first tenth of the pages against the last tenth."""
    shallow = max(1, deepest // 10)
    times: list[tuple[float, float]] = []

    def walk() -> None:
        token = None
        for _ in range(deepest):
            wall, cpu = time.perf_counter(), time.process_time()
            page = sa_dynamo.paginate(
                env.engine, select(model).where(model.pk == "S"), page_size=PAGE_SIZE, after=token
            )
            times.append((time.perf_counter() - wall, time.process_time() - cpu))
            token = page.next

    sa_dynamo.paginate(env.engine, select(model).where(model.pk == "S"), page_size=PAGE_SIZE)  # compiled
    with env.proxy.counting() as calls:
        walk()
    first, last = times[:shallow], times[-shallow:]
    growth = sum(t[1] for t in last) / max(sum(t[1] for t in first), 1e-9)
    verdict = "  ".join(
        [
            target(growth <= FLAT, f"time per page flat (page {shallow} -> {deepest}: {growth:.2f}x CPU)"),
            target(
                calls.calls == 2 * deepest,
                f"two calls per page (the page, and one item read ahead to know a row follows): "
                f"{calls.calls} calls, {deepest} pages",
            ),
        ]
    )
    for label, part in ((f"pages 1-{shallow}", first), (f"pages {deepest - shallow + 1}-{deepest}", last)):
        wall, cpu = sum(t[0] for t in part), sum(t[1] for t in part)
        note = f"{wall / len(part) * 1000:6.2f} ms/page wall, {cpu / len(part) * 1000:6.2f} ms/page CPU"
        shown = verdict if part is last else ""
        env.results.append(Result(NAME, f"paginate({PAGE_SIZE}) {label}", wall, None, note, shown))
