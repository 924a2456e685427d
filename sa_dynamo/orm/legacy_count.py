"""``session.query(Engineer).filter(...).count()``: the legacy Query counts as ``select(func.count())``.

``Query.count()`` wraps the query in a subquery (``SELECT count(*) FROM (SELECT ...)``), which
PartiQL has no form for. Counting the rows of a subquery whose rows are its WHERE's matches is
counting that WHERE's matches, so a ``do_orm_execute`` listener sends
``select(func.count()).select_from(table).where(...)`` instead: one COUNT over the same
conditions, a Query when they pin the partition key. A subquery whose row count is not its
WHERE's (LIMIT, DISTINCT, GROUP BY, ...) is left alone, and the compiler refuses it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Load, ORMExecuteState
from sqlalchemy.sql import elements, functions
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.selectable import AliasedReturnsRows, Select

from ..sqlalchemy_private import limit_clause, select_extras, statement_options, where_criteria
from .scope import on_dynamodb


def _counts_rows(column: Any) -> bool:
    """``count(*)`` or ``count()``: the number of rows, whatever their values."""
    if isinstance(column, elements.Label):
        column = column.element
    if not isinstance(column, functions.count):
        return False
    arguments = list(column.clauses)
    return not arguments or (
        len(arguments) == 1
        and isinstance(arguments[0], elements.ColumnClause)
        and arguments[0].is_literal
        and arguments[0].name == "*"
    )


def _plain(select_: Select) -> bool:
    """No clause that makes the row count differ from the number of WHERE matches."""
    return limit_clause(select_) is None and not any(select_extras(select_).values())


def _counted_select(statement: Any) -> Select | None:
    """The inner SELECT of ``SELECT count(*) FROM (SELECT ... FROM table WHERE ...)``."""
    if not isinstance(statement, Select) or where_criteria(statement) or not _plain(statement):
        return None
    columns = list(statement.selected_columns)
    froms = statement.get_final_froms()
    if len(columns) != 1 or not _counts_rows(columns[0]) or len(froms) != 1:
        return None
    inner = froms[0]
    while isinstance(inner, AliasedReturnsRows):  # Query.count(): an alias of the subquery
        inner = inner.element
    if not isinstance(inner, Select) or not _plain(inner):
        return None
    inner_froms = inner.get_final_froms()
    if len(inner_froms) != 1 or not isinstance(inner_froms[0], Table):
        return None
    return inner


def _counted_from(inner: Select) -> Any:
    """The mapped class the SELECT reads, or its table for a Core SELECT. The class keeps the
    statement an ORM one, as the listeners after this one expect, with its single-table
    inheritance filter."""
    entities = {d["entity"] for d in inner.column_descriptions if d.get("entity") is not None}
    return entities.pop() if len(entities) == 1 else inner.get_final_froms()[0]


def count_without_subquery(state: ORMExecuteState) -> None:
    """``do_orm_execute``: COUNT over the subquery's own table and WHERE."""
    if not state.is_select:
        return
    inner = _counted_select(state.statement)
    if inner is None or not on_dynamodb(state):
        return
    # Loader options (joinedload, defer, ...) shape loaded objects, and a count loads none;
    # the others (with_loader_criteria, use_index) still apply to the rows counted.
    options = [option for option in statement_options(inner) if not isinstance(option, Load)]
    state.statement = (
        select(func.count())
        .select_from(_counted_from(inner))
        .where(*where_criteria(inner))
        .options(*options)
        .execution_options(**state.statement.get_execution_options())
    )
