"""The condition tree in SQL's three-valued logic: NOTs pushed down to the tests, each negated
test replaced by its guarded opposite, bare boolean attributes compared with true. The compiler
renders this tree; what it means is decided here once."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, TypeDecorator, and_, false, func, or_, true
from sqlalchemy.sql import elements, functions, operators
from sqlalchemy.sql.selectable import Alias, Subquery

from ...exc import refuse
from ..operators import COMPARISONS

_PRESENCE_TESTS = ("attribute_exists", "attribute_not_exists", "attribute_type")
NEGATED_FUNCTIONS = {"attribute_exists": "attribute_not_exists", "attribute_not_exists": "attribute_exists"}


def has_affinity(type_: Any, generic: type) -> bool:
    """Whether ``type_`` is ``generic`` or a TypeDecorator over it."""
    while isinstance(type_, TypeDecorator):
        type_ = type_.impl_instance
    return isinstance(type_, generic)


def is_document(clause: Any) -> bool:
    """A whole JSON attribute (not a path into one): a stored NULL in it is JSON's null, a value,
    and only an absent attribute is SQL's NULL (DynamoJSON)."""
    return isinstance(clause, elements.ColumnClause) and has_affinity(clause.type, JSON)


def is_boolean_attribute(clause: Any) -> bool:
    return (
        isinstance(clause, elements.ColumnClause)
        and not clause.is_literal
        and has_affinity(clause.type, Boolean)
    )


def condition(clause: Any, present: frozenset[str] = frozenset()) -> Any:
    """A WHERE clause with its NOTs pushed down to the tests and bare boolean attributes
    compared with true, so every test can carry the guard SQL's three-valued logic needs.
    ``present`` names attributes every item read has (an index's keys, reading the index)."""
    if isinstance(clause, elements.BooleanClauseList) and clause.operator in (operators.and_, operators.or_):
        parts = [condition(c, present) for c in clause.clauses]
        if all(new is old for new, old in zip(parts, clause.clauses, strict=True)):
            return clause
        return _combine(clause.operator, parts)
    if isinstance(clause, elements.Grouping):
        return condition(clause.element, present)
    if isinstance(clause, elements.UnaryExpression) and clause.operator is operators.inv:
        return negated(clause.element, present)
    if (
        isinstance(clause, elements.BinaryExpression)
        and clause.operator in (operators.is_, operators.is_not)
        and isinstance(clause.right, elements.Null)
        and _always_present(clause.left, present)
    ):
        # A table key always has a value (an index holds only items with its keys), and
        # DynamoDB refuses to compare one with NULL, even by attribute_type() (findings).
        return false() if clause.operator is operators.is_ else true()
    if isinstance(clause, functions.FunctionElement) and clause.name.lower() in _PRESENCE_TESTS:
        arguments = list(clause.clauses)
        if arguments and isinstance(arguments[0], elements.ColumnClause) and arguments[0].name in present:
            # Reading an index, DynamoDB Local fails attribute_exists() of its keys with
            # InternalFailure, and refuses attribute_type() of one ("Condition parameter type
            # does not match schema type"). Elsewhere they stay: attribute_exists() of the table's
            # key makes a write conditional (alembic_like_migrations/version.py).
            name = clause.name.lower()
            if name == "attribute_type":
                refuse(
                    f"attribute_type() of {arguments[0].name}, a key attribute of the index read",
                    f"every item read has {arguments[0].name}, of the key's type; leave the test out",
                )
            return true() if name == "attribute_exists" else false()
    if isinstance(clause, elements.AsBoolean) and is_boolean_attribute(clause.element):
        return equals(clause.element, true() if clause.operator is operators.is_true else false())
    if is_boolean_attribute(clause):
        return equals(clause, true())
    if isinstance(clause, elements.ColumnClause) and not clause.is_literal:
        refuse(
            f"the {clause.type.__visit_name__} attribute {clause.name} as a condition",
            f"only a Boolean attribute is a condition by itself; compare {clause.name} with a value, or "
            f"test it with {clause.name}.is_not(None)",
        )
    return clause


def _always_present(clause: Any, present: frozenset[str]) -> bool:
    """A key attribute of what is read: the table's key, or ``present`` (an index's keys)."""
    return getattr(clause, "primary_key", False) or (
        isinstance(clause, elements.ColumnClause) and clause.name in present
    )


def _combine(operator: Any, parts: list[Any]) -> Any:
    """AND/OR of normalised parts, with the constants a key's IS [NOT] NULL became folded away."""
    absorbing, neutral = (
        (elements.False_, elements.True_) if operator is operators.and_ else (elements.True_, elements.False_)
    )
    if any(isinstance(p, absorbing) for p in parts):
        return false() if operator is operators.and_ else true()
    parts = [p for p in parts if not isinstance(p, neutral)]
    if not parts:
        return true() if operator is operators.and_ else false()
    return parts[0] if len(parts) == 1 else (and_ if operator is operators.and_ else or_)(*parts)


def equals(attribute: Any, constant: Any) -> Any:
    # Built directly: `column == true()` would become SQLAlchemy's IS TRUE, which PartiQL lacks.
    return elements.BinaryExpression(attribute, constant, operators.eq, negate=operators.ne)


