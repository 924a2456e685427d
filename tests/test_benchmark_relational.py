"""W10 (issue 29's relational workload) runs at a small size, reads the same rows as boto3 by
hand (the workload checks it before timing) and makes the fewest requests its plan allows."""

from __future__ import annotations

import math

from benchmarks import run, w10_relational
from benchmarks.common import BOTOCORE, Env


def test_the_relational_workload_makes_the_fewest_requests(endpoint_url: str) -> None:
    orders = 120  # 30 customers, 1,200 items grouped
    env = Env(endpoint_url, 1)
    w10_relational.run(env, orders)
    env.finish()
    calls = {(r.workload, r.contender): r.calls for r in env.results}
    customers = orders // w10_relational.ORDERS_PER_CUSTOMER
    for suffix in ("", BOTOCORE):
        # the orders' partition, then their customers by partition key, 50 a Query
        assert calls[w10_relational.JOIN, f"sa_dynamo Core{suffix}"] == 1 + math.ceil(customers / 50)
        assert calls[w10_relational.GROUP_BY, f"sa_dynamo Core{suffix}"] == 1  # one page
    assert calls[w10_relational.JOIN, "boto3 by hand"] == 1 + math.ceil(customers / 100)
    printed = run.table(env.results)
    assert "target <= 1.0x boto3 by hand" in printed
