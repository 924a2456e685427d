"""The benchmark code runs (tiny sizes, without the optional contenders) so it cannot rot.
It asserts what the run produced, never how long it took."""

from __future__ import annotations

from pathlib import Path

from benchmarks import run


def test_every_workload_runs_and_reports_its_ratios(endpoint_url, capsys):
    assert run.main(["--quick", "--endpoint", endpoint_url]) == 0
    printed = capsys.readouterr().out
    for workload in run.WORKLOADS:
        assert workload.NAME in printed
    for contender in (
        "boto3 GetItem",
        "sa_dynamo session.get",
        "sa_dynamo AUTOCOMMIT executemany",
        "sa_dynamo session.commit",
    ):
        assert contender in printed
    assert "cache hits" in printed and "peak" in printed


def test_the_hot_path_profile_runs(capsys):
    from benchmarks import profile_hot_paths

    profile_hot_paths.main(["--reads", "5", "--size", "20", "--runs", "1"])
    printed = capsys.readouterr().out
    assert "ORM session.get" in printed and "ORM select" in printed


def test_the_targets_listed_in_the_docs_are_the_benchmark_s():
    page = (Path(__file__).resolve().parent.parent / "docs" / "performance.md").read_text()
    listed = [line for line in page.splitlines() if ": at most " in line]
    assert listed == [
        f"{contender}: at most {limit}x {baseline}" for contender, baseline, limit in run.TARGETS
    ]