def negated(clause: Any, present: frozenset[str] = frozenset()) -> Any:
    """NOT clause, as a clause that is TRUE exactly where SQL's NOT is TRUE (not where it is
    unknown): De Morgan down to the tests, each test replaced by its guarded opposite."""
    clause = condition(clause, present)
    if isinstance(clause, elements.BooleanClauseList) and clause.operator in (operators.and_, operators.or_):
        opposite = operators.or_ if clause.operator is operators.and_ else operators.and_
        return _combine(opposite, [negated(c, present) for c in clause.clauses])
    if isinstance(clause, elements.UnaryExpression) and clause.operator is operators.inv:
        return condition(clause.element, present)
    if isinstance(clause, elements.BinaryExpression) and clause.negate is not None:
        if (
            clause.operator is operators.eq
            and is_boolean_attribute(clause.left)
            and isinstance(clause.right, elements.True_)
        ):
            return equals(clause.left, false())
        return ~clause
    if isinstance(clause, functions.FunctionElement) and clause.name.lower() in NEGATED_FUNCTIONS:
        return getattr(func, NEGATED_FUNCTIONS[clause.name.lower()])(*clause.clauses)
    if isinstance(clause, (elements.True_, elements.False_)):
        return ~clause
    refuse(f"NOT of {type(clause).__name__}", "write the opposite condition directly")


def table_of(from_: Any) -> Any:
    """The Table behind an alias of it: with one FROM and no aliases in PartiQL, they are the same.
    (The ORM aliases a table to load a relationship to another class of the same table.)"""
    while isinstance(from_, Alias) and not isinstance(from_, Subquery):
        from_ = from_.element
    return from_


def described(from_: Any) -> str:
    """A FROM that is not a table as a message names it: its kind, then its name unless it is
    anonymous (the ORM's subqueries are named only when compiled)."""
    kind = {"fromgrouping": "parenthesised join"}.get(
        type(from_).__name__.lower(), type(from_).__name__.lower()
    )
    name = getattr(from_, "name", None)
    return kind if not isinstance(name, str) or "%(" in name else f"{kind} {name}"


def attribute_first(term: Any) -> Any:
    """``? = "pk"`` (as relationship loaders write it) as ``"pk" = ?``, so it can be a key condition."""
    if (
        isinstance(term, elements.BinaryExpression)
        and term.operator in COMPARISONS
        and isinstance(term.left, elements.BindParameter)
        and isinstance(term.right, elements.ColumnClause)
    ):
        return elements.BinaryExpression(
            term.right, term.left, operators.mirror(term.operator), type_=term.type
        )
    return term


def terms_of(criteria: Any, present: frozenset[str] = frozenset()) -> list[Any]:
    """The top-level AND terms of a WHERE, each normalised once (see condition; ``present``:
    the attributes every item read has). The AND is flattened before its terms are normalised,
    so that ``where(a, b)`` and ``where(and_(a, b))`` give the same terms even where one of
    them folds to a constant."""
    terms: list[Any] = []

    def flatten(clause: Any, normalised: bool) -> None:
        while isinstance(clause, elements.Grouping):
            clause = clause.element
        if isinstance(clause, elements.BooleanClauseList) and clause.operator is operators.and_:
            for part in clause.clauses:
                flatten(part, normalised)
        elif not normalised:
            flatten(condition(clause, present), True)
        else:
            terms.append(attribute_first(clause))

    for criterion in criteria:
        flatten(criterion, False)
    return terms


def is_column(clause: Any, column: Any) -> bool:
    """Whether ``clause`` is ``column`` of its table (or of an alias of the table)."""
    return (
        isinstance(clause, elements.ColumnClause)
        and getattr(clause, "table", None) is not None
        and table_of(clause.table) is column.table
        and clause.name == column.name
    )


def is_on(term: Any, column: Any, ops: set | None) -> bool:
    if column is None or not isinstance(term, elements.BinaryExpression):
        return False
    return is_column(term.left, column) and (ops is None or term.operator in ops)


def is_json_element(clause: Any) -> bool:
    return isinstance(clause, elements.BinaryExpression) and clause.operator in (
        operators.json_getitem_op,
        operators.json_path_getitem_op,
    )


def is_partition_or(term: Any, column: Any) -> bool:
    """``pk = a OR pk = b``: DynamoDB reads it as a Query, each partition once even when a value
    repeats (unlike IN; docs/partiql-findings.md)."""
    return (
        column is not None
        and isinstance(term, elements.BooleanClauseList)
        and term.operator is operators.or_
        and all(is_on(part, column, {operators.eq}) for part in term.clauses)
    )


def key_tuple_in(term: Any, columns: list[Any]) -> list[Any] | None:
    """The key columns, in the tuple's order, of ``tuple_(pk, sk).in_(keys)`` naming every one of
    ``columns`` (the table's key) once; None for any other term."""
    if not (
        isinstance(term, elements.BinaryExpression)
        and term.operator is operators.in_op
        and isinstance(term.left, elements.Tuple)
    ):
        return None
    named = list(term.left.clauses)
    matched = [next((c for c in columns if is_column(n, c)), None) for n in named]
    if (
        len(named) != len(columns)
        or any(c is None for c in matched)
        or len({c.name for c in matched}) != len(columns)
    ):
        return None
    return matched
