"""The lockstep judge of the surface differential: a program of steps (reads, writes, pages,
commit, rollback) runs on DynamoDB Local and on SQLite, step by step, and every step must give
SQLite's answer: the same rows, the same rowcount, the same error class; at the end both tables
must hold the same rows.

A step runs on DynamoDB's side first. A CompileError there is a refusal, counted by its reason,
and the step is skipped on SQLite's side too, so both sides stay in step; a CompileError after
the driver was handed the statement is a disagreement (a refusal comes before anything is sent). An error SQLite raises
inside a transaction (a duplicate key) may come from DynamoDB at the statement or at the commit
that follows: DynamoDB learns of a duplicate when the transaction is sent. Then SQLite's side
rolls back at once, DynamoDB's runs the rest of the program alone (its answers not compared:
they include the write that will fail) and its commit must raise the same error, with nothing
of the transaction written.

The first disagreement ends its program: both sides roll back and the table is reset, and the
report keeps the program as Python text that rebuilds it (the family's set-up, then each step
with what each side answered).
"""

from __future__ import annotations

import os
import re
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import event
from sqlalchemy.exc import CompileError, SAWarning, SQLAlchemyError, StatementError


@dataclass(frozen=True)
class Outcome:
    """What one side answered: ``ok`` with an observation, ``error`` with the exception class
    (SQLAlchemy's), ``refused`` (a CompileError, with its reason) or ``crash`` (anything else)."""

    kind: str
    value: Any = None
    message: str = ""

    def same_as(self, other: Outcome) -> bool:
        return self.kind == other.kind and typed(self.value) == typed(other.value)

    def __str__(self) -> str:
        if self.kind == "ok":
            return shown(self.value)
        return f"{self.kind} {self.value}: {self.message[:300]}"


def typed(value: Any) -> Any:
    """An observation with the type of every value: 1 == 1.0 == Decimal(1) == True in Python,
    but an Integer column must give int, a Numeric one Decimal, a Boolean one bool."""
    if isinstance(value, (list, tuple)):
        return type(value)(typed(v) for v in value)
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    return (type(value).__name__, value)


def shown(value: Any) -> str:
    """An observation, short enough to read in a report."""
    if isinstance(value, list) and len(value) > 8:
        return f"{len(value)} rows: {value[:8]!r} ..."
    return repr(value)


def same_rows(expected: Any, actual: Any) -> bool:
    """Whether two observations hold the same rows in another order: lists of rows, pages of
    rows, or (a sort-key sequence, rows) pairs."""
    if isinstance(expected, tuple) and isinstance(actual, tuple) and len(expected) == len(actual) == 2:
        return typed(expected[1]) == typed(actual[1])
    if not (isinstance(expected, list) and isinstance(actual, list)):
        return False
    left = [typed(r) for page in expected for r in (page if isinstance(page, list) else [page])]
    right = [typed(r) for page in actual for r in (page if isinstance(page, list) else [page])]
    for row in left:
        if row not in right:
            return False
        right.remove(row)
    return not right


def difference(expected: Any, actual: Any) -> str:
    """How two lists of rows differ, for the eye."""
    if not (isinstance(expected, list) and isinstance(actual, list)):
        return f"SQLite {shown(expected)}; DynamoDB {shown(actual)}"
    only_sqlite = [row for row in expected if typed(row) not in typed(actual)]
    only_dynamodb = [row for row in actual if typed(row) not in typed(expected)]
    if not only_sqlite and not only_dynamodb:
        return f"the same {len(expected)} rows in another order: SQLite {shown(expected)}; DynamoDB {shown(actual)}"
    return (
        f"SQLite {len(expected)} rows, DynamoDB {len(actual)}; only in SQLite: {shown(only_sqlite)}; "
        f"only in DynamoDB: {shown(only_dynamodb)}"
    )


class Refused(Exception):
    """A refusal the docs promise that is not a CompileError (paginate() in a transaction that
    wrote): a step raises it with the refusal's reason, and it is counted as a refusal."""


