"""The dialect's one compiler (statements.py), a SQLAlchemy compiler class that holds a part
per concern and hands each construct to it: expressions.py (values, paths, functions),
conditions.py (each WHERE test), where.py (a statement's table and WHERE: key conditions and
the filter), selects.py (SELECT), writes.py (INSERT/UPDATE/DELETE), and client_side's
single_read.py (what the driver finishes of one read); record.py (what the execution reads).
Plain functions beside them: like.py (LIKE as begins_with), normal_form.py (the condition tree
in SQL's three-valued logic), predicate.py (the same tree as a Python test), access_path.py
(index choice), templates.py (what the execution finishes in the text)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import compiler

from .conditions import never_true
from .like import like_prefix
from .statements import DynamoDBCompiler
from .templates import (
    DMLTemplate,
    empty_key_prefixes_decided,
    empty_lists_decided,
    not_in_as_chain,
    operator_count,
)

__all__ = [
    "DMLTemplate",
    "DynamoDBCompiler",
    "DynamoDBIdentifierPreparer",
    "empty_key_prefixes_decided",
    "empty_lists_decided",
    "like_prefix",
    "never_true",
    "not_in_as_chain",
    "operator_count",
]


class DynamoDBIdentifierPreparer(compiler.IdentifierPreparer):
    """Every identifier double-quoted (PartiQL reserves many common words when unquoted)."""

    def __init__(self, dialect: Any):
        super().__init__(dialect, initial_quote='"', escape_quote='"')

    def _requires_quotes(self, value: str) -> bool:
        return True

    def attribute_literal(self, name: str) -> str:
        """An attribute name as an INSERT tuple key: a single-quoted string."""
        return "'" + name.replace("'", "''") + "'"

    def format_table(self, table, use_schema=True, name=None):
        return self.quote_identifier(name or table.name)
