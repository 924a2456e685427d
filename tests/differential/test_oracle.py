"""Differential oracle: the same table and rows in SQLite and DynamoDB Local, hundreds of random
SELECTs, and the same rows from both wherever the dialect accepts the statement.

SQLite is the judge of SQL semantics: three-valued logic with NULL where DynamoDB has an absent
attribute, BETWEEN, prefixes (startswith() and LIKE 'p%'), partitions pinned by IN and OR, lists
of full keys, ORDER BY (DynamoDB's by the sort key, and the client's by any attribute) and LIMIT. A statement the dialect refuses (CompileError)
is counted by reason instead of compared; any other error from the DynamoDB side is a
disagreement, since SQLite answered the same statement.

Every other statement is also rendered as plain SQL text and run through ``text()`` on both
sides, alternately with named parameters and with the values written into the text: on
DynamoDB's side that text is parsed (sqlglot, sa_dynamo/sql_text/) into a Core statement for the
same compiler, and must give the same rows. (Lists of full keys are compiled only: SQL text
has no tuple IN the translator reads.)
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine, Table, text
from sqlalchemy.exc import CompileError

import sa_dynamo

from .grammar import Case, Generator, Grammar, SqlText, sql_text

STATEMENTS = 360
TEXT_EVERY = 2  # every other statement also runs as SQL text: 180 per seed
MAX_REFUSED = 0.05

JOINED_STATEMENTS = 120  # the self-joins the client tests LIKE over, for one seed
MAX_JOINED_REFUSED = 0.2  # an inner join's LIKE of its fetched side is sent: a prefix only

# Statement seeds: each draws a different 360 statements over the same rows.
STATEMENT_SEEDS = (20250101, 424242)


@dataclass
class Disagreement:
    """One statement whose rows differ, with what it takes to reproduce it."""

    case: Case
    partiql: str
    sqlite: list[tuple[Any, ...]]
    dynamodb: list[tuple[Any, ...]] | str  # rows, or the error raised instead
    sql: SqlText | None = None  # the SQL text both sides ran, on the text path

    @property
    def kind(self) -> str:
        """The error class DynamoDB's side raised, or that its rows differ."""
        return self.dynamodb.partition(":")[0] if isinstance(self.dynamodb, str) else "different rows"

    def __str__(self) -> str:
        lines = [f"statement: {self.case.text}"]
        if self.sql is not None:
            lines.append(f"SQL text:  {self.sql.sql} -- parameters {self.sql.parameters}")
        lines += [
            f"PartiQL:   {self.partiql}",
            f"SQLite   ({len(self.sqlite)} rows): {_keys(self.sqlite)}",
        ]
        if isinstance(self.dynamodb, str):
            return "\n".join([*lines, f"DynamoDB raised: {self.dynamodb}"])
        lines += [
            f"DynamoDB ({len(self.dynamodb)} rows): {_keys(self.dynamodb)}",
            f"only in SQLite:   {[r for r in self.sqlite if r not in self.dynamodb]}",
            f"only in DynamoDB: {[r for r in self.dynamodb if r not in self.sqlite]}",
        ]
        return "\n".join(lines)


def _keys(rows: list[tuple[Any, ...]]) -> str:
    """Rows by primary key, in the order they came: the whole set stays readable."""
    return " ".join(f"{row[0]}/{row[1]}" for row in rows)


