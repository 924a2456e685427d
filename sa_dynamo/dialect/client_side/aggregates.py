"""GROUP BY and the aggregates, computed on the client with SQL's rules: NULL (an absent
attribute) is skipped by every aggregate, COUNT of no rows is 0 and the others are NULL, a sum
is exact (DynamoDB's numbers are decimals), MIN and MAX follow SQL's order (dbapi/ordering.py),
AVG is a float as SQLite's is (the exact sum over the count), and a group exists only where a
row does. Values compare as DynamoDB compares them: a number is a number whatever its Python
class, a string never equals bytes, and NULLs group together."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Context, Decimal, Inexact, localcontext
from typing import Any

from sqlalchemy.sql import elements, functions, operators

from ...dbapi.errors import DataError
from ...dbapi.ordering import sort_key
from ...exc import refuse
from ..compiler.normal_form import is_document
from ..compiler.predicate import Values
from ..operators import canonical, present

AGGREGATES = frozenset({"count", "sum", "min", "max", "avg"})
# room for the exact sum of DynamoDB's numbers (38 digits, exponents -130 to 125); an inexact
# sum is an error, never a rounded one
_EXACT = Context(prec=400, traps=[Inexact])
Operand = Callable[[Any, Values], Any]


def is_aggregate(clause: Any) -> bool:
    return isinstance(clause, functions.FunctionElement) and clause.name.lower() in AGGREGATES


@dataclass(frozen=True)
class Aggregate:
    """One aggregate of the statement: ``argument`` reads its value from a row (None: COUNT(*))."""

    function: str
    argument: Operand | None
    distinct: bool

    def over(self, rows: list[Any], values: Values) -> Any:
        if self.argument is None:
            return len(rows)
        found = [v for v in (self.argument(row, values) for row in rows) if present(v)]
        if self.distinct:
            found = list({canonical(v): v for v in found}.values())
        if self.function == "count":
            return len(found)
        if not found:
            return None
        if self.function in ("min", "max"):
            return (min if self.function == "min" else max)(found, key=sort_key)
        if not all(isinstance(v, (int, Decimal)) and not isinstance(v, bool) for v in found):
            odd = next(v for v in found if not isinstance(v, (int, Decimal)) or isinstance(v, bool))
            raise DataError(
                f"{self.function.upper()} over a {type(odd).__name__} value: it adds numbers only (an item "
                "written by another program holds another type in this attribute)"
            )
        try:
            with localcontext(_EXACT):
                total = sum(found, Decimal(0))
        except Inexact:
            raise DataError(
                f"{self.function.upper()} needs more than {_EXACT.prec} digits to be exact"
            ) from None
        return total if self.function == "sum" else float(total) / len(found)


def aggregate_of(clause: Any, operand_of: Callable[[Any], Operand]) -> Aggregate:
    """The Aggregate of ``count(*)``, ``count(x)``, ``count(distinct(x))``, ``sum(x)`` ..."""
    name = clause.name.lower()
    arguments = list(clause.clauses)
    if len(arguments) > 1:
        refuse(f"{name}() with {len(arguments)} arguments", f"{name} takes one")
    argument = arguments[0] if arguments else None
    distinct = False
    if isinstance(argument, elements.UnaryExpression) and argument.operator is operators.distinct_op:
        argument, distinct = argument.element, True
    if argument is None or (name == "count" and _counts_rows(argument)):
        if name != "count" or distinct:
            refuse(f"{name}() without a column", f"give {name}() the column it aggregates")
        return Aggregate("count", None, False)
    if not (isinstance(argument, elements.ColumnClause) and not argument.is_literal):
        refuse(f"{name}() of {type(argument).__name__}", "aggregate a column; compute expressions in Python")
    if is_document(argument):
        # the rows read for the client hold None for JSON's null as for SQL's NULL, which SQL
        # tells apart (COUNT counts JSON's null)
        refuse(
            f"{name}() of the JSON column {argument.name} computed on the client",
            f"select {name}() of it alone, without GROUP BY or other aggregates: "
            f"select(func.{name}(...)).where(...), once per group if need be",
        )
    return Aggregate(name, operand_of(argument), distinct)


def _counts_rows(argument: Any) -> bool:
    """COUNT(*) and COUNT of a constant (not NULL) count rows."""
    if isinstance(argument, elements.ColumnClause) and argument.is_literal:
        return argument.name == "*" or argument.name.isdigit()
    return isinstance(argument, elements.BindParameter) and argument.value is not None


@dataclass
class Group:
    """The rows of one group, its key values (one per GROUP BY expression), and the aggregates
    computed over it so far."""

    key: tuple[Any, ...]
    rows: list[Any]
    computed: dict[int, Any] = field(default_factory=dict)

    def value(self, aggregate: Aggregate, values: Values) -> Any:
        number = id(aggregate)
        if number not in self.computed:
            self.computed[number] = aggregate.over(self.rows, values)
        return self.computed[number]


def groups_of(rows: Iterable[Any], keys: list[Operand], values: Values, whole: bool) -> list[Group]:
    """The groups of ``rows`` by the GROUP BY operands ``keys``, in the order they first occur;
    ``whole``: aggregates without GROUP BY, one group of every row (there even when empty)."""
    if whole:
        return [Group((), list(rows))]
    found: dict[tuple, Group] = {}
    for row in rows:
        key = tuple([operand(row, values) for operand in keys])
        same = tuple([canonical(v) for v in key])
        group = found.get(same)
        if group is None:  # a Group made only for a new key, not for every row
            group = found[same] = Group(key, [])
        group.rows.append(row)
    return list(found.values())
