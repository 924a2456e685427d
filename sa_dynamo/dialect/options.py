"""The ``dynamodb_index`` execution option: a per-execution ``use_index()``.

It becomes the ``use_index()`` option on the statement before the statement is compiled, so it
is compiled, cached and planned with the index.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import ArgumentError
from sqlalchemy.sql.selectable import Select

from ..constructs import forced_index, use_index


def index_from_execution_options(
    conn: Any, statement: Any, multiparams: Any, params: Any, execution_options: Any
) -> tuple[Any, Any, Any]:
    """``before_execute`` hook: ``dynamodb_index="gsi1"`` becomes ``use_index("gsi1")`` on the
    statement, so it is compiled, cached and planned with the index."""
    name = execution_options.get("dynamodb_index")
    if name is None:
        return statement, multiparams, params
    if not isinstance(statement, Select):
        raise ArgumentError(
            f"dynamodb_index applies to select() statements, not {type(statement).__name__}: in SQL text, "
            'read the index as FROM "table"."index"'
        )
    current = forced_index(statement)
    if current is not None and current != name:
        raise ArgumentError(
            f"dynamodb_index={name!r} contradicts the statement's use_index({current!r}); keep one of them"
        )
    if current is None:
        statement = statement.options(use_index(name))
    return statement, multiparams, params
