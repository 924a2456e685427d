"""The backfill progress bar: redrawn in place on a terminal, a log line per tenth elsewhere."""

from __future__ import annotations

import io
import logging

from alembic_like_migrations.report import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_is_redrawn_on_one_line():
    screen = Terminal()
    bar = ProgressBar("backfill shop", total=200, stream=screen)
    bar.update(50, "50 scanned")
    bar.update(250, "250 scanned")  # ItemCount lags behind: never past 99 % before the end
    bar.close("250 scanned")
    frames = screen.getvalue().split("\r")[1:]
    assert frames[0].startswith("backfill shop [#######-----------------------]  25% 50 scanned")
    assert " 99% 250 scanned" in frames[1]
    assert frames[2] == f"backfill shop [{'#' * 30}] 100% 250 scanned\n"


def test_elsewhere_it_logs_each_tenth_once(caplog):
    bar = ProgressBar("backfill shop", total=100, stream=io.StringIO())
    with caplog.at_level(logging.INFO, logger="alembic.dynamodb"):
        for done in range(0, 101, 5):
            bar.update(done, f"{done} scanned")
        bar.close("100 scanned")
    lines = [record.getMessage() for record in caplog.records]
    assert lines[:2] == ["backfill shop: 0% 0 scanned", "backfill shop: 10% 10 scanned"]
    assert len(lines) == 11 and lines[-1] == "backfill shop: done, 100 scanned"
