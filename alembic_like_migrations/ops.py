"""Migration operations: DynamoDB's own (``op.set_ttl``, ``op.remove_ttl``, ``op.backfill``,
``op.copy_items``, ``op.rename_discriminator``) and autogenerate's DynamoDB flavour of Alembic's
table and index operations.

Each is a MigrateOperation, so autogenerate can emit it and render it into a script; the work
is done by DynamoDBImpl.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from alembic.operations import MigrateOperation, Operations, ops
from alembic.util import CommandError
from sqlalchemy import Index, MetaData, Table

from .backfill import DEFAULT_BATCH_SIZE, Backfill, Transform
from .checkpoints import Progress

if TYPE_CHECKING:
    from alembic.ddl.impl import DefaultImpl
    from alembic.runtime.migration import MigrationContext


def _impl(operations: Operations, name: str) -> DefaultImpl:
    """The migration's implementation, which must be DynamoDB's (impl.py's DynamoDBImpl)."""
    impl = operations.impl
    if impl.__dialect__ != "dynamodb":
        raise CommandError(f"op.{name}() is a DynamoDB operation; this migration runs on {impl.dialect.name}")
    return impl


class _TTLOp(MigrateOperation):
    enabled: bool

    def __init__(self, table_name: str, attribute: str):
        self.table_name = table_name
        self.attribute = attribute


@Operations.register_operation("set_ttl")
class SetTTLOp(_TTLOp):
    """Turn Time to Live on."""

    enabled = True

    @classmethod
    def set_ttl(cls, operations: Operations, table_name: str, attribute: str) -> None:
        """Turn on Time to Live: DynamoDB deletes each item of ``table_name`` some time after the
        epoch seconds in its ``attribute`` have passed (items without it stay)."""
        operations.invoke(cls(table_name, attribute))

    def reverse(self) -> RemoveTTLOp:
        return RemoveTTLOp(self.table_name, self.attribute)


@Operations.register_operation("remove_ttl")
class RemoveTTLOp(_TTLOp):
    """Turn Time to Live off."""

    enabled = False

    @classmethod
    def remove_ttl(cls, operations: Operations, table_name: str, attribute: str) -> None:
        """Turn off Time to Live on ``table_name`` (which reads ``attribute``)."""
        operations.invoke(cls(table_name, attribute))

    def reverse(self) -> SetTTLOp:
        return SetTTLOp(self.table_name, self.attribute)


@Operations.implementation_for(SetTTLOp)
@Operations.implementation_for(RemoveTTLOp)
def _ttl(operations: Operations, operation: _TTLOp) -> None:
    name = "set_ttl" if operation.enabled else "remove_ttl"
    _impl(operations, name).set_ttl(operation.table_name, operation.attribute, operation.enabled)


@Operations.register_operation("backfill")
@Operations.register_operation("copy_items")
class BackfillOp(MigrateOperation):
    """Rewrite the items of a table, or copy them into another, in resumable batches."""

    def __init__(self, spec: Backfill):
        self.spec = spec

    @classmethod
    def backfill(
        cls,
        operations: Operations,
        table_name: str,
        *,
        values: Mapping[str, Any] | None = None,
        templates: Mapping[str, str] | None = None,
        where: Mapping[str, Any] | None = None,
        transform: Transform | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        name: str | None = None,
        on_batch: Callable[[Progress], None] | None = None,
    ) -> None:
        """Update the items of ``table_name`` that match ``where`` (attribute equality; None:
        absent) in batches: ``values`` sets constants (None removes), ``templates`` formats
        attributes from the item (``"ORDER#{order_id}"``), ``transform(item)`` returns more
        changes or None to skip the item. Each batch commits with its checkpoint: an interrupted
        backfill resumes where it stopped and writes every item once."""
        spec = Backfill(
            table_name,
            values=values or {},
            templates=templates or {},
            where=where or {},
            transform=transform,
            batch_size=batch_size,
            name=name,
            on_batch=on_batch,
        )
        operations.invoke(cls(spec))

    @classmethod
    def copy_items(cls, operations: Operations, source: str, target: str, **options: Any) -> None:
        """Copy the items of ``source`` into ``target`` (never overwriting one there), selected
        and changed by the options of ``op.backfill``: the way to a new key schema, since
        ``templates`` can compute the new key attributes."""
        operations.invoke(cls(Backfill(source, target=target, **options)))


@Operations.register_operation("rename_discriminator")
class RenameDiscriminatorOp(MigrateOperation):
    """Rename an item type: rewrite the discriminator value ``old`` to ``new``."""

    def __init__(
        self,
        table_name: str,
        old: str,
        new: str,
        *,
        attribute: str = "$type",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ):
        self.table_name = table_name
        self.old = old
        self.new = new
        self.attribute = attribute
        self.batch_size = batch_size

    @classmethod
    def rename_discriminator(
        cls,
        operations: Operations,
        table_name: str,
        old: str,
        new: str,
        *,
        attribute: str = "$type",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        """Set ``attribute`` (the ``polymorphic_on`` discriminator) to ``new`` on every item of
        ``table_name`` where it is ``old``, in resumable batches."""
        operations.invoke(cls(table_name, old, new, attribute=attribute, batch_size=batch_size))

    def to_backfill(self) -> Backfill:
        return Backfill(
            self.table_name,
            values={self.attribute: self.new},
            where={self.attribute: self.old},
            batch_size=self.batch_size,
            name=f"{self.table_name}: {self.attribute} {self.old} -> {self.new}",
        )

    def reverse(self) -> RenameDiscriminatorOp:
        return RenameDiscriminatorOp(
            self.table_name, self.new, self.old, attribute=self.attribute, batch_size=self.batch_size
        )


@Operations.implementation_for(BackfillOp)
def _backfill(operations: Operations, operation: BackfillOp) -> None:
    _impl(operations, "copy_items" if operation.spec.target else "backfill").backfill(operation.spec)


@Operations.implementation_for(RenameDiscriminatorOp)
def _rename_discriminator(operations: Operations, operation: RenameDiscriminatorOp) -> None:
    _impl(operations, "rename_discriminator").backfill(operation.to_backfill())


# -- what autogenerate emits instead of Alembic's own table and index operations -------------
# They run as Alembic's do; they differ in how they render and reverse.


class CreateTableWithIndexesOp(ops.CreateTableOp):
    """``op.create_table`` with the table's indexes inside it: one CreateTable call, and the
    only way a table gets a local index."""

    indexes: list[tuple[str, list[str], dict[str, Any]]]

    @classmethod
    def from_table(
        cls, table: Table, *, _namespace_metadata: MetaData | None = None
    ) -> CreateTableWithIndexesOp:
        operation = super().from_table(table, _namespace_metadata=_namespace_metadata)
        # Kept as (name, column names, options): an Index object belongs to one Table, and
        # to_table() builds a new Table each time.
        operation.indexes = [
            (index.name, [column.name for column in index.columns], dict(index.kwargs))
            for index in sorted(table.indexes, key=lambda index: index.name or "")
        ]
        return operation

    def to_table(self, migration_context: MigrationContext | None = None) -> Table:
        table = super().to_table(migration_context)
        for name, columns, options in self.indexes:
            Index(name, *(table.c[column] for column in columns), **options)
        return table

    def reverse(self) -> DropTableWithIndexesOp:
        return DropTableWithIndexesOp.from_table(
            self.to_table(), _namespace_metadata=self._namespace_metadata
        )


class DropTableWithIndexesOp(ops.DropTableOp):
    """``op.drop_table`` whose downgrade recreates the table with its indexes."""

    _reverse: CreateTableWithIndexesOp

    @classmethod
    def from_table(
        cls, table: Table, *, _namespace_metadata: MetaData | None = None
    ) -> DropTableWithIndexesOp:
        operation = super().from_table(table, _namespace_metadata=_namespace_metadata)
        operation._reverse = CreateTableWithIndexesOp.from_table(
            table, _namespace_metadata=_namespace_metadata
        )
        return operation

    def to_table(self, migration_context: MigrationContext | None = None) -> Table:
        return self._reverse.to_table(migration_context)

    def reverse(self) -> CreateTableWithIndexesOp:
        return self._reverse


class CreateGlobalIndexOp(ops.CreateIndexOp):
    """``op.create_index`` for a GSI, rendered with the key attributes' types (DynamoDB needs
    them, and Alembic renders index columns as bare names)."""

    def reverse(self) -> DropGlobalIndexOp:
        return DropGlobalIndexOp.from_index(self.to_index())


class DropGlobalIndexOp(ops.DropIndexOp):
    """``op.drop_index`` of a GSI, whose downgrade recreates it with typed key attributes."""

    def reverse(self) -> CreateGlobalIndexOp:
        return CreateGlobalIndexOp.from_index(self.to_index())
