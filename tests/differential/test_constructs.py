"""Construct fuzz: every SQL operator, the common functions, casts, CASE, arithmetic, tuples and
literals, over each column type. Each either runs on DynamoDB Local with SQLite's rows or is a
CompileError raised before anything is sent; none may reach DynamoDB and be rejected there."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Engine,
    String,
    Table,
    case,
    cast,
    distinct,
    false,
    func,
    literal,
    literal_column,
    not_,
    null,
    select,
    true,
    tuple_,
)
from sqlalchemy.exc import ArgumentError, CompileError, DBAPIError, SADeprecationWarning, StatementError

# A value of each column's kind that some rows hold, a prefix, and a second value.
SAMPLES = {
    "pk": ("P1", "P", "P2"),
    "sk": ("007", "00", "030"),
    "s": ("ab", "a", "b"),
    "n": (3, 1, 42),
    "d": (1.5, 1, 3.75),
    "b": (True, True, False),
    "t": ("xy", "x", "y"),
}

# Conditions over a column c (its sample value v, prefix p and second value w).
CONDITIONS: dict[str, Callable[[Any, Any, Any, Any], Any]] = {
    "eq": lambda c, v, p, w: c == v,
    "ne": lambda c, v, p, w: c != v,
    "lt": lambda c, v, p, w: c < v,
    "le": lambda c, v, p, w: c <= v,
    "gt": lambda c, v, p, w: c > v,
    "ge": lambda c, v, p, w: c >= v,
    "in": lambda c, v, p, w: c.in_([v, w]),
    "not in": lambda c, v, p, w: c.not_in([v, w]),
    "empty in": lambda c, v, p, w: c.in_([]),
    "is null": lambda c, v, p, w: c.is_(None),
    "is not null": lambda c, v, p, w: c.is_not(None),
    "is distinct from": lambda c, v, p, w: c.is_distinct_from(v),
    "is not distinct from": lambda c, v, p, w: c.is_not_distinct_from(v),
    "between": lambda c, v, p, w: c.between(p, w) if not isinstance(v, bool) else c.between(False, True),
    "not between": lambda c, v, p, w: (
        ~c.between(p, w) if not isinstance(v, bool) else ~c.between(False, True)
    ),
    "between columns": lambda c, v, p, w: c.between(c, w),
    "like prefix": lambda c, v, p, w: c.like(f"{p}%"),
    "like infix": lambda c, v, p, w: c.like(f"%{p}%"),
    "not like": lambda c, v, p, w: c.not_like(f"{p}%"),
    "ilike": lambda c, v, p, w: c.ilike(f"{p}%"),
    "startswith": lambda c, v, p, w: c.startswith(str(p)),
    "not startswith": lambda c, v, p, w: ~c.startswith(str(p)),
    "endswith": lambda c, v, p, w: c.endswith(str(p)),
    "contains": lambda c, v, p, w: c.contains(str(p)),
    "match": lambda c, v, p, w: c.match(str(p)),
    "regexp": lambda c, v, p, w: c.regexp_match(str(p)),
    "concat": lambda c, v, p, w: c.concat("x") == f"{v}x",
    "add": lambda c, v, p, w: c + 1 == 2,
    "sub": lambda c, v, p, w: c - 1 == 2,
    "mul": lambda c, v, p, w: c * 2 == 4,
    "div": lambda c, v, p, w: c / 2 == 1,
    "mod": lambda c, v, p, w: c % 2 == 1,
    "neg": lambda c, v, p, w: -c == -1,
    "bitwise and": lambda c, v, p, w: c.bitwise_and(1) == 1,
    "collate": lambda c, v, p, w: c.collate("BINARY") == v,
    "not": lambda c, v, p, w: not_(c == v),
    "is true": lambda c, v, p, w: c.is_(True),
    "compare columns": lambda c, v, p, w: c == c,
    "tuple eq": lambda c, v, p, w: tuple_(c, c) == (v, v),
    "tuple in": lambda c, v, p, w: tuple_(c, c).in_([(v, v)]),
    "lower": lambda c, v, p, w: func.lower(c) == v,
    "upper": lambda c, v, p, w: func.upper(c) == v,
    "length": lambda c, v, p, w: func.length(c) == 2,
    "abs": lambda c, v, p, w: func.abs(c) == 1,
    "coalesce": lambda c, v, p, w: func.coalesce(c, v) == v,
    "substr": lambda c, v, p, w: func.substr(c, 1, 1) == p,
    "size": lambda c, v, p, w: func.size(c) == 2,
    "cast": lambda c, v, p, w: cast(c, String) == str(v),
    "case": lambda c, v, p, w: case((c == v, 1), else_=0) == 1,
    "literal eq": lambda c, v, p, w: literal(v) == v,
    "literal column": lambda c, v, p, w: literal_column("1") == 1,
    "true": lambda c, v, p, w: true(),
    "false": lambda c, v, p, w: false(),
    "null": lambda c, v, p, w: c == null(),
    "subquery": lambda c, v, p, w: c.in_(select(literal(v)).scalar_subquery()),
}

# Select lists over a column c.
PROJECTIONS: dict[str, Callable[[Any], list[Any]]] = {
    "column": lambda c: [c],
    "label": lambda c: [c.label("x")],
    "literal": lambda c: [literal(1)],
    "arithmetic": lambda c: [c + 1],
    "function": lambda c: [func.lower(c)],
    "count": lambda c: [func.count(c)],
    "max": lambda c: [func.max(c)],
    "distinct": lambda c: [distinct(c)],
    "cast": lambda c: [cast(c, String)],
    "case": lambda c: [case((c.is_(None), 0), else_=1)],
}


def _outcome(engine: Engine, statement: Any) -> tuple[str, Any]:
    try:
        with engine.connect() as conn:
            rows = conn.execute(statement).all()
    except CompileError as error:
        return "refused", str(error)
    except StatementError as error:
        if isinstance(error.orig, CompileError):
            return "refused", str(error.orig)
        if isinstance(error, DBAPIError):
            return "error", str(error.orig)
        raise
    return "rows", sorted((tuple(row) for row in rows), key=repr)


# DynamoDB's own functions: SQLite cannot judge them, they must only never be rejected by DynamoDB.
DYNAMODB_ONLY = {"size"}


def _comparable(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows with numbers as floats (exact for the oracle's values: SQLite returns Numeric with
    its scale, DynamoDB without), in a stable order."""
    numbers = (int, float, Decimal)
    rows = [
        tuple(float(v) if isinstance(v, numbers) and not isinstance(v, bool) else v for v in r) for r in rows
    ]
    return sorted(rows, key=repr)