def attempt(action: Callable[[Any], Any], session: Any) -> Outcome:
    try:
        with warnings.catch_warnings():
            # Adding an object whose key a loaded one has: SQLAlchemy warns, then the INSERT
            # fails as a duplicate, on SQLite at the flush and on DynamoDB at the commit (so
            # there SQLAlchemy also warns that the flushed object replaced the loaded one).
            # pytest would make the warnings errors in mid-flush.
            warnings.filterwarnings("ignore", "New instance .* conflicts with persistent instance", SAWarning)
            warnings.filterwarnings("ignore", "Identity map already had an identity", SAWarning)
            return Outcome("ok", action(session))
    except Refused as error:
        return Outcome("refused", str(error), str(error.__cause__))
    except CompileError as error:
        return Outcome("refused", refusal(error), str(error))
    except StatementError as error:
        if isinstance(error.orig, CompileError):
            return Outcome("refused", refusal(error.orig), str(error.orig))
        return Outcome("error", type(error).__name__, str(error))
    except SQLAlchemyError as error:
        return Outcome("error", type(error).__name__, str(error))
    except Exception as error:  # a crash is a wrong answer wherever SQLite answered
        return Outcome("crash", type(error).__name__, f"{error}\n{traceback.format_exc(limit=-4)}")


def refusal(error: BaseException) -> str:
    """The construct a refusal names, without the values that vary between statements."""
    what = str(error).removeprefix("DynamoDB PartiQL cannot express ").partition(":")[0]
    return re.sub(r"\d+", "N", what)


@dataclass(frozen=True)
class Step:
    """One statement (or commit/rollback) of a program, on both sides.

    ``text`` is the Python that runs it on DynamoDB's side (``session`` is the program's
    session), ``shapes`` name what it is made of (so that a disagreement can be traced to a
    finding), ``keys`` the keys it may write (restored after the program), ``columns`` the
    columns whose values it tests or writes."""

    text: str
    dynamodb: Callable[[Any], Any]
    sqlite: Callable[[Any], Any]
    shapes: frozenset[str] = frozenset()
    keys: frozenset[Any] = frozenset()
    columns: frozenset[str] = frozenset()
    kind: str = ""  # the statement kind the family drew (for the report's timing)


@dataclass
class Line:
    """A step as the program ran it, and what each side answered."""

    step: Step
    dynamodb: Outcome
    sqlite: Outcome | None  # None: not run on SQLite's side (refused, or after a deferred error)

    def __str__(self) -> str:
        if self.sqlite is None:
            return f"{self.step.text}  # DynamoDB: {self.dynamodb}"
        if self.sqlite.same_as(self.dynamodb):
            return f"{self.step.text}  # both: {self.dynamodb}"
        if self.sqlite.kind == self.dynamodb.kind == "ok":
            return f"{self.step.text}\n#   <-- differs: {difference(self.sqlite.value, self.dynamodb.value)}"
        return f"{self.step.text}\n#   <-- differs: SQLite {self.sqlite}; DynamoDB {self.dynamodb}"


@dataclass
class Program:
    """A program as it runs: the steps so far, and what the family needs to draw the next one."""

    mode: str
    judged: Any = None  # SQLite's session: what is stored, for drawing keys
    lines: list[Line] = field(default_factory=list)
    deferred: Outcome | None = None  # SQLite's error that DynamoDB may raise at the commit
    deferred_keys: set[Any] = field(default_factory=set)  # keys of the write that failed on SQLite
    written: set[Any] = field(default_factory=set)  # keys written in the open transaction

    @property
    def in_transaction(self) -> bool:
        return self.mode != "autocommit"

    @property
    def shapes(self) -> set[str]:
        return {shape for line in self.lines for shape in line.step.shapes}


@dataclass(frozen=True)
class Mismatch:
    """Where a program and SQLite parted: at a step (``phase`` "step"), at the commit that should
    have raised SQLite's earlier error ("deferred"), or in the final table ("table")."""

    phase: str
    what: str
    step: Step | None = None
    sqlite: Outcome | None = None
    dynamodb: Outcome | None = None


