"""Autogenerate on DynamoDB: compare the models with the live tables.

Alembic's own comparison would propose an add_column for every non-key attribute (DynamoDB
knows only the key attributes of an item) and knows nothing of GSIs, LSIs or TTL. For the
``dynamodb`` dialect this comparator replaces it: tables are created with their indexes or
dropped, GSIs added, removed or replaced, Time to Live switched. Differences no migration can
make (the key schema, the local indexes) fail the command, saying what to do instead.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from alembic.operations import ops
from alembic.util import DispatchPriority, PriorityDispatchResult
from sqlalchemy import Index, MetaData, Table
from sqlalchemy.exc import ArgumentError

from sa_dynamo.dialect.key_schema import key_schema
from sa_dynamo.dialect.types import attribute_type

from . import live
from .checkpoints import checkpoint_table
from .errors import KeySchemaChangeError, key_change_advice
from .ops import (
    CreateGlobalIndexOp,
    CreateTableWithIndexesOp,
    DropGlobalIndexOp,
    DropTableWithIndexesOp,
    RemoveTTLOp,
    SetTTLOp,
)
from .report import log

if TYPE_CHECKING:
    from alembic.autogenerate.api import AutogenContext


@functools.cache
def register() -> None:
    """Put the comparator into Alembic's global comparators, for the dynamodb dialect only.

    Called when a DynamoDB migration context starts, not at import: Alembic's plugin entry point
    imports this package while Alembic itself is half-imported, before those comparators exist.
    """
    from alembic.autogenerate.compare import comparators

    comparators.dispatch_for(
        "schema", subgroup="tables", priority=DispatchPriority.FIRST, qualifier="dynamodb"
    )(compare_tables)


def compare_tables(
    autogen_context: AutogenContext, upgrade_ops: ops.UpgradeOps, schemas: set[str | None]
) -> PriorityDispatchResult:
    """Alembic's "tables" comparison for DynamoDB; it stops Alembic's generic one."""
    context = autogen_context.migration_context
    ours = {context.version_table, checkpoint_table(context.version_table)}
    live_names = {
        name
        for name in autogen_context.inspector.get_table_names()
        if name not in ours and autogen_context.run_name_filters(name, "table", {"schema_name": None})
    }
    models = {table.name: table for table in autogen_context.sorted_tables if table.name not in ours}
    errors: list[str] = []
    for name, table in models.items():
        if name not in live_names and autogen_context.run_object_filters(table, name, "table", False, None):
            upgrade_ops.ops.append(CreateTableWithIndexesOp.from_table(table))
            log.info("Detected added table %r", name)
    for name in sorted(live_names - models.keys()):
        reflected = _reflect(autogen_context, name)
        if autogen_context.run_object_filters(reflected, name, "table", True, None):
            upgrade_ops.ops.append(DropTableWithIndexesOp.from_table(reflected))
            log.info("Detected removed table %r", name)
    for name in sorted(live_names & models.keys()):
        reflected = _reflect(autogen_context, name)
        if autogen_context.run_object_filters(models[name], name, "table", False, reflected):
            modify = ops.ModifyTableOps(name, [])
            errors += _compare_table(autogen_context, models[name], reflected, modify.ops)
            if not modify.is_empty():
                upgrade_ops.ops.append(modify)
    if errors:
        raise KeySchemaChangeError(
            "the models differ from DynamoDB in ways no migration can apply:\n"
            + "\n".join(f"- {e}" for e in errors)
        )
    return PriorityDispatchResult.STOP


def _reflect(autogen_context: AutogenContext, name: str) -> Table:
    """The live table: keys, index keys and indexes from reflection (no sample of items: the
    other attributes are no part of the schema), TTL from DescribeTimeToLive."""
    table = Table(name, MetaData(), dynamodb_reflect_sample=0)
    autogen_context.inspector.reflect_table(table, None)
    ttl = live.ttl_attribute(autogen_context.connection, name)
    if ttl is not None:
        table.dialect_kwargs["dynamodb_ttl"] = ttl
    return table


def _keys(table: Table) -> str:
    """The key schema, readably: ``pk HASH S, sk RANGE S``."""
    try:
        keys = key_schema(table)
    except ArgumentError as error:
        return f"invalid ({error})"
    roles = zip(keys.columns, ("HASH", "RANGE"), strict=False)
    return ", ".join(f"{column.name} {role} {attribute_type(column.type)}" for column, role in roles)


def _signature(index: Index) -> tuple[Any, ...]:
    """What DynamoDB knows of an index: its keys and their types, its projection."""
    options = index.dialect_options["dynamodb"]
    return (
        bool(options["local"]),
        tuple((column.name, attribute_type(column.type)) for column in index.columns),
        (options["projection"] or "ALL").upper(),
        sorted(getattr(c, "name", c) for c in options["include"] or ()),
    )


def _compare_table(
    autogen_context: AutogenContext, model: Table, reflected: Table, out: list[Any]
) -> list[str]:
    """Append the operations that bring ``reflected`` to ``model`` to ``out``; return what no
    operation can change."""
    name = model.name
    errors = []
    if _keys(model) != _keys(reflected):
        errors.append(
            f"table {name!r} has the key schema {_keys(reflected)} in DynamoDB and {_keys(model)} in the "
            f"model; DynamoDB cannot change a key schema: {key_change_advice(name)}"
        )
    wanted = {
        i.name: i
        for i in model.indexes
        if autogen_context.run_object_filters(i, i.name, "index", False, None)
    }
    present = {
        i.name: i
        for i in reflected.indexes
        if autogen_context.run_object_filters(i, i.name, "index", True, None)
    }
    for index_name in sorted(wanted.keys() | present.keys()):
        want, have = wanted.get(index_name), present.get(index_name)
        if want is not None and have is not None and _signature(want) == _signature(have):
            continue
        if any(i is not None and i.dialect_options["dynamodb"]["local"] for i in (want, have)):
            change = "added to" if have is None else "removed from" if want is None else "changed in"
            errors.append(
                f"local index {index_name!r} is {change} the model of table {name!r}, but an LSI exists only "
                f"from its table's creation on: {key_change_advice(name)}"
            )
            continue
        if have is not None:
            out.append(DropGlobalIndexOp.from_index(have))
            log.info("Detected removed GSI %r on %r", index_name, name)
        if want is not None:
            out.append(CreateGlobalIndexOp.from_index(want))
            log.info("Detected added GSI %r on %r", index_name, name)
    want_ttl, have_ttl = (t.dialect_options["dynamodb"]["ttl"] for t in (model, reflected))
    if want_ttl != have_ttl:
        if have_ttl:
            out.append(RemoveTTLOp(name, have_ttl))
        if want_ttl:
            out.append(SetTTLOp(name, want_ttl))
        log.info("Detected Time to Live change on %r: %r -> %r", name, have_ttl, want_ttl)
    return errors
