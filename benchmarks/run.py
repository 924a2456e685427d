"""Run every workload against one DynamoDB Local and print each contender's time as a ratio to
raw boto3 doing the same work in the same run (median of several repetitions).

    python -m benchmarks.run            # full sizes
    python -m benchmarks.run --quick    # tiny sizes, to check the code runs
    python -m benchmarks.run --save     # and the tables, with the run's header, in benchmarks/results/

Every contender's requests pass one loopback counting proxy (benchmarks/counting_proxy.py),
which counts them and the capacity each asked for alike, and adds the same cost to each.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from sa_dynamo import local_server

from . import (
    floor,
    record,
    w0_request_cpu,
    w1_point_reads,
    w2_partition_query,
    w3_bulk_insert,
    w4_commit,
    w5_stream,
    w6_compile,
    w7_async,
    w8_fixed_costs,
    w9_scale,
    w10_relational,
    w11_kind_reads,
)
from .common import Env, Result, target

WORKLOADS = [
    w0_request_cpu,
    w1_point_reads,
    w2_partition_query,
    w3_bulk_insert,
    w4_commit,
    w5_stream,
    w6_compile,
    w7_async,
    w8_fixed_costs,
    w9_scale,
    w10_relational,
    w11_kind_reads,
]
QUICK = {
    w0_request_cpu: 20,
    w1_point_reads: 20,
    w2_partition_query: 50,
    w3_bulk_insert: 60,
    w4_commit: 10,
    w5_stream: 300,
    w6_compile: 30,
    w7_async: 40,
    w8_fixed_costs: 20,
    w9_scale: 200,
    w10_relational: 40,
    w11_kind_reads: 600,
}


class Target(NamedTuple):
    """A ratio target of issue 43: the highest acceptable ratio of the contender's time (CPU in
    W0) to the baseline's, in the workload whose name starts with ``workload``, and where
    ``at`` is given only in those whose name holds ``(at)`` (a W7 round trip)."""

    workload: str
    contender: str
    baseline: str
    limit: float
    at: str = ""

    def __str__(self) -> str:
        return f"{self.workload}: {self.contender}: at most {self.limit}x {self.baseline}" + (
            f" ({self.at})" if self.at else ""
        )


PARTIQL = floor.PARTIQL
TARGETS = [
    Target("W0", "sa_dynamo Core select().one()", "boto3 get_item", 0.4),
    Target("W0", "sa_dynamo session.get", "boto3 get_item", 0.5),
    Target("W0", "sa_dynamo AsyncSession.get", "aiobotocore get_item", 0.5),
    Target("W1", "sa_dynamo Core select().one()", PARTIQL, 1.3),
    Target("W1", "sa_dynamo session.get", PARTIQL, 1.5),
    Target("W2", "sa_dynamo ORM select", "boto3 Query + TypeDeserializer", 0.5),
    Target("W2", "sa_dynamo Core select", "boto3 Query + TypeDeserializer", 0.4),
    Target("W3", "sa_dynamo AUTOCOMMIT executemany", f"{floor.NAME} BatchExecuteStatement", 1.0),
    Target(
        "W3",
        "sa_dynamo upsert (overwrite)",
        f"{floor.NAME} BatchWriteItem{w3_bulk_insert.ASKING}",
        1.1,
    ),
    Target(
        "W3",
        f"sa_dynamo ORM commits of {w3_bulk_insert.COMMIT}",
        f"{floor.NAME} ExecuteTransaction of {w3_bulk_insert.COMMIT}{w3_bulk_insert.ASKING}",
        1.2,
    ),
    Target("W7", "sa_dynamo AsyncSession.get", PARTIQL, 2.0, "0 ms round trip"),
    Target("W7", "sa_dynamo AsyncSession.get", PARTIQL, 2.0, "5 ms round trip"),
    Target("W7", "sa_dynamo Core async select().one()", PARTIQL, 1.5, "0 ms round trip"),
    Target("W7", "sa_dynamo Core async select().one()", PARTIQL, 1.5, "5 ms round trip"),
    Target("W10", "sa_dynamo Core", "boto3 by hand", 1.0),
]


def table(results: list[Result]) -> str:
    """The results as text: per workload, each contender's ratio to the first (boto3) row and
    to the raw-HTTP floor doing the same requests (the nearest floor row above it)."""
    lines = []
    for workload in dict.fromkeys(r.workload for r in results):
        rows = [r for r in results if r.workload == workload]
        base = rows[0].seconds
        lines.append(f"\n{workload}")
        for row in rows:
            calls = f"{row.calls:6d} calls" if row.calls else " " * 12
            calls += f"  {units(row):>18s}"
            nearest = _floor_of(row, rows)
            to_floor = f"{row.seconds / nearest.seconds:5.2f}x floor" if nearest else " " * 11
            verdict = _verdict(row, rows)
            lines.append(
                f"  {row.contender:45s} {row.seconds * 1000:9.1f} ms  {row.seconds / base:5.2f}x  "
                f"{to_floor}  {calls}  {row.note}{verdict}"
            )
    return "\n".join(lines)


def markdown(results: list[Result]) -> str:
    """The results as docs/performance.md shows them: one table per workload."""
    lines = []
    for workload in dict.fromkeys(r.workload for r in results):
        rows = [r for r in results if r.workload == workload]
        lines += [
            f"\n### {workload}\n",
            "| Contender | ms | x boto3 | x floor | Calls | Capacity | Note | Verdict |",
        ]
        lines.append("|---|---|---|---|---|---|---|---|")
        for row in rows:
            nearest = _floor_of(row, rows)
            to_floor = f"{row.seconds / nearest.seconds:.2f}x" if nearest else ""
            verdict = _verdict(row, rows).strip().replace("  ", "<br>")
            lines.append(
                f"| {row.contender} | {row.seconds * 1000:.1f} | {row.seconds / rows[0].seconds:.2f}x | "
                f"{to_floor} | {row.calls or ''} | {units(row)} | {row.note} | {verdict} |"
            )
    return "\n".join(lines)


def units(row: Result) -> str:
    """The capacity units DynamoDB reported for the row's counted run, or that it reported none:
    DynamoDB Local reports none for PartiQL (docs/partiql-findings.md), and a request must ask
    (ReturnConsumedCapacity), which the raw contenders do only where their row says."""
    return "not reported" if row.units is None else f"{row.units:,.1f} units"


def _floor_of(row: Result, rows: list[Result]) -> Result | None:
    """The raw-HTTP floor row nearest above ``row`` in its workload (else the first below)."""
    floors = [r for r in rows if r.contender.startswith(floor.NAME)]
    above = [r for r in floors if rows.index(r) <= rows.index(row)]
    return (above or floors or [None])[-1 if above else 0]


def _verdict(row: Result, rows: list[Result]) -> str:
    """The row's own verdict (W4-W6) and one per ratio target whose baseline ran."""
    verdicts = [row.verdict] if row.verdict else []
    for each in TARGETS:
        reference = next((r for r in rows if r.contender == each.baseline), None)
        elsewhere = not row.workload.startswith(f"{each.workload} ") or (
            each.at and f"({each.at})" not in row.workload
        )
        if each.contender != row.contender or reference is None or elsewhere:
            continue
        ratio = row.seconds / reference.seconds
        verdicts.append(target(ratio <= each.limit, f"<= {each.limit}x {each.baseline}: {ratio:.2f}x"))
    return "".join(f"  {v}" for v in verdicts)


