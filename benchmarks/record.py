"""What a saved run (``scripts/dev bench --save``) records beside its tables: when and where it
ran and with what, since a ratio means little without the machine and the versions behind it.
Each run is one file, benchmarks/results/YYYY-MM-DD-HHMM.md."""

from __future__ import annotations

import os
import platform
import sys
from datetime import datetime
from importlib import metadata
from pathlib import Path

from sa_dynamo.local_install import DYNAMODB_LOCAL_VERSION

RESULTS = Path(__file__).resolve().parent / "results"
# The packages whose versions a run depends on: ours, SQLAlchemy, the AWS SDK and the contenders.
PACKAGES = (
    "sa_dynamo",
    "SQLAlchemy",
    "boto3",
    "botocore",
    "aiobotocore",
    "aiodynamo",
    "pynamodb",
    "pydynamodb",
)


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> str:
    """Cores, memory and CPU model (Linux's /proc/cpuinfo, else what platform says)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(
                (line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model
            )
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {memory:.1f} GB memory, {model}"


def header(started: datetime, arguments: list[str], server: str | None = None) -> str:
    """The run's header: date, machine, load, Python, DynamoDB Local (``server``: the endpoint
    given with --endpoint, else the version the run started) and each package's version."""
    load = ", ".join(f"{each:.1f}" for each in os.getloadavg())
    lines = [
        f"# Benchmark run of {started:%Y-%m-%d %H:%M} UTC",
        "",
        f"- Command: `python -m benchmarks.run {' '.join(arguments)}`",
        f"- Machine: {machine()}; load average at the start {load}",
        f"- Python {platform.python_version()} ({sys.implementation.name})",
        f"- DynamoDB Local: {server or DYNAMODB_LOCAL_VERSION}",
    ]
    lines += [f"- {package} {version(package)}" for package in PACKAGES]
    return "\n".join(lines) + "\n"


def path(started: datetime) -> Path:
    return RESULTS / f"{started:%Y-%m-%d-%H%M}.md"
