"""The surface differential finds what it is for.

- It generates every operator the compiler accepts: each operator (and DynamoDB function) that
  sa_dynamo compiles on a column of the typed table appears, on that column, in the conditions
  the generator draws.
- It finds findings 1, 2, 5 and 7 of issue 26 when their bugs are switched back in. Each bug is
  planted as the wrong answer it gave (below), on top of whatever sa_dynamo answers, with its
  shapes generated (the finding switched on, the other open ones off); the run must report a
  disagreement classified as that finding. Where the finding is still open, the real bug
  answers the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import warnings
from collections.abc import Callable, Iterator
from decimal import ROUND_HALF_EVEN, Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, Table, and_, event, func, not_, select
from sqlalchemy.exc import ArgumentError, CompileError, SADeprecationWarning
from sqlalchemy.sql import elements, functions, operators, visitors

from sa_dynamo.dialect.base import DynamoDBDialect

from .conditions import OPERATORS, Conditions
from .judge import Draw, Judge, Program, Report, Step, run_programs
from .known_open import open_findings
from .models_family import ModeledFamily
from .surface_types import COLUMNS, POOLS, make_models
from .types_family import TypedFamily


def switched_on(finding: str) -> frozenset[str]:
    """The findings to leave out while ``finding`` is planted: the open ones, but not it."""
    return open_findings() - {finding}


# --- every operator the compiler accepts is generated ----------------------------------------

# Each way SQLAlchemy (and DynamoDB's own functions) can test a column, with a sample value.
CANDIDATES: dict[str, Callable[[Any, Any], Any]] = {
    **OPERATORS,  # ==, !=, <, <=, >, >=
    "in": lambda c, v: c.in_([v]),
    "not in": lambda c, v: c.not_in([v]),
    "is null": lambda c, v: c.is_(None),
    "is not null": lambda c, v: c.is_not(None),
    "is true": lambda c, v: c.is_(True),
    "is distinct from": lambda c, v: c.is_distinct_from(v),
    "is not distinct from": lambda c, v: c.is_not_distinct_from(v),
    "between": lambda c, v: c.between(v, v),
    "not between": lambda c, v: not_(c.between(v, v)),
    "like": lambda c, v: c.like("a%"),
    "not like": lambda c, v: c.not_like("a%"),
    "ilike": lambda c, v: c.ilike("a%"),
    "startswith": lambda c, v: c.startswith("a"),
    "not startswith": lambda c, v: not_(c.startswith("a")),
    "istartswith": lambda c, v: c.istartswith("a"),
    "endswith": lambda c, v: c.endswith("a"),
    "contains": lambda c, v: c.contains("a"),
    "not contains": lambda c, v: not_(c.contains("a")),
    "icontains": lambda c, v: c.icontains("a"),
    "match": lambda c, v: c.match("a"),
    "regexp": lambda c, v: c.regexp_match("a"),
    "bare": lambda c, v: c,
    "not bare": lambda c, v: not_(c),
    "json element": lambda c, v: c["n"].as_integer() == 1,
    "json path": lambda c, v: c[("l", 0)].as_integer() == 1,
    "size": lambda c, v: func.size(c) == 1,
    "attribute_exists": lambda c, v: func.attribute_exists(c),
    "attribute_not_exists": lambda c, v: func.attribute_not_exists(c),
    "attribute_type": lambda c, v: func.attribute_type(c, "S"),
    "begins_with": lambda c, v: func.begins_with(c, "a"),
    "contains()": lambda c, v: func.contains(c, "a"),
}


def signature(clause: Any) -> set[tuple[str, str]]:
    """The (column, operator) pairs a condition is made of: each binary operator, unary
    operator and function with the column it tests, and a bare Boolean column."""
    found: set[tuple[str, str]] = set()

    def column_of(element: Any) -> str | None:
        for inner in visitors.iterate(element):
            if isinstance(inner, elements.ColumnClause) and not inner.is_literal:
                return inner.name
        return None

    for element in visitors.iterate(clause):
        name = column_of(element)
        if name is None:
            continue
        operator = getattr(element, "operator", None)
        if (
            isinstance(element, (elements.BinaryExpression, elements.UnaryExpression))
            and operator is not None
        ):
            found.add((name, getattr(operator, "__name__", str(operator))))
        elif isinstance(element, functions.FunctionElement):
            found.add((name, element.name.lower()))
    if isinstance(clause, elements.ColumnClause):
        found.add((clause.name, "bare"))
    return found


def accepted(table: Table) -> dict[tuple[str, str], str]:
    """Each (column, operator) pair of a candidate the compiler accepts on a typed column,
    with the candidate's name."""
    dialect = DynamoDBDialect()
    found: dict[tuple[str, str], str] = {}
    for column in COLUMNS:
        sample = POOLS[column].stored[0]
        for name, build in CANDIDATES.items():
            try:
                with warnings.catch_warnings():  # what SQLAlchemy deprecates for the type, it lacks
                    warnings.simplefilter("error", SADeprecationWarning)
                    clause = build(table.c[column], sample)
                select(table).where(table.c.pk == "P0", clause).compile(dialect=dialect)
            except (CompileError, ArgumentError, NotImplementedError, TypeError, AttributeError, ValueError):
                continue  # refused (or SQLAlchemy has no such test of this type)
            except SADeprecationWarning:
                continue
            for pair in signature(clause):
                found.setdefault(pair, f"{name} on {column}")
    return found


