"""Each operator a WHERE may hold, defined once: how the compiler writes it in PartiQL, what it
means as a Python test of an item, the part it can play in a key condition, and what it means
in SQL text. The compiler, the Python predicate (which decides a WHERE over the items a
transaction wrote, and on the client), the access-path planner, key templates and the SQL-text
translator all read this table, so they cannot disagree.

The Python test is SQL's, three-valued: it holds only where SQL says TRUE. A test of a missing
attribute (absent, or stored as NULL) or with a NULL value is unknown, so it does not hold;
values of different DynamoDB types never compare (DynamoDB's rule, which the compiler's guards
make DynamoDB's own answer agree with).

To add an operator: one ``Operator`` below (its renderer is a method of the compiler's
conditions, compiler/conditions.py), and its tests; tests/dialect/test_operators.py fails for an
operator the compiler accepts without an entry here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy.sql import operators

# What a test reads of an item where the attribute (or path) is absent.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()

_NUMBERS = (int, float, Decimal)
_DOCUMENTS = (dict, list, set, frozenset)


def kind(value: Any) -> type | None:
    """The DynamoDB type of a scalar, as a Python class (every number is a Decimal to DynamoDB);
    None for a value DynamoDB does not order (a document, a set, NULL)."""
    if isinstance(value, bool):
        return bool
    if isinstance(value, _NUMBERS):
        return Decimal
    return type(value) if isinstance(value, (str, bytes)) else None


def present(value: Any) -> bool:
    """Whether an attribute (or a compared value) has a value: SQL's NOT NULL."""
    return value is not MISSING and value is not None


def equal(stored: Any, value: Any) -> bool:
    """DynamoDB's = : the same type throughout and equal values (a NULL inside a document equals
    NULL, a number never equals true, maps, lists and sets compare whole)."""
    if isinstance(stored, dict):
        return (
            isinstance(value, dict)
            and stored.keys() == value.keys()
            and all(equal(stored[k], value[k]) for k in stored)
        )
    if isinstance(stored, list):
        return isinstance(value, list) and len(stored) == len(value) and all(map(equal, stored, value))
    if isinstance(stored, (set, frozenset)):
        return isinstance(value, (set, frozenset)) and stored == value
    if stored is None or value is None:
        return stored is value
    return kind(stored) is not None and kind(stored) is kind(value) and stored == value