@dataclass
class Report:
    """What one oracle run saw."""

    name: str
    generated: int = 0
    empty: int = 0  # compared statements that matched no row
    refused: Counter[str] = field(default_factory=Counter)
    forms: Counter[str] = field(default_factory=Counter)  # SQL text: statements per form
    disagreements: list[Disagreement] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def compared(self) -> int:
        return self.generated - self.refused.total()

    @property
    def refused_share(self) -> float:
        return self.refused.total() / self.generated

    def summary(self) -> str:
        lines = [
            f"differential oracle [{self.name}]: {self.generated} generated, {self.compared} compared "
            f"({self.compared - self.empty} with rows, {self.empty} empty), {self.refused.total()} refused "
            f"({self.refused_share:.1%}), {len(self.disagreements)} disagree, {self.seconds:.1f} s"
        ]
        if self.forms:
            lines.append(
                "  forms: " + ", ".join(f"{count} with {form}" for form, count in sorted(self.forms.items()))
            )
        lines += [f"  refused {count:3}x: {reason}" for reason, count in self.refused.most_common()]
        return "\n".join(lines)

    def failure(self) -> str:
        shortest: dict[str, Disagreement] = {}
        for disagreement in sorted(self.disagreements, key=lambda d: len(d.case.text)):
            shortest.setdefault(disagreement.kind, disagreement)
        kinds = Counter(d.kind for d in self.disagreements)
        head = (
            f"[{self.name}] {len(self.disagreements)} of {self.compared} compared statements disagree "
            f"({', '.join(f'{kind}: {count}' for kind, count in kinds.most_common())}); "
            "the shortest of each kind:"
        )
        return "\n\n".join([head, *map(str, shortest.values())])


def _refusal(error: CompileError) -> str:
    """The construct a refusal names, without the numbers that vary between statements."""
    what = str(error).removeprefix("DynamoDB PartiQL cannot express ").partition(":")[0]
    return re.sub(r"\d+", "N", what)


def _partiql(case: Case, engine: Engine) -> str:
    try:
        compiled = case.statement.compile(engine, compile_kwargs={"render_postcompile": True})
    except Exception as error:  # that it does not compile may be the disagreement itself
        return f"(does not compile: {type(error).__name__}: {error})"
    parameters = [compiled.params[name] for name in compiled.positiontup or ()]
    return f"{compiled.string} -- parameters {parameters}"


def _text_partiql(sql: SqlText, engine: Engine) -> str:
    """The PartiQL sa_dynamo makes of the SQL text, with its parameters in order."""
    try:
        return sa_dynamo.explain(engine, text(sql.sql).bindparams(**sql.parameters)).partiql
    except Exception as error:
        return f"(does not translate: {type(error).__name__}: {error})"


def _rows(engine: Engine, case: Case, sql: SqlText | None = None) -> list[tuple[Any, ...]]:
    """The statement's rows, or with ``sql`` the rows of that text run through text()."""
    with engine.connect() as conn:
        if sql is None:
            result = conn.execute(case.statement)
        else:
            # Typed columns, so that both sides convert values as they do for the statement.
            statement = text(sql.sql).columns(*case.statement.selected_columns)
            parameters = _bindable(engine, sql.parameters)
            result = conn.execute(statement, parameters, execution_options=case.options)
        rows = [tuple(row) for row in result]
    # The primary key is unique, so sorting by it is a total order (duplicates stay adjacent).
    return rows if case.ordered else sorted(rows, key=lambda row: row[:2])


def _bindable(engine: Engine, parameters: dict[str, Any]) -> dict[str, Any]:
    """sqlite3 cannot bind a Decimal (SQLAlchemy's Numeric converts it for compiled statements,
    untyped text() parameters are not): a float, exact for the grammar's binary fractions."""
    if engine.dialect.name != "sqlite":
        return parameters
    return {name: float(v) if isinstance(v, Decimal) else v for name, v in parameters.items()}


def _typed(rows: list[tuple[Any, ...]]) -> list[tuple[tuple[str, Any], ...]]:
    """Rows compared with their types: 1 == Decimal(1) == True, but an Integer column must
    come back int, a Numeric one Decimal and a Boolean one bool on both sides."""
    return [tuple((type(value).__name__, value) for value in row) for row in rows]