def run_all(env: Env, quick: bool, scale_items: int | None = None, only: str = "") -> None:
    """Every workload (or those whose name starts with ``only``), at its full size or
    (``quick``) its tiny one; results land in ``env``."""
    for workload in (w for w in WORKLOADS if w.NAME.startswith(only)):
        sizes = [QUICK[workload]] if quick else []
        if workload is w9_scale:
            w9_scale.run(env, *(sizes or [w9_scale.SMALL]), large=scale_items)
        else:
            workload.run(env, *sizes)
        env.finish()
        print(f"done: {workload.NAME}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check that the code runs")
    parser.add_argument("--repetitions", type=int, default=None)
    parser.add_argument("--endpoint", help="a running DynamoDB Local (default: start one)")
    parser.add_argument(
        "--scale-items",
        type=int,
        default=None,
        help="W9's larger size (default: ten times the smaller; the issue's is 1000000, half an hour here)",
    )
    parser.add_argument("--only", default="", help="the workloads whose name starts with this, e.g. W9")
    parser.add_argument("--markdown", action="store_true", help="tables for docs/performance.md")
    parser.add_argument(
        "--save",
        action="store_true",
        help="also write the tables and the run's header to benchmarks/results/YYYY-MM-DD-HHMM.md",
    )
    arguments = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(arguments)
    started = datetime.now(timezone.utc)
    server = None if args.endpoint else local_server.start()
    try:
        env = Env(
            args.endpoint or server.endpoint_url,
            args.repetitions or (1 if args.quick else 5),
            server_pid=server.pid if server is not None else None,
        )
        try:
            run_all(env, args.quick, args.scale_items, args.only)
        finally:
            env.close()
        print(markdown(env.results) if args.markdown else table(env.results))
        if args.save:
            saved = save(env.results, started, arguments, args.endpoint and f"at {args.endpoint}")
            print(f"saved: {saved}", file=sys.stderr)
    finally:
        if server is not None:
            server.stop()
    return 0


def save(results: list[Result], started: datetime, arguments: list[str], server: str | None = None) -> Path:
    """The run's header and tables, in the run's file under benchmarks/results/."""
    path = record.path(started)
    path.parent.mkdir(exist_ok=True)
    path.write_text(record.header(started, arguments, server) + markdown(results) + "\n")
    return path


if __name__ == "__main__":
    sys.exit(main())
