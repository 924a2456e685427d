"""explain() runs the statement through the engine without sending it: the engine log (echo)
says so on each of its lines, and the sa_dynamo log names the plan as explained."""

from __future__ import annotations

import logging
import re

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

import sa_dynamo

TAG = "[explained, nothing sent] "


@pytest.fixture
def logged(caplog):
    caplog.set_level(logging.INFO, logger="sqlalchemy.engine")
    caplog.set_level(logging.INFO, logger="sa_dynamo")
    return lambda name: [r.getMessage() for r in caplog.records if r.name.startswith(name)]


def test_the_engine_log_tags_every_line_of_an_explain(engine, items, logged, sent):
    statement = select(items.c.n).where(items.c.pk == "A", items.c.sk == "1")
    plan = sa_dynamo.explain(engine, statement)
    engine_lines = [
        re.sub(r"\[generated in [\d.]+s\]", "[generated]", line) for line in logged("sqlalchemy.engine")
    ]
    assert engine_lines == [
        f"{TAG}BEGIN (implicit)",
        f'{TAG}SELECT "n" FROM "{items.name}" WHERE "pk" = ? AND "sk" = ?',
        f"{TAG}[generated] ('A', '1')",
        f"{TAG}ROLLBACK",
    ]
    assert logged("sa_dynamo") == [
        f'explained, nothing sent: GetItem on {items.name}; key: "pk" = ? AND "sk" = ?'
    ]
    assert sent == [plan.partiql]


def test_a_connection_or_session_is_tagged_only_during_the_explain(engine, items, logged):
    statement = select(items.c.n).where(items.c.pk == "A")
    with engine.connect() as conn:
        conn.execution_options(logging_token="job 7")
        sa_dynamo.explain(conn, statement)
        conn.execute(statement).all()
    with Session(engine) as session:
        sa_dynamo.explain(session, statement)
        session.execute(statement).all()
    selects = [line for line in logged("sqlalchemy.engine") if "SELECT" in line]
    assert selects == [
        f'[job 7, explained, nothing sent] SELECT "n" FROM "{items.name}" WHERE "pk" = ?',
        f'[job 7] SELECT "n" FROM "{items.name}" WHERE "pk" = ?',
        f'{TAG}SELECT "n" FROM "{items.name}" WHERE "pk" = ?',
        f'SELECT "n" FROM "{items.name}" WHERE "pk" = ?',
    ]
