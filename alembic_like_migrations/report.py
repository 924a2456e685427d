"""What a migration tells its operator: notes, a backfill's progress bar, a GSI's build status.

The logger is a child of ``alembic`` so that the logging section ``alembic init`` writes into
alembic.ini (``[logger_alembic]`` at INFO) shows these lines next to Alembic's own.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

log = logging.getLogger("alembic.dynamodb")

_BAR_WIDTH = 30


class ProgressBar:
    """One redrawn line on a terminal; elsewhere (CI logs, files) a log line per tenth done."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None):
        self.label = label
        self.total = max(total, 1)
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self._logged_tenth = -1

    def update(self, done: int, detail: str) -> None:
        # DynamoDB's ItemCount is refreshed about every six hours, so done can pass the total.
        fraction = min(done / self.total, 0.99)
        if self.interactive:
            filled = int(fraction * _BAR_WIDTH)
            bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
            self.stream.write(f"\r{self.label} [{bar}] {fraction:4.0%} {detail}")
            self.stream.flush()
        elif int(fraction * 10) > self._logged_tenth:
            self._logged_tenth = int(fraction * 10)
            log.info("%s: %.0f%% %s", self.label, fraction * 100, detail)

    def close(self, detail: str) -> None:
        if self.interactive:
            self.stream.write(f"\r{self.label} [{'#' * _BAR_WIDTH}] 100% {detail}\n")
            self.stream.flush()
        log.info("%s: done, %s", self.label, detail)


@contextmanager
def watching(what: str, status: Callable[[], str], interval: float = 10.0) -> Iterator[None]:
    """Log ``status()`` every ``interval`` seconds while the body waits: building a GSI on a
    large table takes DynamoDB minutes to hours, and silence looks like a hang."""
    started = time.monotonic()
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(interval):
            log.info("%s: %s (%.0f s)", what, status(), time.monotonic() - started)

    reporter = threading.Thread(target=report, name=f"watch {what}", daemon=True)
    reporter.start()
    try:
        yield
    finally:
        stop.set()
        reporter.join()
    log.info("%s: done in %.1f s", what, time.monotonic() - started)
