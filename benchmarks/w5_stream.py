"""W5: stream 100,000 items with yield_per(1000): the memory the ORM holds while streaming
(peak of Python allocations, tracemalloc), against boto3 paging with TypeDeserializer."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

from boto3.dynamodb.types import TypeDeserializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from .common import Env, Result, target
from .models import items, orm_model

NAME = "W5 stream with yield_per"


def _peak(work: Callable[[], int]) -> tuple[float, float, int]:
    tracemalloc.start()
    started = time.perf_counter()
    count = work()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak / 2**20, count


def run(env: Env, size: int = 100_000) -> None:
    table = env.table_name("w5")
    env.create_table(table)
    env.load(table, items("P", size))
    model = orm_model(table)
    deserializer = TypeDeserializer()
    statement = f'SELECT "pk", "sk", "n", "name", "flag" FROM "{table}" WHERE "pk" = ?'

    def boto3_stream() -> int:
        count, token = 0, None
        while True:
            page = env.client.execute_statement(
                Statement=statement, Parameters=[{"S": "P"}], **({"NextToken": token} if token else {})
            )
            for item in page["Items"]:
                {k: deserializer.deserialize(v) for k, v in item.items()}
                count += 1
            token = page.get("NextToken")
            if token is None:
                return count

    def orm_stream() -> int:
        count = 0
        with Session(env.engine) as session:
            for _ in session.scalars(select(model).where(model.pk == "P").execution_options(yield_per=1000)):
                count += 1
        return count

    for contender, work in (
        ("boto3 paging + TypeDeserializer", boto3_stream),
        ("sa_dynamo ORM yield_per(1000)", orm_stream),
    ):
        seconds, megabytes, count = _peak(work)
        if count != size:
            raise AssertionError(f"{contender} streamed {count} items, expected {size}")
        verdict = target(megabytes < 50, "< 50 MB") if contender.startswith("sa_dynamo") else ""
        env.results.append(Result(NAME, contender, seconds, note=f"peak {megabytes:.1f} MB", verdict=verdict))