def _judged(sqlite: Engine, dynamodb: Engine, statement: Any, dynamodb_only: bool) -> tuple[str, str] | None:
    """None when the construct is fine; else (what happened, details)."""
    try:
        with sqlite.connect() as conn:
            expected = sorted((tuple(row) for row in conn.execute(statement).all()), key=repr)
    except Exception:
        expected = None  # SQLite cannot run it either: only a refusal is acceptable on DynamoDB
    kind, actual = _outcome(dynamodb, statement)
    if kind == "refused":
        return None
    if kind == "error":
        return "reached DynamoDB and was rejected", actual
    if dynamodb_only:
        return None
    if expected is None:
        return "ran on DynamoDB though SQLite cannot run it", repr(actual)
    if _comparable(actual) != _comparable(expected):
        return "rows differ from SQLite's", f"{actual[:5]} != {expected[:5]}"
    return None


def test_every_construct_runs_with_sqlites_rows_or_is_refused_before_sending(databases):
    sqlite, dynamodb, table = databases
    table: Table
    problems = []
    tried = 0
    # arithmetic on a string or boolean column is built with a deprecation warning, then refused
    warnings.simplefilter("ignore", SADeprecationWarning)
    for name, (value, prefix, other) in SAMPLES.items():
        column = table.c[name]
        for construct, condition in CONDITIONS.items():
            try:
                where = condition(column, value, prefix, other)
            except Exception as error:  # SQLAlchemy itself has no such construct for this type
                assert isinstance(error, (TypeError, NotImplementedError, ValueError, ArgumentError)), error
                continue
            statement = select(table.c.pk, table.c.sk).where(where)
            tried += 1
            judged = _judged(sqlite, dynamodb, statement, construct in DYNAMODB_ONLY)
            if judged is not None:
                problems.append(f"{construct} on {name}: {judged[0]}: {judged[1][:200]}")
        for projection, columns in PROJECTIONS.items():
            statement = select(*columns(column)).select_from(table).where(table.c.pk == "P1")
            tried += 1
            judged = _judged(sqlite, dynamodb, statement, False)
            if judged is not None:
                problems.append(f"select {projection} of {name}: {judged[0]}: {judged[1][:200]}")
    assert tried > 400
    assert problems == [], "\n".join(problems)
