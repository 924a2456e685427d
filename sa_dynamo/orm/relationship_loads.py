"""Relationships whose loads scan: the foreign key they filter on is no partition key.

A one-to-many such as ``User.addresses`` loads with ``WHERE address.user_id = ?`` (lazy) or
``IN (...)`` (selectinload). Unless ``user_id`` is the partition key of the table or of a
global secondary index, DynamoDB can only answer that by reading the whole table, once per
load. ``index=True`` on the column declares such an index, and the loads become Queries.
``sa-dynamo check`` lists these relationships, and the scan warning of such a load names the fix.
A selectin load by a partition key is sent in IN lists of at most 50 keys, as DynamoDB allows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Column, Table
from sqlalchemy.engine import Result
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import Mapper, ORMExecuteState, RelationshipProperty
from sqlalchemy.sql import visitors
from sqlalchemy.sql.elements import BindParameter

from ..dbapi.limits import MAX_PARTITION_KEYS
from ..dialect.key_schema import index_key_schema, key_schema
from ..dialect.options import SCAN_FIX
from . import discriminator  # noqa: F401  (its listener must run first; see _register)
from .item_collections import INFO_KEY as ITEM_COLLECTION
from .scope import on_dynamodb
from .template_joins import joined_on_templates


def _partition_keys(table: Table) -> set[str]:
    """The attributes a Query on the table can pin: its partition key and its global indexes'."""
    keys = {key_schema(table).hash_key.name}
    for index in table.indexes:
        if not index.dialect_options["dynamodb"]["local"]:
            keys.add(index_key_schema(index).hash_key.name)
    return keys


def unindexed_foreign_key(prop: RelationshipProperty) -> tuple[Column, ...]:
    """The columns of the target table that a load of ``prop`` filters on, when none of them is
    a partition key there (each load scans); empty when a load is a GetItem or a Query."""
    if prop.secondary is not None:  # many-to-many is a JOIN, which the compiler refuses
        return ()
    if joined_on_templates(prop):  # its loads pin a templated partition key
        return ()
    table = prop.mapper.local_table
    remote = tuple(column for _, column in prop.local_remote_pairs if column.table is table)
    if not remote or {column.name for column in remote} & _partition_keys(table):
        return ()
    return remote


def _names(columns: Iterable[Column]) -> str:
    return " and ".join(f"{column.table.name}.{column.name}" for column in columns)


def load_fix(prop: RelationshipProperty, columns: tuple[Column, ...]) -> str:
    """What the scan warning of a load of ``prop`` says to do instead."""
    return (
        f"It loads relationship {prop}, by {_names(columns)}, which is not the partition key of the "
        f"table or of a global index: declare {columns[0].name} with index=True (a global secondary "
        "index, created with the table or by Index.create) and these loads become Queries"
    )


def many_to_many_fix(prop: RelationshipProperty) -> str:
    """What to do instead of loading ``prop``, a relationship through a link table."""
    link = prop.secondary.name
    by = " and ".join(f"{link}.{column.name}" for _, column in prop.synchronize_pairs)
    return (
        f"read the rows of {link} by {by} (its partition key, or index=True on it), then each "
        f"{prop.mapper.class_.__name__} by its key with session.get(); or declare the relationship "
        "lazy='noload' to leave it unloaded"
    )


def scanning_relationships(
    mappers: Iterable[Mapper],
) -> list[tuple[RelationshipProperty, tuple[Column, ...]]]:
    """Every relationship of ``mappers`` whose loads scan, with the columns they filter on."""
    found = []
    for mapper in sorted(mappers, key=lambda m: m.class_.__name__):
        for prop in mapper.relationships:
            if prop.parent is mapper and (columns := unindexed_foreign_key(prop)):
                found.append((prop, columns))
    return found


def _selectin_keys(state: ORMExecuteState) -> list[Any] | None:
    """The parents' keys of a selectin load (a lazy load binds one parent's values instead).
    None for a statement another listener sent in its place, which keeps the parameters but
    lists its own values (template_joins.py)."""
    parameters = state.parameters
    if not isinstance(parameters, dict) or "primary_keys" not in parameters:
        return None
    binds = visitors.iterate(state.statement.whereclause) if state.statement.whereclause is not None else ()
    if not any(isinstance(bind, BindParameter) and bind.key == "primary_keys" for bind in binds):
        return None
    return parameters["primary_keys"]


def relationship_loads(state: ORMExecuteState) -> Result[Any] | None:
    """``do_orm_execute``: give a relationship load that will scan the fix for its warning; split
    a selectin load by a partition key into IN lists that DynamoDB accepts (SQLAlchemy sends up
    to 500 keys in one, DynamoDB reads at most 50 partitions in one Query)."""
    if not state.is_select or not state.is_relationship_load:
        return None
    prop = state.loader_strategy_path[-1]
    if not isinstance(prop, RelationshipProperty) or ITEM_COLLECTION in prop.info:
        return None  # an item collection answers its own loads (item_collections.py)
    if not on_dynamodb(state, prop.mapper):
        return None
    if prop.secondary is not None:
        try:
            return state.invoke_statement()
        except CompileError as error:
            raise CompileError(
                f"relationship {prop} cannot be loaded: it goes through the link table "
                f"{prop.secondary.name} ({error}); {many_to_many_fix(prop)}"
            ) from error
    if columns := unindexed_foreign_key(prop):
        state.update_execution_options(**{SCAN_FIX: load_fix(prop, columns)})
        return None
    keys = _selectin_keys(state)
    if keys is None or len(keys) <= MAX_PARTITION_KEYS:
        return None
    first, *others = (
        state.invoke_statement(params={"primary_keys": keys[start : start + MAX_PARTITION_KEYS]})
        for start in range(0, len(keys), MAX_PARTITION_KEYS)
    )
    return first.merge(*others)
