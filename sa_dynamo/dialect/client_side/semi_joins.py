"""Semi-joins: ``col IN (SELECT ...)``, ``col NOT IN (SELECT ...)``, ``EXISTS (SELECT ...)`` and
``NOT EXISTS``, each a top-level AND term of a WHERE. The subquery is read once by its own plan
(an ordinary statement: planned, guarded by the scan policy, laid over the transaction's
writes); the outer rows are then tested against the values it returned, with SQL's NULL rules.
A correlated EXISTS is the same semi-join on its correlation columns (``inner = outer`` terms):
the subquery without them reads the inner columns, and an outer row matches when its columns'
values are among them. When the outer column is a partition key of the driving table or of a
global index and its read would be a scan, the outer rows are fetched by those values instead
(fetches.py: 50 an IN, or whole keys 25 a batch)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.sql import elements, operators, selectable, visitors

from ...exc import refuse
from ...sqlalchemy_private import plain, where_criteria
from ..compiler.predicate import Values
from ..operators import MISSING, canonical
from .fetches import Fetch
from .sides import Reader
from .steps import Step, run, step

KINDS = ("in", "not in", "exists", "not exists")


@dataclass(frozen=True)
class SemiTerm:
    """One semi-join term as written: its kind, the outer clauses compared (none for an
    uncorrelated EXISTS), and the SELECT that reads their inner values."""

    kind: str
    outer: tuple[Any, ...]
    inner: Any


def _subquery(clause: Any) -> Any:
    """The SELECT inside a ScalarSelect, an Exists or a Grouping; None when there is none."""
    while not isinstance(clause, selectable.Select):
        if not isinstance(clause, (elements.Grouping, selectable.ScalarSelect, selectable.Exists)):
            return None
        clause = clause.element
    return clause


def _conjuncts(criteria: Iterable[Any]) -> list[Any]:
    found: list[Any] = []

    def flatten(clause: Any) -> None:
        while isinstance(clause, elements.Grouping):
            clause = clause.element
        if isinstance(clause, elements.BooleanClauseList) and clause.operator is operators.and_:
            for part in clause.clauses:
                flatten(part)
        else:
            found.append(clause)

    for criterion in criteria:
        flatten(criterion)
    return found


def _kind(term: Any) -> tuple[str, Any, Any] | None:
    """(kind, left operand or None, subquery) of a semi-join term, None for any other term."""
    if isinstance(term, elements.BinaryExpression) and term.operator in (
        operators.in_op,
        operators.not_in_op,
    ):
        inner = _subquery(term.right)
        if inner is not None:
            return ("in" if term.operator is operators.in_op else "not in"), term.left, inner
        return None
    negated = isinstance(term, elements.UnaryExpression) and term.operator is operators.inv
    body = term.element if negated else term
    while isinstance(body, elements.Grouping):
        body = body.element
    if isinstance(body, selectable.Exists):
        return ("not exists" if negated else "exists"), None, _subquery(body)
    return None


def _has_subquery(clause: Any) -> bool:
    return any(
        isinstance(e, (selectable.Select, selectable.ScalarSelect, selectable.Exists))
        for e in visitors.iterate(clause)
    )


def has_semi_join(criteria: Iterable[Any]) -> bool:
    """Whether a WHERE holds a subquery (the compiler computes such a SELECT on the client)."""
    return any(_has_subquery(c) for c in criteria)


def split(criteria: Iterable[Any]) -> tuple[list[tuple[str, Any, Any]], list[Any]]:
    """The semi-join terms of a WHERE's top-level AND, and its other terms; a subquery anywhere
    else (under OR, in a comparison) is refused."""
    semis, rest = [], []
    for term in _conjuncts(criteria):
        found = _kind(term)
        if found is not None:
            semis.append(found)
        elif _has_subquery(term):
            refuse(
                "a subquery other than a top-level IN (SELECT ...), NOT IN (SELECT ...), EXISTS or NOT EXISTS",
                "AND the IN/EXISTS with the rest of the WHERE (not under OR or NOT of a larger "
                "condition), or run the subquery on its own and pass its rows as parameters",
            )
        else:
            rest.append(term)
    return semis, rest


def without_semi_joins(criteria: Iterable[Any]) -> list[Any]:
    """The WHERE's terms other than its semi-joins (an UPDATE's condition on each item written:
    DynamoDB can test no subquery there, the read of the keys has decided them)."""
    return split(criteria)[1]


def semi_term(kind: str, left: Any, inner: Any, reader: Reader) -> SemiTerm:
    """The semi-join a term is: an IN's subquery as written, an EXISTS's without the terms
    that correlate it (whose inner columns it reads instead)."""
    if kind in ("in", "not in"):
        if isinstance(left, elements.Tuple) or len(inner.selected_columns) != 1:
            refuse(
                f"a tuple {kind.upper()} (SELECT ...)",
                "select one column in the subquery, or write it as EXISTS with the columns compared by ==",
            )
        return SemiTerm(kind, (left,), inner)
    froms = inner.get_final_froms()
    outer_ids = {id(side.source) for side in reader.sides}
    correlated = len(froms) > 1  # SQLAlchemy correlates a subquery's FROMs only when others remain
    own = [f for f in froms if not (correlated and id(plain(f)) in outer_ids)]
    if not own:
        refuse("an EXISTS whose every table is the outer query's", "name the subquery's own table in it")
    outer, inner_columns, rest = [], [], []
    for term in _conjuncts(where_criteria(inner)):
        columns = [e for e in visitors.iterate(term) if isinstance(e, elements.ColumnClause)]
        outside = [c for c in columns if correlated and reader.side_of(c) is not None]
        if not outside:
            rest.append(term)
            continue
        ends = [getattr(term, "left", None), getattr(term, "right", None)]
        if not (
            isinstance(term, elements.BinaryExpression)
            and term.operator is operators.eq
            and all(isinstance(e, elements.ColumnClause) and not e.is_literal for e in ends)
            and len(outside) == 1
        ):
            refuse(
                f"{kind.upper()} correlated by {term}",
                "correlate the subquery by == between one of its columns and one of the outer query's "
                "(other tests of the outer columns go in the outer WHERE)",
            )
        mine = ends[0] if ends[1] is outside[0] else ends[1]
        outer.append(outside[0])
        inner_columns.append(mine)
    if not inner_columns:  # uncorrelated: whether any row exists
        first = own[0]
        inner_columns = [next(iter([*first.primary_key, *first.columns]))]
    return SemiTerm(kind, tuple(outer), select(*inner_columns).select_from(*own).where(*rest))


@dataclass(frozen=True)
class SemiJoin:
    """A semi-join as the client runs it: the read of the inner values, and what an outer row
    is tested on. ``outer``: each outer clause's operand over a joined row."""

    kind: str
    outer: tuple[Any, ...]
    read: Step
    types: tuple[Any, ...]

    def values(self, context: Any) -> tuple[dict[tuple, tuple], bool, bool]:
        """The distinct inner values (canonical key -> values as stored), whether a row had a
        NULL among them, and whether the subquery returned any row."""
        found: dict[tuple, tuple] = {}
        null = False
        result = run(context, self.read)
        stored = [t.bind_processor(context.dialect) for t in self.types[: len(self.outer)]]
        count = 0
        width = len(self.outer)  # an uncorrelated EXISTS reads a column to learn that rows exist
        for whole in result:
            count += 1
            row = tuple(whole)[:width]
            if any(v is None for v in row):
                null = True
                continue
            values = tuple(p(v) if p is not None else v for p, v in zip(stored, row, strict=True))
            found.setdefault(tuple(canonical(v) for v in values), values)
        return found, null, count > 0

    def test(self, found: tuple[dict[tuple, tuple], bool, bool]) -> Any:
        """The test of a joined row with SQL's rules: NULL IN (...) is never TRUE; x NOT IN a
        result holding a NULL is never TRUE, NOT IN an empty one always is (even for NULL);
        NOT EXISTS matches a NULL correlation column (no inner row equals it)."""
        keys, null, any_row = found
        kind, outer = self.kind, self.outer

        def matches(row: Any, values: Values) -> bool:
            key = [operand(row, values) for operand in outer]
            known = all(v is not MISSING and v is not None for v in key)
            inside = known and tuple(canonical(v) for v in key) in keys
            if kind == "in":
                return inside
            if kind == "not in":
                return not any_row or (not null and known and not inside)
            return inside if kind == "exists" else not inside

        return matches


@dataclass(frozen=True)
class SemiDriver:
    """The driving side fetched by key for the values a semi-join read (its read would be a
    scan): ``fetch`` keys it by the semi-join's values, standing as one more side of the row."""

    side: int
    semi: int
    fetch: Fetch

    @property
    def step(self) -> Step:
        return self.fetch.read.step

    def items(self, context: Any, found: dict[tuple, tuple], values: Values) -> list[dict[str, Any]]:
        pseudo = self.fetch.by[0][1][0]
        rows = [
            [{} for _ in range(pseudo)] + [{str(i): v for i, v in enumerate(key)}] for key in found.values()
        ]
        return [row[self.side] for row in self.fetch.join(context, rows, values)]


def semi_join(compiler: Any, term: SemiTerm, operands: tuple[Any, ...], number: int) -> SemiJoin:
    """The run-time part of ``term`` (``operands``: its outer clauses over a joined row)."""
    read = step(compiler, term.inner, f"the subquery of {term.kind.upper()} {number + 1}, read once")
    return SemiJoin(term.kind, operands, read, tuple(c.type for c in term.inner.selected_columns))
