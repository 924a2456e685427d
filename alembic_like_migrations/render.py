"""How the operations appear in migration scripts that autogenerate writes.

Columns, types and the primary key render with Alembic's own renderers, so the scripts read
like any other Alembic script.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from alembic.autogenerate import render
from alembic.autogenerate.render import renderers
from sqlalchemy import Index, UniqueConstraint

from sa_dynamo.dialect.types import attribute_type

from .backfill import DEFAULT_BATCH_SIZE
from .ops import (
    BackfillOp,
    CreateGlobalIndexOp,
    CreateTableWithIndexesOp,
    DropGlobalIndexOp,
    RemoveTTLOp,
    RenameDiscriminatorOp,
    SetTTLOp,
)

if TYPE_CHECKING:
    from alembic.autogenerate.api import AutogenContext


def _op(autogen_context: AutogenContext, name: str, args: list[str]) -> str:
    return f"{render._alembic_autogenerate_prefix(autogen_context)}{name}({', '.join(args)})"


def _options(autogen_context: AutogenContext, index: Index) -> list[str]:
    """An index's dialect options, without the defaults reflection fills in (dynamodb_local=False)."""
    options = {key: value for key, value in index.dialect_kwargs.items() if value}
    return render._render_dialect_kwargs_items(autogen_context, options)


def _index(autogen_context: AutogenContext, index: Index) -> str:
    args = [
        repr(index.name),
        *(repr(column.name) for column in index.columns),
        *(["unique=True"] if index.unique else []),
        *_options(autogen_context, index),
    ]
    return f"{render._sqlalchemy_autogenerate_prefix(autogen_context)}Index({', '.join(args)})"


@renderers.dispatch_for(CreateTableWithIndexesOp)
def _create_table(autogen_context: AutogenContext, op: CreateTableWithIndexesOp) -> str:
    """The key, index-key and unique columns (the only ones DynamoDB is told of: a unique
    constraint brings its guard table), the key, the unique constraints, the indexes."""
    table = op.to_table()
    uniques = sorted(
        (c for c in table.constraints if isinstance(c, UniqueConstraint)),
        key=lambda c: [column.name for column in c.columns],
    )
    keys = {column.name for column in table.primary_key.columns}
    keys |= {column.name for index in table.indexes for column in index.columns}
    keys |= {column.name for constraint in uniques for column in constraint.columns}
    args = [render._render_column(column, autogen_context) for column in table.columns if column.name in keys]
    args.append(render._render_constraint(table.primary_key, autogen_context, op._namespace_metadata))
    args += [render._render_constraint(c, autogen_context, op._namespace_metadata) for c in uniques]
    args += [_index(autogen_context, index) for index in sorted(table.indexes, key=lambda i: i.name or "")]
    args += [f"{key}={value!r}" for key, value in sorted(op.kw.items())]
    prefix = render._alembic_autogenerate_prefix(autogen_context)
    return f"{prefix}create_table({op.table_name!r},\n" + ",\n".join(args) + "\n)"


@renderers.dispatch_for(CreateGlobalIndexOp)
def _create_index(autogen_context: AutogenContext, op: CreateGlobalIndexOp) -> str:
    """String keys by name (op.create_index's default type), the others as typed columns."""
    index = op.to_index()
    prefix = render._sqlalchemy_autogenerate_prefix(autogen_context)
    columns = [
        repr(column.name)
        if attribute_type(column.type) == "S"
        else f"{prefix}Column({column.name!r}, {render._repr_type(column.type, autogen_context)})"
        for column in index.columns
    ]
    args = [
        repr(op.index_name),
        repr(op.table_name),
        f"[{', '.join(columns)}]",
        *_options(autogen_context, index),
    ]
    return _op(autogen_context, "create_index", args)


@renderers.dispatch_for(DropGlobalIndexOp)
def _drop_index(autogen_context: AutogenContext, op: DropGlobalIndexOp) -> str:
    return _op(autogen_context, "drop_index", [repr(op.index_name), f"table_name={op.table_name!r}"])


@renderers.dispatch_for(SetTTLOp)
@renderers.dispatch_for(RemoveTTLOp)
def _ttl(autogen_context: AutogenContext, op: SetTTLOp | RemoveTTLOp) -> str:
    name = "set_ttl" if op.enabled else "remove_ttl"
    return _op(autogen_context, name, [repr(op.table_name), repr(op.attribute)])


@renderers.dispatch_for(BackfillOp)
def _backfill(autogen_context: AutogenContext, op: BackfillOp) -> str:
    spec = op.spec
    if spec.transform is not None or spec.on_batch is not None:
        raise ValueError(
            f"a backfill of {spec.table!r} with transform= or on_batch= holds Python functions, which "
            "cannot be rendered into a script: write that operation into the script by hand"
        )
    args = [repr(spec.table)] + ([repr(spec.target)] if spec.target else [])
    options: dict[str, Any] = {"values": spec.values, "templates": spec.templates, "where": spec.where}
    args += [f"{key}={dict(value)!r}" for key, value in options.items() if value]
    if spec.batch_size != DEFAULT_BATCH_SIZE:
        args.append(f"batch_size={spec.batch_size}")
    if spec.name:
        args.append(f"name={spec.name!r}")
    return _op(autogen_context, "copy_items" if spec.target else "backfill", args)


@renderers.dispatch_for(RenameDiscriminatorOp)
def _rename_discriminator(autogen_context: AutogenContext, op: RenameDiscriminatorOp) -> str:
    args = [repr(op.table_name), repr(op.old), repr(op.new), f"attribute={op.attribute!r}"]
    if op.batch_size != DEFAULT_BATCH_SIZE:
        args.append(f"batch_size={op.batch_size}")
    return _op(autogen_context, "rename_discriminator", args)