@dataclass
class Disagreement:
    """A program whose last step (or end) gave another answer than SQLite's."""

    finding: str  # "finding-N", or "NEW: <what>"
    mismatch: Mismatch
    program: Program
    setup: str

    def reproduction(self) -> str:
        lines = [
            f"# {self.finding}: {self.mismatch.what}",
            self.setup.rstrip(),
            f"# a program in mode {self.program.mode!r}:",
            *(str(line) for line in self.program.lines),
        ]
        return "\n".join(lines)


@dataclass
class Report:
    """What one differential run saw."""

    name: str
    programs: int = 0
    abandoned: int = 0  # programs hypothesis stopped before their end
    generated: int = 0  # steps run on DynamoDB's side (statements, commits and rollbacks)
    compared: int = 0  # steps that gave both sides' answers
    errors: Counter[str] = field(default_factory=Counter)  # errors both sides raised alike
    refused: Counter[str] = field(default_factory=Counter)
    shapes: Counter[str] = field(default_factory=Counter)  # compared steps per shape
    columns: Counter[str] = field(default_factory=Counter)  # compared steps per column
    disagreements: list[Disagreement] = field(default_factory=list)
    seconds: float = 0.0
    timing: Counter[str] = field(default_factory=Counter)  # seconds per statement kind, both sides

    @property
    def refused_share(self) -> float:
        return self.refused.total() / max(self.generated, 1)

    @property
    def findings(self) -> Counter[str]:
        return Counter(d.finding for d in self.disagreements)

    def summary(self) -> str:
        lines = [
            f"surface differential [{self.name}]: {self.programs} programs ({self.abandoned} stopped early), "
            f"{self.generated} statements, "
            f"{self.compared} compared, {self.refused.total()} refused ({self.refused_share:.1%}), "
            f"{len(self.disagreements)} disagree, {self.seconds:.1f} s",
            f"  columns: {', '.join(f'{c} {n}' for c, n in sorted(self.columns.items()))}",
            f"  seconds: {', '.join(f'{k} {v:.1f}' for k, v in self.timing.most_common())}",
            f"  errors alike: {dict(self.errors)}",
        ]
        lines += [f"  refused {count:4}x: {reason}" for reason, count in self.refused.most_common()]
        lines += [f"  disagree {count:4}x: {finding}" for finding, count in self.findings.most_common()]
        return "\n".join(lines)

    def failure(self) -> str:
        """Each kind of disagreement once, by its shortest reproduction."""
        shortest: dict[str, Disagreement] = {}
        for d in sorted(self.disagreements, key=lambda d: len(d.reproduction())):
            shortest.setdefault(d.finding, d)
        return "\n\n".join([self.summary(), *(d.reproduction() for _, d in sorted(shortest.items()))])


class Family(Protocol):
    """What a model family gives the judge."""

    setup: str  # Python that builds the family's tables and rows on a dynamodb+local:// engine

    def session(self, engine: Any, mode: str, judge: bool) -> Any: ...

    def draw_step(self, draw: Draw, program: Program) -> Step: ...

    def contents(self, engine: Any, judge: bool) -> list[Any]: ...

    def restore(self, keys: set[Any]) -> None: ...

    def reset(self) -> None: ...

    def classify(self, program: Program, mismatch: Mismatch) -> str: ...


class Draw:
    """Hypothesis draws, in the few forms the generators use."""

    def __init__(self, data: st.DataObject):
        self.data = data

    def choice(self, options: Any) -> Any:
        return self.data.draw(st.sampled_from(tuple(options)))

    def weighted(self, weights: dict[Any, int]) -> Any:
        return self.choice([option for option, weight in weights.items() for _ in range(weight)])

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))

    def chance(self, percent: int) -> bool:
        return self.integer(0, 99) < percent

    def some(self, options: Any, low: int, high: int) -> list[Any]:
        return self.data.draw(st.lists(st.sampled_from(tuple(options)), min_size=low, max_size=high))


