"""Subclass attributes loaded in a second query (``selectin_polymorphic()``,
``polymorphic_load="selectin"``).

SQLAlchemy 2.0 loads them with ``SELECT ... WHERE <primary key> IN (...) ORDER BY <primary key>``.
The rows only fill in objects the first query already put in the identity map, so their order
is never seen (SQLAlchemy 2.1 no longer asks for it); DynamoDB, though, cannot sort across
partitions, and the compiler rightly refuses that ORDER BY. It is dropped here, before compiling.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import ORMExecuteState
from sqlalchemy.sql import elements, operators

from ..sqlalchemy_private import order_by_clauses, where_criteria
from .scope import on_dynamodb


def _is_ordered_subclass_load(statement: Any) -> bool:
    """Whether ``statement`` is SQLAlchemy's ``WHERE <key> IN :primary_keys ORDER BY <key>``:
    the ORDER BY names exactly the columns the IN matches, so it cannot order anything a
    loader keyed by those columns would show."""
    if not isinstance(statement, Select):
        return False
    criteria = where_criteria(statement)
    where = criteria[0] if len(criteria) == 1 else None
    if not (
        isinstance(where, elements.BinaryExpression)
        and where.operator is operators.in_op
        and isinstance(where.right, elements.BindParameter)
        and where.right.key == "primary_keys"
    ):
        return False
    matched = where.left.clauses if isinstance(where.left, elements.Tuple) else [where.left]
    ordered = order_by_clauses(statement)
    return len(ordered) == len(matched) and all(o.compare(m) for o, m in zip(ordered, matched, strict=True))


def drop_subclass_load_ordering(state: ORMExecuteState) -> None:
    if _is_ordered_subclass_load(state.statement) and on_dynamodb(state, state.bind_mapper):
        state.statement = state.statement.order_by(None)
