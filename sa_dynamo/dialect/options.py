"""Execution options.

The user's options carry the ``dynamodb_`` prefix and are documented (docs/connecting.md lists
them all). The ones sa_dynamo passes to itself start with ``_sa_dynamo_``, so they cannot be
taken for options a user may set. ``dynamodb_index`` becomes the ``use_index()`` option on the
statement before it is compiled, so it is compiled, cached and planned with the index.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import ArgumentError
from sqlalchemy.sql.selectable import Select

from ..constructs import forced_index, use_index
from ..plan import EXPLAIN  # explain(): a dict that receives the plan; nothing is sent

__all__ = ["DISCRIMINATOR", "EXPLAIN", "MATCHED", "PAGE", "SCAN_FIX", "index_from_execution_options"]

# paginate(): the page to read, and where it ended
PAGE = "_sa_dynamo_page"
# the ORM's discriminator attribute, the identities it knows, the base identity, and the
# attributes each identity's class maps when one of them has an attribute bag (else empty)
DISCRIMINATOR = "_sa_dynamo_discriminator"
# the ORM's advice for a relationship load that scans (its foreign key has no index)
SCAN_FIX = "_sa_dynamo_scan_fix"
# an UPDATE/DELETE by key of items a read found a moment ago to match its WHERE (the driver's
# Cursor.matched_by_read): in a transaction they are held without being read again
MATCHED = "_sa_dynamo_matched"


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