def _compare(report: Report, sqlite: Engine, dynamodb: Engine, case: Case, sql: SqlText | None) -> None:
    """Run one statement (or its SQL text) on both sides and record what happened."""
    report.generated += 1
    if sql is not None:
        report.forms[sql.form] += 1
    started = time.monotonic()
    expected = _rows(sqlite, case, sql)
    try:
        actual: list[tuple[Any, ...]] | str = _rows(dynamodb, case, sql)
    except CompileError as error:  # TranslationError, on the text path, is one too
        report.refused[_refusal(error)] += 1
        return
    except Exception as error:  # SQLite answered; an error here is a wrong answer
        actual = f"{type(error).__name__}: {error}"
    finally:
        report.seconds += time.monotonic() - started
    report.empty += not expected
    if isinstance(actual, str) or _typed(actual) != _typed(expected):
        partiql = _partiql(case, dynamodb) if sql is None else _text_partiql(sql, dynamodb)
        report.disagreements.append(Disagreement(case, partiql, expected, actual, sql))


def run_oracle(sqlite: Engine, dynamodb: Engine, table: Table, seed: int, name: str) -> tuple[Report, Report]:
    """The compiled statements' report, and the report of every TEXT_EVERY-th one run as SQL
    text (alternately with parameters and with literals)."""
    compiled, texts = Report(name), Report(f"{name} as SQL text")
    generator = Generator(table, seed, Grammar())
    for number in range(STATEMENTS):
        case = generator.case()
        _compare(compiled, sqlite, dynamodb, case, None)
        if number % TEXT_EVERY == 0 and case.as_text:
            literals = (number // TEXT_EVERY) % 2 == 1
            _compare(texts, sqlite, dynamodb, case, sql_text(case.statement, literals))
    return compiled, texts


def test_both_databases_hold_the_same_rows(databases: tuple[Engine, Engine, Table]) -> None:
    """The oracle's premise: the unfiltered table reads back identically, types included."""
    sqlite, dynamodb, table = databases
    everything = Case(table.select(), "select(t)", ordered=False)
    rows = _rows(sqlite, everything)
    assert len(rows) == 200
    assert _typed(_rows(dynamodb, everything)) == _typed(rows)
    as_text = sql_text(everything.statement, literals=False)
    assert as_text.sql == f"SELECT pk, sk, s, n, d, b, t FROM {table.name}"
    assert (
        _typed(_rows(dynamodb, everything, as_text))
        == _typed(_rows(sqlite, everything, as_text))
        == _typed(rows)
    )


@pytest.mark.parametrize("seed", STATEMENT_SEEDS)
def test_dynamodb_returns_the_rows_sqlite_returns(
    databases: tuple[Engine, Engine, Table], seed: int, request: pytest.FixtureRequest
) -> None:
    """Random filters over every column type, NULL/absent, IN, BETWEEN, prefixes, nested
    AND/OR/NOT, partitions by IN and OR, full-key lists, ORDER BY and LIMIT, compiled and as
    SQL text: no disagreement and under 5 % refused on either path (the share is printed)."""
    compiled, texts = run_oracle(*databases, seed, request.node.callspec.id)
    print(compiled.summary())
    print(texts.summary())
    assert compiled.generated >= 300
    assert texts.generated >= 100 and min(texts.forms.values()) >= 50
    failures = [report.failure() for report in (compiled, texts) if report.disagreements]
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)
    for report in (compiled, texts):
        assert report.refused_share < MAX_REFUSED, report.summary()


def test_like_over_joined_rows_returns_sqlites_rows(databases: tuple[Engine, Engine, Table]) -> None:
    """LIKE with wildcards anywhere and an escape character, NOT LIKE and startswith(autoescape)
    over the rows of a join, on its outer side and in an OR across both sides: the client
    tests them, with SQLite's answer (values that hold % and _, NULL where no row joined)."""
    sqlite, dynamodb, table = databases
    report = Report("joined rows")
    generator = Generator(table, STATEMENT_SEEDS[0], Grammar())
    for _ in range(JOINED_STATEMENTS):
        _compare(report, sqlite, dynamodb, generator.joined(), None)
    print(report.summary())
    if report.disagreements:
        pytest.fail(report.failure(), pytrace=False)
    assert report.refused_share < MAX_JOINED_REFUSED, report.summary()
    assert report.compared - report.empty > JOINED_STATEMENTS // 2  # most find rows
