"""W6: the same ORM query executed repeatedly: statement-cache hit rate, and the time of one
compilation without the cache."""

from __future__ import annotations

import time

from sqlalchemy import event, select
from sqlalchemy.engine.interfaces import CacheStats
from sqlalchemy.orm import Session

from .common import Env, Result, target
from .models import items, orm_model

NAME = "W6 compile and cache"


def run(env: Env, executions: int = 1000) -> None:
    table = env.table_name("w6")
    env.create_table(table)
    env.load(table, items("P", 10))
    model = orm_model(table)
    outcomes: list[CacheStats] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        outcomes.append(context.cache_hit)

    event.listen(env.engine, "before_cursor_execute", record)
    started = time.perf_counter()
    with Session(env.engine) as session:
        for i in range(executions):
            session.execute(select(model).where(model.pk == "P", model.sk == f"{i % 10:06}")).all()
    seconds = time.perf_counter() - started
    event.remove(env.engine, "before_cursor_execute", record)
    hits = outcomes.count(CacheStats.CACHE_HIT)
    statement = select(model).where(model.pk == "P", model.sk == "000001")
    compile_started = time.perf_counter()
    for _ in range(100):
        statement.compile(env.engine)
    compile_ms = (time.perf_counter() - compile_started) * 10
    env.results.append(
        Result(
            NAME,
            "sa_dynamo ORM select",
            seconds,
            note=f"cache hits {hits / executions:.1%}, compile {compile_ms:.2f} ms",
            verdict=target(hits / executions >= 0.99, ">= 99 % cache hits"),
        )
    )
