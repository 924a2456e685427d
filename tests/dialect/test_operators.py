"""Each operator the compiler accepts is defined once (sa_dynamo/dialect/operators.py): a test of
every column operator SQLAlchemy offers fails when the compiler renders one that has no
definition, or a definition lacks its renderer or its Python test."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, bindparam, select
from sqlalchemy.exc import CompileError

from sa_dynamo.dialect.base import DynamoDBDialect
from sa_dynamo.dialect.compiler.normal_form import terms_of
from sa_dynamo.dialect.compiler.predicate import predicate_of
from sa_dynamo.dialect.operators import MISSING, OPERATORS

table = Table(
    "ops", MetaData(), Column("pk", String, primary_key=True), Column("s", String), Column("n", Integer)
)
s, n = table.c.s, table.c.n

# Every test SQLAlchemy's column operators build, by name (a superset of what DynamoDB can do).
PROBES: dict[str, Any] = {
    "==": s == "a",
    "!=": s != "a",
    "<": n < 1,
    "<=": n <= 1,
    ">": n > 1,
    ">=": n >= 1,
    "in_": s.in_(["a", "b"]),
    "not_in": s.not_in(["a", "b"]),
    "between": n.between(1, 2),
    "not_between": ~n.between(1, 2),
    "is_": s.is_(None),
    "is_not": s.is_not(None),
    "startswith": s.startswith("a"),
    "not startswith": ~s.startswith("a"),
    "endswith": s.endswith("a"),
    "contains": s.contains("a"),
    "not contains": ~s.contains("a"),
    "like": s.like("a%"),
    "not_like": s.not_like("a%"),
    "ilike": s.ilike("a%"),
    "not_ilike": s.not_ilike("a%"),
    "istartswith": s.istartswith("a"),
    "icontains": s.icontains("a"),
    "regexp_match": s.regexp_match("a.*"),
    "match": s.match("a"),
    "is_distinct_from": s.is_distinct_from("a"),
    "is_not_distinct_from": s.is_not_distinct_from("a"),
    "concat": (s + "x") == "ax",
    "bitwise_and": n.bitwise_and(1) == 1,
    "any_": s == bindparam("list").any_(),
}


def _compiles(condition: Any) -> bool:
    try:
        select(table.c.pk).where(table.c.pk == "p", condition).compile(dialect=DynamoDBDialect())
    except CompileError:
        return False
    return True


@pytest.mark.parametrize("name", PROBES)
def test_an_operator_the_compiler_accepts_has_one_definition_with_a_python_test(name):
    condition = PROBES[name]
    if not _compiles(condition):
        return  # refused before sending: nothing to define
    (term,) = terms_of([condition])
    assert term.operator in OPERATORS, f"{name} compiles but has no definition in operators.py"
    test = predicate_of([term])
    assert test is not None, f"{name} compiles but the predicate cannot evaluate it"
    test({"s": "a", "n": Decimal(1)}, lambda bind: bind.effective_value)  # runs, whatever it answers


def test_the_probes_reach_every_definition():
    """Each definition is rendered by the compiler: its renderer exists and is reached."""
    reached = {terms_of([c])[0].operator for c in PROBES.values() if _compiles(c)}
    assert reached == set(OPERATORS)


@pytest.mark.parametrize("definition", OPERATORS.values(), ids=lambda d: d.words)
def test_an_unknown_value_is_never_true(definition):
    """SQL's three-valued logic: a missing attribute, or a NULL compared, gives no row (IS [NOT]
    NULL aside, which test for it)."""
    values = {"in_list": ["a"], "not_in_list": ["a"], "between": ("a", "b"), "not_between": ("a", "b")}
    value = values.get(definition.render, "a")
    if definition.render in ("is_null", "is_not_null"):
        assert definition.holds(MISSING, None) is (definition.render == "is_null")
        assert definition.holds(None, None) is (definition.render == "is_null")
        return
    assert definition.holds(MISSING, value) is False
    assert definition.holds(None, value) is False
    if definition.null_never_true:
        nulls = (
            [None]
            if definition.render.endswith("in_list")
            else (None, None)
            if "between" in definition.render
            else None
        )
        assert definition.holds("a", nulls) is False


def test_values_of_different_types_never_compare():
    """DynamoDB's rule (and so the PartiQL's answer): 1 and "1" are neither equal nor ordered."""
    for words in ("=", "<", "<=", ">", ">="):
        definition = next(d for d in OPERATORS.values() if d.words == words)
        assert definition.holds("1", Decimal(1)) is False
        assert definition.holds(True, Decimal(1)) is False
    assert next(d for d in OPERATORS.values() if d.words == "<>").holds("1", Decimal(1)) is True
