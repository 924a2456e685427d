"""The plan's choice of access path: the table, or the secondary index that serves a SELECT
with a key condition (or the one use_index() forces), and why an index was passed over."""

from __future__ import annotations

from typing import Any

from sqlalchemy import exc
from sqlalchemy.sql import elements, visitors
from sqlalchemy.sql.schema import Index, Table

from ...constructs import forced_index
from ...sqlalchemy_private import order_by_clauses, where_criteria
from ..key_schema import KeySchema, index_key_schema, key_schema, projects, unprojected
from ..operators import HASH_KEY, RANGE_KEY, REQUIRES_PRESENCE
from .normal_form import is_on, is_partition_or, key_tuple_in, terms_of


def attribute_names(clauses: list[Any]) -> set[str]:
    """Names of the table attributes that the clauses read."""
    return {
        element.name
        for clause in clauses
        for element in visitors.iterate(clause)
        if isinstance(element, elements.ColumnClause) and not element.is_literal
    }


def access_path(table: Table, select: Any, compile_state: Any) -> tuple[Index | None, KeySchema, str]:
    """The table, or the secondary index that can serve the query with a key condition, and
    why an index whose key the query pins was passed over.

    An index is chosen when the WHERE pins its partition key (and, for a local index, has a
    condition on its sort key that the table's sort key lacks) and it projects every
    attribute the statement reads.
    """
    keys = key_schema(table)
    terms = terms_of(where_criteria(select))
    hash_ops = HASH_KEY
    needed = attribute_names([*select.selected_columns, *where_criteria(select), *order_by_clauses(select)])
    # the ORM's statement (its options) is the compile state's select_statement
    forced = forced_index(select, getattr(compile_state, "select_statement", None))
    if forced is not None:
        return _forced_index(table, forced, needed)

    def pinned(column: Any, ops: set) -> bool:
        return column is not None and any(
            is_on(t, column, ops) or (ops is hash_ops and is_partition_or(t, column)) for t in terms
        )

    table_hash = pinned(keys.hash_key, hash_ops)
    if any(key_tuple_in(t, keys.columns) for t in terms):  # full keys: a batch of reads of the table
        return None, keys, ""
    if table_hash and (keys.range_key is None or pinned(keys.range_key, RANGE_KEY)):
        return None, keys, ""
    passed_over = []
    for index in sorted(table.indexes, key=lambda i: i.name or ""):
        index_keys = index_key_schema(index)
        local = index.dialect_options["dynamodb"]["local"]
        usable = (
            table_hash and local and pinned(index_keys.range_key, RANGE_KEY)
            if local
            else not table_hash and pinned(index_keys.hash_key, hash_ops)
        )
        if usable and not _holds_every_match(index_keys, pinned):
            sort_key = index_keys.range_key.name
            passed_over.append(
                f"index {index.name!r} leaves out the items without its sort key {sort_key!r}, which "
                f"the WHERE matches too: add a condition on {sort_key} (.is_not(None) will do), or "
                f'read the index anyway with use_index({index.name!r}) (FROM "{table.name}"."{index.name}" '
                "in SQL text)"
            )
        elif usable:
            if projects(index, needed):
                return index, index_keys, ""
            passed_over.append(f"index {index.name!r} does not project every attribute the query reads")
    return None, keys, "; ".join(passed_over)


def _holds_every_match(index_keys: KeySchema, pinned: Any) -> bool:
    """Whether a global index holds every item the query matches: DynamoDB leaves out of an
    index each item that lacks one of its key attributes. The WHERE pins the partition key
    (a missing one matches nothing); the sort key is present when the table says so
    (nullable=False) or when a condition on it, false for a missing attribute, is in the WHERE."""
    sort_key = index_keys.range_key
    return sort_key is None or not sort_key.nullable or pinned(sort_key, REQUIRES_PRESENCE)


def _forced_index(table: Table, name: str, needed: set[str]) -> tuple[Index, KeySchema, str]:
    """The index use_index() names, if the table has it and it projects what is read."""
    index = next((i for i in table.indexes if i.name == name), None)
    if index is None:
        known = ", ".join(sorted(i.name for i in table.indexes if i.name)) or "none"
        raise exc.CompileError(
            f"table {table.name!r} has no index {name!r} (its indexes: {known}); "
            "name one of them in use_index()/dynamodb_index"
        )
    if missing := unprojected(index, needed):
        raise exc.CompileError(
            f"index {name!r} does not project {', '.join(sorted(missing))}, which the query "
            "reads: select only the attributes it projects, or read the table"
        )
    return index, index_key_schema(index), f"the index was chosen by use_index({name!r})"
