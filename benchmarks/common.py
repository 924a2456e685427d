"""What every workload shares: one DynamoDB Local, the contenders' clients and engines (on each
transport), timing, request counting (the counting proxy) and garbage-collector accounting. Ratios are measured
against raw boto3 doing the same work in the same run."""

from __future__ import annotations

import gc
import os
import statistics
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
from sqlalchemy import create_engine
from sqlalchemy.dialects import registry

from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

from .counting_proxy import CountingProxy
from .floor import Floor

# PyDynamoDB registers a SQLAlchemy dialect under the same name; make "dynamodb://" ours.
DIALECT = "dynamodb"
registry.register(DIALECT, "sa_dynamo.dialect.base", "DynamoDBDialect")
registry.register(f"{DIALECT}.asyncio", "sa_dynamo.dialect.aiobotocore", "AsyncDynamoDBDialect")

REGION = "us-east-1"
# How a contender's name says it runs on transport=botocore (the default transport's rows have no suffix).
BOTOCORE = " (transport=botocore)"
LOADERS = 4  # threads that load a workload's items (4 took 4,600 items/s here, 1 thread 1,900)


@dataclass
class Result:
    """One contender's timing in one workload: median seconds over the repetitions."""

    workload: str
    contender: str
    seconds: float
    calls: int | None = None
    note: str = ""
    verdict: str = ""  # a target checked on this row alone (see ``target``)
    units: float | None = None  # capacity units DynamoDB reported for the counted run; None: none


def target(met: bool, what: str) -> str:
    """A target's verdict as the table prints it."""
    return f"[{'meets' if met else 'MISSES'} target {what}]"


@dataclass
class Env:
    """The shared fixture of a benchmark run. Every contender talks to ``endpoint_url``, the
    counting proxy in front of DynamoDB Local (``server_url``), which counts every contender's
    requests and capacity the same way; setup (``load``) goes to DynamoDB Local directly."""

    server_url: str
    repetitions: int
    server_pid: int | None = None  # DynamoDB Local's process, when the run started it (its CPU time)
    results: list[Result] = field(default_factory=list)
    _queued: list[tuple[Result, Callable[[], Any], list[float]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.proxy = CountingProxy(self.server_url)
        weakref.finalize(self, self.proxy.stop)
        self.endpoint_url = self.proxy.endpoint_url
        self.client = boto3.client(
            "dynamodb", endpoint_url=self.endpoint_url, region_name=REGION, **LOCAL_CREDENTIALS
        )
        host = self.endpoint_url.removeprefix("http://")
        # the driver's HTTP transport (the default) named, so SA_DYNAMO_TRANSPORT cannot swap it
        self.engine = create_engine(f"{DIALECT}://{host}?transport=http")
        self.botocore_engine = create_engine(f"{DIALECT}://{host}?transport=botocore")
        self.floor = Floor(self.endpoint_url, REGION)

    def close(self) -> None:
        """The engines, the floor's connection and the proxy."""
        self.engine.dispose()
        self.botocore_engine.dispose()
        self.floor.close()
        self.proxy.stop()

    def table_name(self, prefix: str) -> str:
        return f"bench_{prefix}_{uuid.uuid4().hex[:6]}"

    def create_table(self, name: str) -> None:
        """A pk/sk string-keyed table, as every workload uses."""
        self.client.create_table(
            TableName=name,
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )

    def load(self, table: str, items: list[dict[str, Any]]) -> None:
        """Write items with plain BatchWriteItem (setup, not measured): over raw HTTP from
        ``LOADERS`` threads, each on its own connection, since DynamoDB Local takes several
        batches at once (W9's 1,000,000 items in minutes, not most of an hour)."""
        floors = threading.local()

        def put(start: int) -> None:
            if not hasattr(floors, "floor"):
                floors.floor = Floor(self.server_url, REGION)
            pending = {table: [{"PutRequest": {"Item": _item(i)}} for i in items[start : start + 25]]}
            while pending:
                pending = floors.floor.call("BatchWriteItem", {"RequestItems": pending}).get(
                    "UnprocessedItems"
                )
                pending = pending or {}

        with ThreadPoolExecutor(LOADERS) as pool:
            list(pool.map(put, range(0, len(items), 25)))

    def measure(
        self, workload: str, contender: str, work: Callable[[], Any], proxy: CountingProxy | None = None
    ) -> Result:
        """Run ``work`` once now, counting the requests it sends and the capacity units their
        answers report as the counting proxy (``proxy``, else the run's) sees them, and queue its
        other repetitions for ``finish``. The result's seconds are that run's until ``finish``
        sets the median of them all."""
        with (proxy or self.proxy).counting() as counted:
            seconds = _timed(work)
        result = Result(workload, contender, seconds, counted.calls, units=counted.capacity)
        self.results.append(result)
        self._queued.append((result, work, [seconds]))
        return result

    def finish(self) -> None:
        """The queued repetitions, one of each contender per round, and each result's median.
        Run in turns, the machine's slow and fast moments (other processes, DynamoDB Local's
        garbage collections) fall on every contender alike instead of on whichever ran then."""
        for _ in range(self.repetitions - 1):
            for _result, work, times in self._queued:
                times.append(_timed(work))
        for result, _work, times in self._queued:
            result.seconds = statistics.median(times)
        self._queued.clear()


def _timed(work: Callable[[], Any]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _item(values: dict[str, Any]) -> dict[str, Any]:
    from boto3.dynamodb.types import TypeSerializer

    serializer = TypeSerializer()
    return {k: serializer.serialize(v) for k, v in values.items()}


def process_cpu(pid: int | None) -> float | None:
    """The CPU seconds process ``pid`` has used (Linux's /proc), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@dataclass
class Collections:
    """What Python's cyclic garbage collector did: seconds spent and full collections run."""

    seconds: float = 0.0
    full: int = 0


@contextmanager
def collections() -> Iterator[Collections]:
    """The garbage collections that run inside the block (``gc.callbacks``)."""
    seen = Collections()
    started: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            seen.seconds += time.perf_counter() - started.pop()
            seen.full += info["generation"] == 2

    gc.callbacks.append(callback)
    try:
        yield seen
    finally:
        gc.callbacks.remove(callback)


def optional(module: str) -> Any:
    """A contender's package, or None when it is not installed (the smoke test runs without)."""
    try:
        return __import__(module)
    except ImportError:
        return None


def least_cpu(work: Callable[[], Any], runs: int) -> float:
    """The least CPU time of ``runs`` rounds of ``work`` after one to warm the caches (the
    statement cache, botocore's endpoint cache): other processes share the machine."""
    return least_cpu_in_turns({"work": work}, runs)["work"]


def least_cpu_in_turns(works: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Each work's least CPU over ``rounds`` rounds that run every work in turn, after one run
    of each to warm the caches: a busy minute of the machine (DynamoDB Local's JVM warming up
    beside the run) then falls on every contender, not on whichever ran first."""
    for work in works.values():
        work()
    least = dict.fromkeys(works, float("inf"))
    for _ in range(rounds):
        for name, work in works.items():
            started = time.process_time()
            work()
            least[name] = min(least[name], time.process_time() - started)
    return least