def _end(program: Program) -> Step:
    """The commit or rollback that ends a program's transaction."""
    if program.mode == "rollback":
        return Step("session.rollback()", lambda s: s.rollback(), lambda s: s.rollback())
    return Step("session.commit()", lambda s: s.commit(), lambda s: s.commit())


class Judge:
    """Runs programs of one family on both databases and records what disagrees."""

    def __init__(
        self,
        family: Family,
        sqlite: Any,
        dynamodb: Any,
        report: Report,
        length: tuple[int, int],
        plant: Callable[[Step, Program], Step] | None = None,
    ):
        """``plant``: gives each drawn step the DynamoDB action it runs instead (a known bug
        switched back in, test_surface_finds.py); None runs every step as drawn."""
        self.family, self.sqlite, self.dynamodb = family, sqlite, dynamodb
        self.report, self.length, self.plant = report, length, plant
        self.sent = 0  # statements handed to DynamoDB's driver so far
        event.listen(dynamodb, "before_cursor_execute", self._count_sent)

    def _count_sent(self, *args: Any) -> None:
        self.sent += 1

    def close(self) -> None:
        event.remove(self.dynamodb, "before_cursor_execute", self._count_sent)

    def run(self, data: st.DataObject) -> None:
        started = time.monotonic()
        draw = Draw(data)
        # no transaction, or one that ends in a commit or a rollback
        program = Program(draw.weighted({"autocommit": 4, "commit": 4, "rollback": 2}))
        self.report.programs += 1
        finished = False
        try:
            disagreement = self._run(draw, program)
            finished = True
        except Exception:  # a fault of the harness, not of either side: reported, never hidden
            disagreement = Mismatch("harness", traceback.format_exc())
        finally:
            self.report.seconds += time.monotonic() - started
            if not finished:  # hypothesis stopped the program (it drew too much), or it failed
                self.report.abandoned += 1
                self.family.reset()
        if disagreement is not None:
            finding = (
                "HARNESS" if disagreement.phase == "harness" else self.family.classify(program, disagreement)
            )
            self.report.disagreements.append(Disagreement(finding, disagreement, program, self.family.setup))
            if finished:
                self.family.reset()
        else:
            restoring = time.monotonic()
            self.family.restore({key for line in program.lines for key in line.step.keys})
            self.report.timing["(restore)"] += time.monotonic() - restoring

    @contextmanager
    def _sessions(self, mode: str) -> Iterator[tuple[Any, Any]]:
        with (
            self.family.session(self.dynamodb, mode, judge=False) as tested,
            self.family.session(self.sqlite, mode, judge=True) as judged,
        ):
            try:
                yield tested, judged
            finally:
                for session in (tested, judged):
                    attempt(lambda s: s.rollback(), session)

    def _run(self, draw: Draw, program: Program) -> Mismatch | None:
        """The program's first disagreement, or None."""
        with self._sessions(program.mode) as (tested, judged):
            program.judged = judged
            for _ in range(draw.integer(*self.length)):
                step = self.family.draw_step(draw, program)
                differs = self._step(
                    self.plant(step, program) if self.plant else step, program, tested, judged
                )
                if differs is not None:
                    return differs
            if program.in_transaction:
                differs = self._step(_end(program), program, tested, judged)
                if differs is not None:
                    return differs
        started = time.monotonic()
        expected = self.family.contents(self.sqlite, judge=True)
        actual = self.family.contents(self.dynamodb, judge=False)
        self.report.timing["(final tables)"] += time.monotonic() - started
        if typed(actual) != typed(expected):
            return Mismatch("table", f"the tables differ after the program: {difference(expected, actual)}")
        return None

    def _step(self, step: Step, program: Program, tested: Any, judged: Any) -> Mismatch | None:
        report = self.report
        report.generated += 1
        ending = step.text in ("session.commit()", "session.rollback()")
        started, sent = time.monotonic(), self.sent
        got = attempt(step.dynamodb, tested)
        self.report.timing[step.kind or step.text] += time.monotonic() - started
        if got.kind == "refused":
            report.refused[got.value] += 1
            program.lines.append(Line(step, got, None))
            if self.sent != sent and "DynamoDB PartiQL cannot express" in got.message:
                return Mismatch("step", f"{step.text}: refused after it was sent: {got}", step, None, got)
            return None
        if program.deferred is not None:  # SQLite's side has rolled back; DynamoDB's must fail by the commit
            program.lines.append(Line(step, got, None))
            failed = got.kind == "error" and got.value == program.deferred.value
            # another error ends the transaction too: rolled back, as SQLite's is
            if failed or got.kind in ("error", "crash") or (ending and program.mode == "rollback"):
                return self._settled(program, tested, failed)
            if ending:
                what = f"SQLite raised {program.deferred.value} inside the transaction; DynamoDB's {step.text} answered {got}"
                return Mismatch("deferred", what, step, program.deferred, got)
            return None
        expected = attempt(step.sqlite, judged)
        line = Line(step, got, expected)
        program.lines.append(line)
        if expected.kind in ("refused", "crash"):
            return Mismatch(
                "step", f"SQLite could not run it (a harness fault): {expected}", step, expected, got
            )
        report.compared += 1
        report.shapes.update(step.shapes)
        report.columns.update(step.columns)
        if got.same_as(expected):
            if got.kind == "error":
                report.errors[got.value] += 1
                for session in (tested, judged):  # an application rolls back after an error
                    session.rollback()
                program.written.clear()
            else:
                program.written |= step.keys
            if ending:
                program.written.clear()
            return None
        if program.in_transaction and expected.kind == "error" and got.kind == "ok" and not ending:
            # DynamoDB learns of a duplicate key when the transaction is sent
            judged.rollback()
            program.deferred, program.deferred_keys = expected, set(step.keys)
            return None
        if expected.kind == got.kind == "ok":
            return Mismatch(
                "step", f"{step.text}: {difference(expected.value, got.value)}", step, expected, got
            )
        return Mismatch("step", f"{step.text}: SQLite {expected}; DynamoDB {got}", step, expected, got)

    def _settled(self, program: Program, tested: Any, failed: bool) -> None:
        """DynamoDB raised the error SQLite raised earlier (or the transaction was rolled back
        before it could): the transaction is over on both sides."""
        tested.rollback()
        if failed:
            self.report.errors[f"{program.deferred.value} (deferred)"] += 1
        program.deferred, program.deferred_keys = None, set()
        program.written.clear()
        return None


