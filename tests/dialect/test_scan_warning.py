"""A scan the policy lets through is one ScanWarning, at the line of the user's code that ran it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

from sqlalchemy import select, text
from sqlalchemy.orm import DeclarativeBase, Session

import sa_dynamo
from sa_dynamo.exc import ScanWarning

HERE = str(Path(__file__).resolve())


def _caught(run) -> list[tuple[type, str, int]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [(w.category, str(Path(w.filename).resolve()), w.lineno) for w in caught]


def _line(function) -> int:
    """The line of ``function``'s body (a one-line lambda: the line it is written on)."""
    return function.__code__.co_firstlineno


def test_core_orm_and_sql_text_scans_warn_at_the_callers_line(engine, items):
    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __table__ = items

    scan = select(items).where(items.c.n > 0)
    # one connection at a time: other tests count on the shared engine's pool holding one
    with engine.connect() as conn:
        for run in [
            lambda: conn.execute(scan).all(),
            lambda: conn.execute(text(f"SELECT * FROM {items.name} WHERE n > 0")).all(),
        ]:
            assert _caught(run) == [(ScanWarning, HERE, _line(run))]
    with Session(engine) as session:
        run = lambda: session.scalars(select(Item).where(Item.n > 0)).all()  # noqa: E731
        assert _caught(run) == [(ScanWarning, HERE, _line(run))]


def test_the_message_says_what_is_scanned_why_and_what_to_do(engine, items):
    with warnings.catch_warnings(record=True) as caught, engine.connect() as conn:
        warnings.simplefilter("always")
        conn.execute(select(items).where(items.c.n > 0)).all()
    message = str(caught[0].message)
    assert message.startswith(f"this statement scans the whole table {items.name!r}: ")
    assert "'pk'" in message  # the partition key it lacks
    assert message.endswith(
        ". Add an equality (== or .in_()) on the partition key to the WHERE, or pass "
        "dynamodb_scan='allow' (an execution option or a create_engine keyword) if reading every "
        "item is what you want"
    )


def test_a_script_prints_the_scan_once(endpoint_url, items, tmp_path):
    """Without any logging or warnings set-up, stderr shows the warning once (not also as a log
    record), naming the script's line."""
    script = tmp_path / "report.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select
            engine = create_engine("dynamodb://{endpoint_url.removeprefix("http://")}")
            t = Table("{items.name}", MetaData(), Column("pk", String, primary_key=True),
                      Column("sk", String, primary_key=True), Column("n", Integer))
            with engine.connect() as conn:
                rows = conn.execute(select(t).where(t.c.n > 0)).all()
            print(len(rows))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0\n"
    assert done.stderr.count("scans the whole table") == 1, done.stderr
    assert done.stderr.startswith(f"{script}:6: ScanWarning: this statement scans the whole table"), (
        done.stderr
    )


def test_a_where_that_matches_nothing_scans_nothing(engine, items):
    """A key IS NULL or a None-only IN list matches no item: nothing is sent, so no scan is
    refused or warned of, and explain() says so."""
    for query in (select(items).where(items.c.pk.is_(None)), select(items).where(items.c.n.in_([None]))):
        plan = sa_dynamo.explain(engine, query)
        assert (plan.operation, plan.reason) == ("Scan", "the WHERE matches no item: nothing is sent")
        with engine.connect().execution_options(dynamodb_scan="error") as conn:
            assert _caught(lambda q=query: conn.execute(q).all()) == []
