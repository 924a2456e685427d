"""The benchmarks' capacity column and W11, the discriminator-only read against the sort-key
prefix read of the same rows (tiny size). It asserts the figures DynamoDB Local reports, never
how long anything took."""

from __future__ import annotations

from benchmarks import run, w11_kind_reads
from benchmarks.common import Env


def test_w10_shows_the_units_each_read_costs_and_partiql_s_as_not_reported(endpoint_url: str) -> None:
    env = Env(endpoint_url, 1)
    w11_kind_reads.run(env, run.QUICK[w11_kind_reads])
    env.finish()
    rows = {r.contender: r for r in env.results}
    kind, prefix = rows["boto3 Query, discriminator filter"], rows["boto3 Query, sort-key prefix"]
    # eventually consistent: half a unit per 4 KB read; the 600 small items are 4 such blocks,
    # the 30 orders less than one
    assert (kind.units, kind.note) == (2.0, "600 items read for 30 rows")
    assert (prefix.units, prefix.note) == (0.5, "30 items read for 30 rows")
    for contender in ("sa_dynamo Order, discriminator only", "sa_dynamo Order, sort-key prefix"):
        assert (rows[contender].units, rows[contender].calls) == (None, 1)
    printed = run.table(env.results).splitlines()
    assert [line.split("calls")[1].split()[:2] for line in printed if "calls" in line] == [
        ["2.0", "units"],
        ["0.5", "units"],
        ["not", "reported"],
        ["not", "reported"],
    ]
    assert "| Capacity |" in run.markdown(env.results)