def test_the_generator_reaches_every_operator_the_compiler_accepts() -> None:
    """Each (column, operator) pair of a test the compiler accepts is one the generator draws
    (each of its operations built once per example, with operands hypothesis draws)."""
    table, _ = make_models("operators")
    generated: set[tuple[str, str]] = set()

    @settings(
        max_examples=30,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def every_operation(data: st.DataObject) -> None:
        conditions = Conditions(Draw(data), table)
        for column in COLUMNS:
            for operation in conditions.operations(column):
                generated.update(signature(conditions.build(column, operation).dynamodb))

    every_operation()
    wanted = accepted(table)
    assert len(wanted) > 150  # the candidates compile on most columns
    missing = sorted(f"{what} {pair}" for pair, what in wanted.items() if pair not in generated)
    assert missing == [], f"the compiler accepts these, the differential never generates them: {missing}"


# --- findings 1, 2, 5 and 7, switched back in -----------------------------------------------


def _run_typed(
    typed_tables: tuple[Engine, Engine, Table, type],
    finding: str,
    weights: dict[str, int],
    programs: int,
    plant: Callable[[Step, Program], Step] | None = None,
    focus: tuple[str, ...] = (),
) -> tuple[Report, TypedFamily]:
    sqlite, dynamodb, table, row = typed_tables
    family = TypedFamily(
        table, row, sqlite, dynamodb, switched_off=switched_on(finding), weights=weights, focus=focus
    )
    report = Report("planted")
    run_programs(Judge(family, sqlite, dynamodb, report, (6, 16), plant), programs, derandomize=True)
    return report, family


def _planted(report: Report) -> list[Any]:
    return [
        d for d in report.disagreements if d.mismatch.step is not None and "planted" in d.mismatch.step.shapes
    ]


def float_compare_in_transactions(step: Step, program: Program) -> Step:
    """Finding 1: inside a transaction, == and >= on a Float, Double or Numeric(asdecimal=False)
    column compared the stored Decimal with the float: an UPDATE or DELETE matched nothing and
    its write was dropped, a read lost the rows the transaction wrote."""
    if not (program.in_transaction and "float-compare" in step.shapes):
        return step
    if {"update", "delete"} & step.shapes:
        return dataclasses.replace(step, dynamodb=lambda session: 0, shapes=step.shapes | {"planted"})
    if "read" in step.shapes:
        read = step.dynamodb

        def losing_written(session: Any) -> Any:
            rows = read(session)
            if not isinstance(rows, list):
                return rows
            return [row for row in rows if (row[0], row[1]) not in program.written]

        return dataclasses.replace(step, dynamodb=losing_written, shapes=step.shapes | {"planted"})
    return step


def test_finding_1_float_compare_in_a_transaction_is_found(
    typed_tables: tuple[Engine, Engine, Table, type],
) -> None:
    weights = {"update": 5, "delete": 3, "insert": 3, "read": 3}
    report, _ = _run_typed(
        typed_tables, "finding-1", weights, 20, float_compare_in_transactions, focus=(">=", "<")
    )
    assert _planted(report), "the generator made no UPDATE, DELETE or read comparing a float in a transaction"
    assert report.findings["finding-1"] > 0, report.failure()


@contextlib.contextmanager
def rewriting(engine: Engine, rewrite: Callable[..., Any]) -> Iterator[None]:
    """Every statement executed on ``engine`` meanwhile is first passed through ``rewrite``
    (a before_execute listener): how findings 2 and 7 are switched back in."""
    event.listen(engine, "before_execute", rewrite, retval=True)
    try:
        yield
    finally:
        event.remove(engine, "before_execute", rewrite)


def _without_nulls(statement: Any) -> tuple[Any, int]:
    """The statement with None taken out of every IN list (SQL's x NOT IN (a, NULL) is never
    true, finding 2 answered as for x NOT IN (a)), and how many lists lost one."""
    changed = []

    def replace(element: Any) -> Any:
        if (
            isinstance(element, elements.BindParameter)
            and element.expanding
            and isinstance(element.value, list)
            and None in element.value
        ):
            changed.append(element)
            return element._with_value([v for v in element.value if v is not None], maintain_key=True)
        return None

    return visitors.replacement_traverse(statement, {}, replace), len(changed)


@pytest.fixture
def null_in_not_in(typed_tables: tuple[Engine, Engine, Table, type]) -> Iterator[list[int]]:
    """Finding 2 switched back in: DynamoDB's side runs every statement with the NULLs of its
    IN lists dropped. Yields how many lists each changed statement had."""
    dynamodb, planted = typed_tables[1], []

    def rewrite(conn: Any, statement: Any, multiparams: Any, params: Any, options: Any) -> Any:
        statement, changed = _without_nulls(statement)
        if changed:
            planted.append(changed)
        return statement, multiparams, params

    with rewriting(dynamodb, rewrite):
        yield planted


def test_finding_2_null_in_not_in_is_found(
    typed_tables: tuple[Engine, Engine, Table, type], null_in_not_in: list[int]
) -> None:
    weights = {"read": 4, "count": 2, "update": 2, "delete": 1}
    report, _ = _run_typed(typed_tables, "finding-2", weights, 30, focus=("not_in", "in"))
    assert report.shapes["not-in-null"] > 0, "the generator made no NOT IN with a NULL"
    assert null_in_not_in, "no statement was sent with a NULL in an IN list"
    assert report.findings["finding-2"] > 0, report.failure()


def duplicate_insert_then_delete(step: Step, program: Program) -> Step:
    """Finding 5: an INSERT of a stored key and a DELETE of it in one transaction cancelled out,
    nothing of either was sent, and the commit succeeded with the old item still there."""
    if (
        program.in_transaction
        and "executemany" not in step.shapes
        and {"dup-insert", "delete-after-dup"} & step.shapes
    ):
        return dataclasses.replace(step, dynamodb=lambda session: 1, shapes=step.shapes | {"planted"})
    return step


def test_finding_5_insert_then_delete_of_a_stored_key_is_found(
    typed_tables: tuple[Engine, Engine, Table, type],
) -> None:
    report, _ = _run_typed(
        typed_tables, "finding-5", {"insert": 6, "delete": 4, "read": 1}, 20, duplicate_insert_then_delete
    )
    shapes = {shape for d in report.disagreements for shape in d.program.shapes}
    assert {"dup-insert", "delete-after-dup"} <= shapes, (
        "the generator made no INSERT of a stored key then DELETE"
    )
    assert report.findings["finding-5"] > 0, report.failure()


def _formatted_key(product: Any, name: str, operator: Any, value: Any) -> Any:
    """The key condition finding 7 derived from a range on a template's source and trusted as
    exact: the bound formatted as the sort key formats it (half-even to two places, no
    sub-seconds)."""
    if name == "price":
        key = product.gsi2sk
        text = "PRICE#" + format(Decimal(value).quantize(Decimal("0.01"), ROUND_HALF_EVEN), "010.2f")
    else:
        key, text = product.gsi3sk, format(value, "%Y-%m-%dT%H:%M:%S")
    return operator(key, text)


@pytest.fixture
def precision_losing_keys(
    modeled_tables: tuple[Engine, Engine, SimpleNamespace, SimpleNamespace],
) -> Iterator[list[Any]]:
    """Finding 7 switched back in: a category query with a range on price or added also
    requires the formatted key to be in the range of the formatted bound."""
    dynamodb, product, planted = modeled_tables[1], modeled_tables[2].Product, []
    table = product.__table__

    def rewrite(conn: Any, statement: Any, multiparams: Any, params: Any, options: Any) -> Any:
        where = getattr(statement, "whereclause", None)
        terms = list(where.clauses) if isinstance(where, elements.BooleanClauseList) else [where]
        pins_category = any(
            isinstance(t, elements.BinaryExpression) and getattr(t.left, "name", None) == "category"
            for t in terms
        )
        for term in terms if pins_category else []:
            if (
                isinstance(term, elements.BinaryExpression)
                and getattr(getattr(term.left, "table", None), "name", None) == table.name
                and term.left.name in ("price", "added")
                and term.operator in (operators.eq, operators.lt, operators.le, operators.gt, operators.ge)
                and isinstance(term.right, elements.BindParameter)
                and isinstance(term.right.value, (Decimal, datetime.datetime))
            ):
                key = _formatted_key(product, term.left.name, term.operator, term.right.value)
                planted.append(key)
                return statement.where(and_(key)), multiparams, params
        return statement, multiparams, params

    with rewriting(dynamodb, rewrite):
        yield planted


def test_finding_7_precision_losing_key_formats_are_found(
    modeled_tables: tuple[Engine, Engine, SimpleNamespace, SimpleNamespace], precision_losing_keys: list[Any]
) -> None:
    sqlite, dynamodb, on_dynamodb, on_sqlite = modeled_tables
    family = ModeledFamily(
        on_dynamodb,
        on_sqlite,
        sqlite,
        dynamodb,
        switched_off=switched_on("finding-7"),
        weights={"read": 1},
        access={"category": 1},
    )
    family.reset()  # the products again, with prices and times finer than the key formats
    report = Report("planted")
    run_programs(Judge(family, sqlite, dynamodb, report, (4, 10)), 30, derandomize=True)
    assert report.shapes["fine-bound"] > 0, "the generator made no range finer than a key format"
    assert precision_losing_keys, "no category query with a range on price or added was sent"
    assert report.findings["finding-7"] > 0, report.failure()