def canonical(value: Any) -> Any:
    """A value as a hashable key, equal where ``equal`` says values are (1 and 1.0 are one
    number, True is no number, a string is never bytes); a missing attribute, a stored NULL
    and SQL's NULL are one key, as GROUP BY and DISTINCT take them."""
    if value is MISSING or value is None:
        return (None,)
    if isinstance(value, bool):
        return ("BOOL", value)
    if isinstance(value, _NUMBERS):
        return ("N", value)
    if isinstance(value, dict):
        return ("M", tuple(sorted((k, canonical(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("L", tuple(canonical(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("SET", frozenset(canonical(v) for v in value))
    return (type(value).__name__, value)


def _ordered(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """An ordering comparison: both present, of one orderable type (not booleans)."""

    def holds(stored: Any, value: Any) -> bool:
        if not (present(stored) and present(value)):
            return False
        which = kind(stored)
        return which is not None and which is not bool and which is kind(value) and compare(stored, value)

    return holds


def _eq(stored: Any, value: Any) -> bool:
    return present(stored) and present(value) and equal(stored, value)


def _ne(stored: Any, value: Any) -> bool:
    # DynamoDB's <> is TRUE for a value of another type, as SQL's is for a different value
    return present(stored) and present(value) and not equal(stored, value)


_ge, _le = _ordered(lambda a, b: a >= b), _ordered(lambda a, b: a <= b)
_lt, _gt = _ordered(lambda a, b: a < b), _ordered(lambda a, b: a > b)


def _in(stored: Any, values: Sequence[Any]) -> bool:
    return any(_eq(stored, value) for value in values)


def _not_in(stored: Any, values: Sequence[Any]) -> bool:
    # x NOT IN (a, NULL) is x <> a AND x <> NULL: never TRUE; x NOT IN () is TRUE, for a NULL x too
    if not values:
        return True
    return present(stored) and all(present(v) for v in values) and not any(equal(stored, v) for v in values)


def _between(stored: Any, bounds: Sequence[Any]) -> bool:
    low, high = bounds
    return _ge(stored, low) and _le(stored, high)


def _not_between(stored: Any, bounds: Sequence[Any]) -> bool:
    low, high = bounds
    return _lt(stored, low) or _gt(stored, high)


def starts_with(stored: Any, prefix: Any) -> bool:
    """DynamoDB's begins_with: a string (or binary) of the prefix's type that begins with it."""
    return isinstance(stored, (str, bytes)) and type(stored) is type(prefix) and stored.startswith(prefix)


@functools.lru_cache(maxsize=256)
def like_pattern(pattern: str, escape: str | None = None) -> re.Pattern[str]:
    """SQL's LIKE pattern as a regular expression of a whole string: ``%`` any run of characters,
    ``_`` one, the escape character makes the next one literal. Case-sensitive, as begins_with
    is (SQLite with PRAGMA case_sensitive_like). A pattern ending in its escape character
    matches nothing (SQLite's answer)."""
    parts: list[str] = []
    characters = iter(pattern)
    for character in characters:
        if character == escape:
            escaped = next(characters, None)
            if escaped is None:
                return re.compile("(?!)")
            parts.append(re.escape(escaped))
        elif character == "%":
            parts.append(".*")
        elif character == "_":
            parts.append(".")
        else:
            parts.append(re.escape(character))
    return re.compile("".join(parts), re.DOTALL)


def like(stored: Any, pattern: Any) -> bool:
    """SQL's LIKE of a string: ``pattern`` is the pattern (no escape character), or what
    like_pattern made of one with its escape character."""
    if isinstance(pattern, str):
        pattern = like_pattern(pattern)
    return (
        isinstance(stored, str) and isinstance(pattern, re.Pattern) and pattern.fullmatch(stored) is not None
    )


def contains(stored: Any, value: Any) -> bool:
    """DynamoDB's contains: a substring, or a member of a set or list of the value's type."""
    if isinstance(stored, (str, bytes)):
        return type(stored) is type(value) and value in stored
    if isinstance(stored, (set, frozenset, list)):
        return any(kind(member) is kind(value) and member == value for member in stored)
    return False


def _not(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """The SQL negation of a two-valued test: unknown (so not TRUE) where either side is NULL."""
    return lambda stored, value: present(stored) and present(value) and not test(stored, value)


@dataclass(frozen=True)
class Operator:
    """One operator a WHERE may hold.

        ``holds(stored, value)``: the Python test (see the module docstring); ``value`` is the
        compared value, an IN list's values, BETWEEN's two bounds, or None for IS [NOT] NULL.
        ``render``: the method of the compiler's conditions that writes it. ``keys``: the key
        conditions it can be ("hash": the partition key, as = or IN; "range": the sort key).
        ``requires_presence``: FALSE for an item without the attribute, so a sparse index holds
        every match. ``null_never_true``: a NULL value makes it unknown. ``ordering``: it orders
        values (DynamoDB orders no booleans or sets); ``string_test``: it tests strings, sets or
        lists (not numbers). ``text``: the sqlglot expression classes that mean it in SQL text, for
    an operator written between two operands (sql_text/to_core.py builds the others by shape: IN,
    BETWEEN, IS, LIKE and DynamoDB's functions).
    """

    op: Any
    words: str
    holds: Callable[[Any, Any], bool]
    render: str
    keys: frozenset[str] = frozenset()
    requires_presence: bool = True
    null_never_true: bool = True
    ordering: bool = False
    string_test: bool = False
    text: tuple[str, ...] = ()


_HASH_AND_RANGE, _RANGE = frozenset({"hash", "range"}), frozenset({"range"})

OPERATORS: dict[Any, Operator] = {
    o.op: o
    for o in (
        Operator(operators.eq, "=", _eq, "comparison", _HASH_AND_RANGE, text=("EQ",)),
        Operator(operators.ne, "<>", _ne, "guarded_comparison", text=("NEQ",)),
        Operator(operators.lt, "<", _lt, "comparison", _RANGE, ordering=True, text=("LT",)),
        Operator(operators.le, "<=", _le, "comparison", _RANGE, ordering=True, text=("LTE",)),
        Operator(operators.gt, ">", _gt, "comparison", _RANGE, ordering=True, text=("GT",)),
        Operator(operators.ge, ">=", _ge, "comparison", _RANGE, ordering=True, text=("GTE",)),
        Operator(operators.in_op, "IN", _in, "in_list", frozenset({"hash"})),
        Operator(operators.not_in_op, "NOT IN", _not_in, "not_in_list"),
        Operator(operators.between_op, "BETWEEN", _between, "between", _RANGE, ordering=True),
        Operator(operators.not_between_op, "NOT BETWEEN", _not_between, "not_between", ordering=True),
        Operator(
            operators.is_,
            "IS NULL",
            lambda stored, _: not present(stored),
            "is_null",
            requires_presence=False,
            null_never_true=False,
        ),
        Operator(
            operators.is_not,
            "IS NOT NULL",
            lambda stored, _: present(stored),
            "is_not_null",
            null_never_true=False,
        ),
        Operator(
            operators.startswith_op, "startswith()", starts_with, "begins_with", _RANGE, string_test=True
        ),
        Operator(
            operators.not_startswith_op,
            "NOT startswith()",
            _not(starts_with),
            "not_begins_with",
            string_test=True,
        ),
        Operator(operators.like_op, "LIKE", like, "like", _RANGE, string_test=True),
        Operator(operators.not_like_op, "NOT LIKE", _not(like), "not_like", string_test=True),
        Operator(operators.contains_op, "contains()", contains, "contains", string_test=True),
        Operator(
            operators.not_contains_op, "NOT contains()", _not(contains), "not_contains", string_test=True
        ),
    )
}


def _document(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda stored, value: stored is not MISSING and test(stored, value)


# The tests of a whole JSON attribute, where a stored NULL is JSON's null: a value (as SQL stores
# JSON's null as the text 'null'), so only a missing attribute is SQL's NULL. A compared None is
# JSON.NULL's (SQL's NULL never gets this far: value_checks.py decides that no row matches).
DOCUMENT_TESTS: dict[Any, Callable[[Any, Any], bool]] = {
    operators.is_: lambda stored, _: stored is MISSING,
    operators.is_not: lambda stored, _: stored is not MISSING,
    operators.eq: _document(equal),
    operators.ne: _document(lambda stored, value: not equal(stored, value)),
    operators.in_op: _document(lambda stored, values: any(equal(stored, v) for v in values)),
    operators.not_in_op: _document(lambda stored, values: not any(equal(stored, v) for v in values)),
}


def having(**wanted: Any) -> frozenset[Any]:
    """SQLAlchemy's operators whose definitions have these field values (``ordering=True``), or
    play this key role (``keys="range"``)."""
    return frozenset(
        o.op
        for o in OPERATORS.values()
        if all(
            (value in o.keys) if field == "keys" else getattr(o, field) == value
            for field, value in wanted.items()
        )
    )


HASH_KEY = having(keys="hash")
RANGE_KEY = having(keys="range")
REQUIRES_PRESENCE = having(requires_presence=True)
NULL_NEVER_TRUE = having(null_never_true=True)
ORDERINGS = having(ordering=True)
STRING_TESTS = having(string_test=True)
# the operators written between an attribute and a value: x = ?, x <> ?, x < ? ...
COMPARISONS = frozenset(o.op for o in OPERATORS.values() if o.text)


def words(op: Any) -> str:
    """An operator as a message names it: its definition's words, else its Python name."""
    known = OPERATORS.get(op)
    return known.words if known is not None else getattr(op, "__name__", str(op)).rstrip("_")