def scaled(programs: int) -> int:
    """``programs``, times SA_DYNAMO_SURFACE_SCALE (1 unless set): a longer hunt on demand."""
    return max(1, round(programs * float(os.environ.get("SA_DYNAMO_SURFACE_SCALE", "1"))))


def run_programs(judge: Judge, programs: int, derandomize: bool | None = None) -> None:
    """``programs`` hypothesis examples, each one program the judge runs and records. Nothing
    raises inside an example (the judge collects), so hypothesis never shrinks: a disagreement
    is reported with the program that found it. ``derandomize``: the same programs every run
    (None: as the settings profile says; CI's derandomizes)."""

    @settings(
        **({} if derandomize is None else {"derandomize": derandomize}),
        max_examples=scaled(programs),
        deadline=None,  # DynamoDB Local's pauses are not the code's
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(st.data())
    def program(data: st.DataObject) -> None:
        judge.run(data)

    try:
        program()
    finally:
        judge.close()


def verdict(report: Report, min_statements: int, max_refused: float) -> None:
    """Fail with every kind of disagreement's shortest reproduction; else check the run was
    as large as promised and refused no more than ``max_refused`` of its statements."""
    print(report.summary())
    if report.disagreements:
        pytest.fail(report.failure(), pytrace=False)
    assert report.generated >= min_statements, report.summary()
    assert report.refused_share < max_refused, report.summary()
