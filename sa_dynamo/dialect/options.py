"""``use_index()``: a statement option that forces the secondary index a SELECT reads.

It is part of the statement's cache key, so a query with the option and the same query without
it compile (and are cached) separately. The ``dynamodb_index`` execution option is the same
request made per execution; the dialect turns it into this option before the statement is
compiled (see ``index_from_execution_options``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import ArgumentError
from sqlalchemy.sql.base import ExecutableOption
from sqlalchemy.sql.cache_key import HasCacheKey
from sqlalchemy.sql.selectable import Select
from sqlalchemy.sql.visitors import InternalTraversal


class use_index(ExecutableOption, HasCacheKey):
    """``select(Order).where(Order.status == "OPEN").options(sa_dynamo.use_index("gsi1"))``:
    read the index ``gsi1`` of the statement's table instead of letting the planner choose."""

    _is_has_cache_key = True
    # Read by the ORM when it walks a statement's options; this one only speaks to the compiler.
    _is_compile_state = False
    _is_criteria_option = False
    _is_legacy_option = False
    _is_user_defined = False
    _is_strategy_option = False
    propagate_to_loaders = False
    _cache_key_traversal = [("name", InternalTraversal.dp_string)]

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise ArgumentError(f"use_index() takes the name of a secondary index, not {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"use_index({self.name!r})"


def forced_index(*statements: Any) -> str | None:
    """The index a use_index() option names on any of ``statements`` (the compiled statement,
    and the SELECT the ORM derived from it)."""
    names = {
        option.name
        for statement in statements
        for option in getattr(statement, "_with_options", ())
        if isinstance(option, use_index)
    }
    if len(names) > 1:
        raise ArgumentError(f"a statement can read one index, not {', '.join(sorted(names))}")
    return names.pop() if names else None


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
