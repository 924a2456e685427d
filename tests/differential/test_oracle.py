"""Differential oracle: the same table and rows in SQLite and DynamoDB Local, hundreds of random
SELECTs, and the same rows from both wherever the dialect accepts the statement.

SQLite is the judge of SQL semantics: three-valued logic with NULL where DynamoDB has an absent
attribute, BETWEEN, prefixes, ORDER BY and LIMIT. A statement the dialect refuses (CompileError)
is counted by reason instead of compared; any other error from the DynamoDB side is a
disagreement, since SQLite answered the same statement.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import Engine, Table, create_engine, event
from sqlalchemy.exc import CompileError

from .grammar import Case, Generator, Grammar, make_rows, make_table

SEED = 20250101
STATEMENTS = 360
MAX_REFUSED = 0.10

# Statement seeds: each draws a different 360 statements over the same rows.
STATEMENT_SEEDS = (20250101, 424242)


@dataclass
class Disagreement:
    """One statement whose rows differ, with what it takes to reproduce it."""

    case: Case
    partiql: str
    sqlite: list[tuple[Any, ...]]
    dynamodb: list[tuple[Any, ...]] | str  # rows, or the error raised instead

    @property
    def kind(self) -> str:
        """The error class DynamoDB's side raised, or that its rows differ."""
        return self.dynamodb.partition(":")[0] if isinstance(self.dynamodb, str) else "different rows"

    def __str__(self) -> str:
        lines = [
            f"statement: {self.case.text}",
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
        lines += [f"  refused {count:3}x: {reason}" for reason, count in self.refused.most_common()]
        return "\n".join(lines)

    def failure(self) -> str:
        shortest: dict[str, Disagreement] = {}
        for disagreement in sorted(self.disagreements, key=lambda d: len(d.case.text)):
            shortest.setdefault(disagreement.kind, disagreement)
        kinds = Counter(d.kind for d in self.disagreements)
        head = (
            f"{len(self.disagreements)} of {self.compared} compared statements disagree "
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
    return f"{compiled} -- parameters {parameters}"


def _rows(engine: Engine, case: Case) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(case.statement)]
    # The primary key is unique, so sorting by it is a total order (duplicates stay adjacent).
    return rows if case.ordered else sorted(rows, key=lambda row: row[:2])


def _typed(rows: list[tuple[Any, ...]]) -> list[tuple[tuple[str, Any], ...]]:
    """Rows compared with their types: 1 == Decimal(1) == True, but an Integer column must
    come back int, a Numeric one Decimal and a Boolean one bool on both sides."""
    return [tuple((type(value).__name__, value) for value in row) for row in rows]


def run_oracle(sqlite: Engine, dynamodb: Engine, table: Table, seed: int, name: str) -> Report:
    report = Report(name)
    generator = Generator(table, seed, Grammar())
    started = time.monotonic()
    for _ in range(STATEMENTS):
        case = generator.case()
        report.generated += 1
        expected = _rows(sqlite, case)
        try:
            actual: list[tuple[Any, ...]] | str = _rows(dynamodb, case)
        except CompileError as error:
            report.refused[_refusal(error)] += 1
            continue
        except Exception as error:  # SQLite answered; an error here is a wrong answer
            actual = f"{type(error).__name__}: {error}"
        report.empty += not expected
        if isinstance(actual, str) or _typed(actual) != _typed(expected):
            report.disagreements.append(Disagreement(case, _partiql(case, dynamodb), expected, actual))
    report.seconds = time.monotonic() - started
    return report


def _case_sensitive_like(dbapi_connection: Any, _record: Any) -> None:
    # SQLite's LIKE (behind startswith()) ignores ASCII case by default; begins_with does not.
    dbapi_connection.execute("PRAGMA case_sensitive_like = ON")


@pytest.fixture
def databases(endpoint_url: str, table_name: str) -> Iterator[tuple[Engine, Engine, Table]]:
    """SQLite and DynamoDB Local holding the same 200 rows (None: NULL there, absent here)."""
    table = make_table(table_name)
    sqlite = create_engine("sqlite://")
    event.listen(sqlite, "connect", _case_sensitive_like)
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")
    for engine in (sqlite, dynamodb):
        table.metadata.create_all(engine)
        # AUTOCOMMIT: a DynamoDB transaction holds at most 100 writes.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(table.insert(), make_rows(SEED))
    yield sqlite, dynamodb, table
    table.metadata.drop_all(dynamodb)
    for engine in (sqlite, dynamodb):
        engine.dispose()


def test_both_databases_hold_the_same_rows(databases: tuple[Engine, Engine, Table]) -> None:
    """The oracle's premise: the unfiltered table reads back identically, types included."""
    sqlite, dynamodb, table = databases
    everything = Case(table.select(), "select(t)", ordered=False)
    rows = _rows(sqlite, everything)
    assert len(rows) == 200
    assert _typed(_rows(dynamodb, everything)) == _typed(rows)


@pytest.mark.parametrize("seed", STATEMENT_SEEDS)
def test_dynamodb_returns_the_rows_sqlite_returns(
    databases: tuple[Engine, Engine, Table], seed: int, request: pytest.FixtureRequest
) -> None:
    """Random filters over every column type, NULL/absent, IN, BETWEEN, prefixes, nested
    AND/OR/NOT, ORDER BY sk and LIMIT: no disagreement and under 10 % refused."""
    report = run_oracle(*databases, seed, request.node.callspec.id)
    print(report.summary())
    assert report.generated >= 300
    if report.disagreements:
        pytest.fail(report.failure(), pytrace=False)
    assert report.refused_share < MAX_REFUSED, report.summary()
