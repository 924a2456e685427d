"""What a ``do_orm_execute`` listener needs to answer a selectin load itself, when SQLAlchemy
would send a JOIN that DynamoDB cannot run: the loader options carried over to the Queries sent
instead, the relationship's order applied in Python, and rows in the shape the loader reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.engine import IteratorResult, Result
from sqlalchemy.engine.result import SimpleResultMetaData
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import ORMExecuteState, RelationshipProperty
from sqlalchemy.orm.exc import UnmappedColumnError
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import UnaryExpression

from ..sqlalchemy_private import with_load_options_of


def replacement_query(state: ORMExecuteState, query: Any) -> Any:
    """``query`` with the execution options and loader options of the load it answers.

    Chained options (``selectinload(A.b).selectinload(B.c)``), relationship criteria
    (``A.b.and_(...)``) and propagated ``with_loader_criteria`` live on the statement replaced,
    rooted at the top-level entity; dropping them would load the wrong rows. SQLAlchemy has no
    public way to read a statement's options or to say which relationship path a statement loads,
    so this does what its own relationship loaders do (see sqlalchemy_private.with_load_options_of).
    """
    query = query.execution_options(**state.statement.get_execution_options())
    return with_load_options_of(state.statement, query)


def _sort_keys(prop: RelationshipProperty) -> list[tuple[str, bool]]:
    """(attribute, descending) for the relationship's order_by, applied in Python: DynamoDB
    sorts each partition on its own, and one Query may span several."""
    if not prop.order_by:
        return []
    result = []
    for clause in prop.order_by:
        element, descending = clause, False
        if isinstance(clause, UnaryExpression) and clause.modifier in (operators.asc_op, operators.desc_op):
            element, descending = clause.element, clause.modifier is operators.desc_op
        try:
            attribute = prop.mapper.get_property_by_column(element).key
        except UnmappedColumnError as error:
            raise InvalidRequestError(
                f"selectinload({prop}): order_by {clause} is not a column of {prop.mapper.class_.__name__}; "
                "order the collection by its attributes (usually the sort key)"
            ) from error
        result.append((attribute, descending))
    return result


def _none_first(value: Any) -> tuple[bool, Any]:
    return (value is not None, value)


def selectin_result(
    state: ORMExecuteState,
    prop: RelationshipProperty,
    parent_keys: Sequence[tuple[Any, ...]],
    children_of: Callable[[tuple[Any, ...]], list[Any]],
) -> Result[Any]:
    """The rows SQLAlchemy's selectin loader reads: per parent key, in order, one row per child
    (ordered by the relationship's order_by): the parent's key columns (SQLAlchemy 2.1) or the
    key as one tuple (2.0's bundle), then the child."""
    descriptions = state.statement.column_descriptions
    bundled = len(descriptions) == 2  # 2.0 selects the parent key as one Bundle column
    sort_keys = _sort_keys(prop)
    rows = []
    for key in parent_keys:
        children = list(children_of(tuple(key)))
        for attribute, descending in reversed(sort_keys):  # stable sorts, last key first
            children.sort(key=lambda child: _none_first(getattr(child, attribute)), reverse=descending)
        rows.extend((tuple(key), child) if bundled else (*key, child) for child in children)
    return IteratorResult(SimpleResultMetaData([d["name"] for d in descriptions]), iter(rows))
