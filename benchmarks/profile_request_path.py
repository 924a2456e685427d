"""The CPU of a whole point read without a server (W0's contenders: raw boto3, and Core
``select().one()`` and ``session.get`` on each transport, answered from canned responses), and
where it goes. For profiling only; ``scripts/dev bench`` measures the same as W0.

    python -m benchmarks.profile_request_path            # CPU per call, best of --runs rounds
    python -m benchmarks.profile_request_path --profile  # plus the top of a cProfile of each
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from . import common
from .w0_request_cpu import contenders


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each contender")
    parser.add_argument("--reads", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=30, help="rows of each profile")
    parser.add_argument("--sort", default="tottime", help="pstats order: tottime, cumulative")
    args = parser.parse_args(argv)
    with contenders(args.reads) as works:
        baseline = None
        for label, work in works.items():
            cpu = common.least_cpu(work, args.runs) / args.reads
            baseline = baseline or cpu
            print(f"{label:55s} {cpu * 1e6:8.1f} us per call   {cpu / baseline:5.2f}x boto3 get_item")
        if args.profile:
            for label, work in works.items():
                print(f"\n== {label}")
                profiler = cProfile.Profile(time.process_time)  # CPU, not the wall clock
                profiler.runcall(work)
                pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
