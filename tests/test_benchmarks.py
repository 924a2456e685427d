"""The benchmark code runs (tiny sizes, without the optional contenders) so it cannot rot.
It asserts what the run produced, never how long it took."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from benchmarks import (
    floor,
    run,
    w1_point_reads,
    w2_partition_query,
    w3_bulk_insert,
    w4_commit,
    w7_async,
    w8_fixed_costs,
    w9_scale,
)
from benchmarks.common import Env


@pytest.fixture(scope="module")
def quick_run(endpoint_url):
    """One quick run of every workload (tiny sizes), shared by the tests below."""
    env = Env(endpoint_url, 1)
    run.run_all(env, quick=True)
    env.close()
    return env


def test_every_workload_runs_and_reports_its_ratios(quick_run):
    printed = run.table(quick_run.results)
    for workload in run.WORKLOADS:
        assert workload.NAME in printed
    for contender in (
        "boto3 GetItem",
        floor.NAME,
        "sa_dynamo session.get",
        "sa_dynamo AUTOCOMMIT executemany",
        "sa_dynamo session.commit",
        "paginate(10)",
        "COUNT over 2,000 items",
    ):
        assert contender in printed
    assert "cache hits" in printed and "peak" in printed and "x floor" in printed


def test_each_workload_makes_the_fewest_requests(quick_run):
    """Call counts, not timings: each contender sends the fewest requests its work allows."""
    calls = {(r.workload, r.contender): r.calls for r in quick_run.results}
    reads = run.QUICK[w1_point_reads]
    w1 = [(contender, n) for (workload, contender), n in calls.items() if workload == w1_point_reads.NAME]
    assert len(w1) == 8  # boto3 and the floor, GetItem and PartiQL; Core and the ORM on each transport
    for contender, sent in w1:
        assert sent == reads, contender  # one GetItem/ExecuteStatement each, counted alike for all
    for contender in ("boto3 Query + TypeDeserializer", "sa_dynamo ORM select", "sa_dynamo Core select"):
        assert calls[w2_partition_query.NAME, contender] == 1, contender  # the partition fits one page
    batches = math.ceil(run.QUICK[w3_bulk_insert] / 25)
    for contender in (
        "sa_dynamo AUTOCOMMIT executemany",
        "sa_dynamo upsert (overwrite)",
        floor.NAME + " BatchWriteItem",
        floor.NAME + " BatchWriteItem" + w3_bulk_insert.ASKING,
    ):
        assert calls[w3_bulk_insert.NAME, contender] == batches, contender
    commits = math.ceil(run.QUICK[w3_bulk_insert] / w3_bulk_insert.COMMIT)
    for contender in (
        f"sa_dynamo ORM commits of {w3_bulk_insert.COMMIT}",
        f"{floor.NAME} ExecuteTransaction of {w3_bulk_insert.COMMIT}{w3_bulk_insert.ASKING}",
    ):
        assert calls[w3_bulk_insert.NAME, contender] == commits, contender
    assert calls[w4_commit.NAME, "sa_dynamo session.commit"] == 1
    small = run.QUICK[w9_scale]
    assert calls[w9_scale.NAME, f"stream {small:,} items, yield_per(1000)"] == 1
    streamed = 10 * small  # in pages of ten batches of yield_per(1000)
    assert calls[w9_scale.NAME, f"stream {streamed:,} items, yield_per(1000)"] == math.ceil(streamed / 10_000)
    assert calls[w9_scale.NAME, f"COUNT over {10 * small:,} items"] == 1  # keys only: one 1 MB page
    paged = next(r for r in quick_run.results if r.contender.startswith("paginate") and r.verdict)
    assert "[meets target two calls per page" in paged.verdict
    assert calls[w8_fixed_costs.NAME, "session.commit of 1 object(s)"] == 1
    assert calls[w8_fixed_costs.NAME, "session.commit of 100 object(s)"] == 1
    gets = run.QUICK[w8_fixed_costs]
    assert calls[w8_fixed_costs.NAME, f"{gets} session.get in a transaction that wrote elsewhere"] == gets


def test_w7_async_runs_at_every_round_trip_time_with_the_same_requests(quick_run):
    """The delay proxy changes how long a request takes, not what is sent: every contender makes
    the same calls at each round-trip time, and each target gets a verdict at each."""
    rows = [r for r in quick_run.results if r.workload.startswith(w7_async.NAME)]
    calls = {(r.workload, r.contender): r.calls for r in rows}
    direct, *delayed = (f" ({rtt * 1000:g} ms round trip)" for rtt in w7_async.RTTS)
    assert delayed, "W7 runs only directly"
    expected = {w7_async.POINT: run.QUICK[w7_async], w7_async.PARTITION: w7_async.TASKS}
    # aiobotocore and the raw-HTTP floor (the PartiQL, and GetItem for the point reads),
    # AsyncSession (and Core for the point reads) on each transport, the sync engine (no aiodynamo here)
    contending = {w7_async.POINT: 9, w7_async.PARTITION: 4}
    for workload, reads in expected.items():
        contenders = [c for w, c in calls if w == workload + direct]
        assert len(contenders) == contending[workload]
        for contender in contenders:
            assert calls[workload + direct, contender] == reads, contender
            for rtt in delayed:
                assert calls[workload + rtt, contender] == reads, (rtt, contender)
    verdicts = " ".join(run._verdict(row, [r for r in rows if r.workload == row.workload]) for row in rows)
    # AsyncSession.get and Core, directly and at 5 ms, against the floor of the same PartiQL
    assert verdicts.count(f"target <= 2.0x {floor.PARTIQL}") == 2
    assert verdicts.count(f"target <= 1.5x {floor.PARTIQL}") == 2
    for row in rows:
        assert re.fullmatch(
            r"client CPU \d+ ms, (server CPU \d+ ms, )?GC \d+ ms, \d+\.\d full collections per run", row.note
        ), row.note


def test_every_scale_workload_prints_a_verdict(quick_run):
    verdicts = [r.verdict for r in quick_run.results if r.workload in (w9_scale.NAME, w8_fixed_costs.NAME)]
    printed = " ".join(verdicts)
    for what in (
        "time per item flat",
        "< 50 MB",
        "COUNT per item flat",
        "time per page flat",
        "two calls per page",
        "cost per object flat",
        "the reads outside",
    ):
        assert what in printed
    checks = [r for r in quick_run.results if r.contender.startswith("write checks in")]
    assert [r.contender.split(" of ")[0] for r in checks] == [
        "write checks in an AUTOCOMMIT executemany",
        "write checks in a commit",
    ]
    assert all("of the time" in r.verdict for r in checks)


def test_the_hot_path_profile_runs(capsys):
    from benchmarks import profile_hot_paths

    profile_hot_paths.main(["--reads", "5", "--size", "20", "--runs", "1"])
    printed = capsys.readouterr().out
    assert "ORM session.get" in printed and "ORM select" in printed


def test_the_targets_listed_in_the_docs_are_the_benchmark_s():
    page = (Path(__file__).resolve().parent.parent / "docs" / "performance.md").read_text()
    listed = [line for line in page.splitlines() if ": at most " in line]
    assert listed == [str(target) for target in run.TARGETS]


def test_the_request_path_profile_runs(capsys):
    from benchmarks import profile_request_path

    profile_request_path.main(["--reads", "5", "--runs", "1"])
    printed = capsys.readouterr().out
    assert "sa_dynamo session.get" in printed and "x boto3 get_item" in printed


def test_every_target_has_its_contender_and_baseline_and_gets_a_verdict(quick_run):
    """Each of issue 43's targets is checked in its workload: its contender and its baseline
    both ran (W0 on canned answers, the floors beside DynamoDB Local)."""
    results = quick_run.results
    verdicts = {
        row.workload: run._verdict(row, [r for r in results if r.workload == row.workload]) for row in results
    }
    joined = "\n".join(f"{row.workload} | {row.contender} | {verdicts[row.workload]}" for row in results)
    for each in run.TARGETS:
        checked = [
            row
            for row in results
            if row.workload.startswith(f"{each.workload} ")
            and row.contender == each.contender
            and f"x {each.baseline}: "
            in run._verdict(row, [r for r in results if r.workload == row.workload])
            and (not each.at or f"({each.at})" in row.workload)
        ]
        assert checked, (str(each), joined)
