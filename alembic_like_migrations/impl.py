"""Alembic's implementation for the ``dynamodb`` dialect.

DynamoDB has no transactional DDL: table, index and TTL changes are control-plane calls sent at
once (the dialect waits until they have taken effect). What does wait for the end of each
migration step is its writes, above all the move of the version row (see version.py), which
commit together as one ExecuteTransaction. DynamoDB items are schemaless, so column operations
send nothing, and what DynamoDB fixes when a table is created (its key schema, its local
indexes) is refused with the way to get there instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from alembic.ddl.impl import DefaultImpl
from alembic.util import CommandError, immutabledict
from sqlalchemy import Column, Index, PrimaryKeyConstraint, Table, UniqueConstraint, schema
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql import Executable
from sqlalchemy.sql.dml import Delete, UpdateBase
from sqlalchemy.types import NullType, TypeEngine

from sa_dynamo.dbapi import errors as dbapi_errors
from sa_dynamo.dbapi import guard_names, guard_upkeep
from sa_dynamo.dialect.ddl import render_call
from sa_dynamo.dialect.local import DynamoDBLocalDialect
from sa_dynamo.dialect.types import attribute_type

from . import autogenerate, live, offline, report, version
from .backfill import Backfill
from .backfill import run as run_backfill
from .checkpoints import Checkpoints, checkpoint_table
from .errors import KeySchemaChangeError, key_change_advice
from .report import log

# The name Alembic gives the stand-in table of an op.drop_index() called without table_name.
_NO_TABLE = "no_table"


def _refuse_a_throwaway_server(connection: Any) -> None:
    """A migration of the in-memory DynamoDB Local a ``dynamodb+local://`` process starts for
    itself would be lost, silently, when the ``alembic`` command exits."""
    dialect = connection.dialect
    if isinstance(dialect, DynamoDBLocalDialect) and dialect.throwaway(connection.engine.url):
        raise CommandError(
            f"dynamodb+{dialect.driver}:// migrates a DynamoDB Local of this process's own, in memory, "
            "which is gone when the process exits: the migration would be lost. Start a server "
            "(sa-dynamo local start) and export SA_DYNAMO_LOCAL_ENDPOINT=http://127.0.0.1:8000, keep "
            f"the tables with dynamodb+{dialect.driver}://?data_dir=PATH, or connect to a running "
            "server with dynamodb://HOST:PORT"
        )


class DynamoDBImpl(DefaultImpl):
    """Runs Alembic operations against DynamoDB; ``--sql`` prints the planned calls instead."""

    __dialect__ = "dynamodb"
    transactional_ddl = False
    # Offline output is "CreateTable {...}", not SQL: a semicolon after it would be noise.
    command_terminator = ""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        autogenerate.register()
        self.version_table: Table | None = None
        online = not self.as_sql and self.connection is not None
        if online:
            _refuse_a_throwaway_server(self.connection)
        if online and "dynamodb_scan" not in self.connection.get_execution_options():
            # Alembic reads its version table with a scan (one row per head), and data
            # migrations scan by nature; env.py can still set the policy on the connection.
            self.connection.execution_options(dynamodb_scan="allow")

    # -- the version table -------------------------------------------------------------------

    def version_table_impl(
        self, *, version_table: str, version_table_schema: str | None, version_table_pk: bool, **kw: Any
    ) -> Table:
        if version_table_schema is not None:
            raise CommandError("DynamoDB has no schemas: remove version_table_schema from env.py")
        # version_num is the partition key whatever version_table_pk says: a DynamoDB table has one.
        table = super().version_table_impl(
            version_table=version_table, version_table_schema=None, version_table_pk=True, **kw
        )
        self.version_table = table
        return table

    def _exec(
        self,
        construct: Executable | str,
        execution_options: Mapping[str, Any] | None = None,
        multiparams: Sequence[Mapping[str, Any]] | None = None,
        params: Mapping[str, Any] = immutabledict(),
    ) -> CursorResult | None:
        if not version.is_version_write(construct, self.version_table):
            if self.as_sql and isinstance(construct, UpdateBase):
                self.static_output(offline.execute_statement(construct))
                return None
            return super()._exec(construct, execution_options, multiparams, params)
        statements = version.replacement(construct, self.version_table)
        if self.as_sql:
            self.static_output(offline.execute_transaction(statements))
            return None
        self._require_transaction("move Alembic's version row")
        for statement in statements:
            result = self.connection.execute(statement)
            if isinstance(statement, Delete) and result.rowcount == 0:
                # The old revision is gone: another run moved it. Inserting the new one would
                # leave two rows; nothing of this transaction is written.
                raise StaleDataError(
                    f"{result.context.statement} matched no item: another run moved the version row "
                    "meanwhile; check `alembic current` and run again"
                )
        # No result, so Alembic skips its rowcount check: the DELETE made it, and its condition
        # makes it again when the transaction commits.
        return None

    def _require_transaction(self, what: str) -> None:
        if self.connection.get_isolation_level() == "AUTOCOMMIT":
            raise CommandError(
                f"cannot {what} atomically on a connection in AUTOCOMMIT: connect without "
                "isolation_level='AUTOCOMMIT' in env.py (backfills open connections of their own), "
                "and run backfills outside autocommit_block()"
            )

    # -- tables and indexes ------------------------------------------------------------------

    def create_table(self, table: Table, **kw: Any) -> None:
        """One CreateTable request, which carries the table's GSIs and LSIs too (an LSI can
        exist only from its table's creation on)."""
        self._exec(schema.CreateTable(table, **kw))

    def create_index(self, index: Index, **kw: Any) -> None:
        table = index.table.name
        if index.dialect_options["dynamodb"]["local"]:
            raise KeySchemaChangeError(
                f"local index {index.name!r} can only be created together with table {table!r}: put "
                "sa.Index(..., dynamodb_local=True) into its op.create_table(); for the existing table, "
                f"{key_change_advice(table)}"
            )
        self._type_key_columns(index)
        with self._watching(f"adding GSI {index.name} to {table}", table, index.name):
            self._exec(schema.CreateIndex(index, **kw))

    def _type_key_columns(self, index: Index) -> None:
        """Give the untyped columns of ``op.create_index(name, table, ["a", "b"])`` the type
        DynamoDB already knows for the attribute, or S (string)."""
        known = live.attribute_types(self._described(index.table.name))
        untyped = [column for column in index.columns if isinstance(column.type, NullType)]
        for column in untyped:
            column.type = live.KEY_TYPES[known.get(column.name, "S")]()
        assumed = [column.name for column in untyped if column.name not in known]
        if assumed:
            self._note(
                f"GSI {index.name}: {', '.join(assumed)} created as string (S) attributes; to index "
                "numbers, name the column as sa.Column(name, sa.Numeric()) in op.create_index"
            )

    def drop_index(self, index: Index, **kw: Any) -> None:
        table = index.table.name
        if table == _NO_TABLE:
            raise CommandError(
                f"op.drop_index({index.name!r}) needs table_name=: DynamoDB indexes belong to a table"
            )
        found = live.index(self._described(table), index.name)
        if found is not None and found[0]:
            raise KeySchemaChangeError(
                f"local index {index.name!r} of {table!r} cannot be removed: DynamoDB keeps an LSI as long "
                f"as its table. Instead, {key_change_advice(table)}"
            )
        with self._watching(f"removing GSI {index.name} from {table}", table, index.name):
            self._exec(schema.DropIndex(index, **kw))

    def _watching(self, what: str, table: str, index: str) -> AbstractContextManager[None]:
        if self.as_sql:
            return nullcontext()
        connection = self.connection

        def status() -> str:
            for entry in (live.describe(connection, table) or {}).get("GlobalSecondaryIndexes", []):
                if entry["IndexName"] == index:
                    backfilling = ", backfilling existing items" if entry.get("Backfilling") else ""
                    return f"{entry.get('IndexStatus', 'ACTIVE')}{backfilling}"
            return "gone"

        return report.watching(what, status)

    def rename_table(self, old_table_name: str, new_table_name: str, schema: str | None = None) -> None:
        raise CommandError(
            f"DynamoDB cannot rename table {old_table_name!r}: create {new_table_name!r} with "
            f"op.create_table(), copy the items with op.copy_items({old_table_name!r}, "
            f"{new_table_name!r}), then op.drop_table({old_table_name!r})"
        )

    # -- columns: DynamoDB items are schemaless -----------------------------------------------

    def add_column(self, table_name: str, column: Column, **kw: Any) -> None:
        if column.primary_key:
            raise KeySchemaChangeError(
                f"cannot add key column {column.name!r} to {table_name!r}: DynamoDB fixes a table's key "
                f"schema when it is created. Instead, {key_change_advice(table_name)}"
            )
        self._note(
            f"add_column {table_name}.{column.name}: DynamoDB items are schemaless, nothing to send "
            "(to give existing items a value, follow with op.backfill)"
        )

    def drop_column(self, table_name: str, column: Column, **kw: Any) -> None:
        """Nothing to send; with ``dynamodb_remove=True`` a backfill removes the attribute from
        every item that has it."""
        if column.name in live.key_names(self._described(table_name)):
            raise KeySchemaChangeError(
                f"cannot drop key column {column.name!r} of {table_name!r}: DynamoDB fixes a table's key "
                f"schema when it is created. Instead, {key_change_advice(table_name)}"
            )
        if kw.get("dynamodb_remove"):
            self.backfill(
                Backfill(
                    table_name, values={column.name: None}, name=f"drop_column {table_name}.{column.name}"
                )
            )
            return
        self._note(
            f"drop_column {table_name}.{column.name}: DynamoDB items are schemaless, nothing to send; "
            "items keep the attribute (op.drop_column(..., dynamodb_remove=True) removes it from all)"
        )

    def alter_column(
        self,
        table_name: str,
        column_name: str,
        *,
        name: str | None = None,
        type_: TypeEngine | None = None,
        **kw: Any,
    ) -> None:
        described = self._described(table_name)
        if column_name in live.key_names(described) and (name is not None or type_ is not None):
            raise KeySchemaChangeError(
                f"cannot alter key column {column_name!r} of {table_name!r}: DynamoDB fixes a table's key "
                f"schema when it is created. Instead, {key_change_advice(table_name)}"
            )
        if name is not None:
            raise CommandError(
                f"DynamoDB cannot rename attribute {column_name!r} of {table_name!r}: copy it with "
                f"op.backfill({table_name!r}, transform=lambda item: {{{name!r}: item.get({column_name!r})}}), "
                f"then op.drop_column({table_name!r}, {column_name!r}, dynamodb_remove=True)"
            )
        indexed = live.attribute_types(described)
        if type_ is not None and column_name in indexed and attribute_type(type_) != indexed[column_name]:
            raise KeySchemaChangeError(
                f"cannot change the type of {table_name}.{column_name} to {type_!r}: it is an index key of "
                f"type {indexed[column_name]}, fixed when the index was created. Drop the index "
                "(op.drop_index), backfill the new values, and create it again"
            )
        self._note(
            f"alter_column {table_name}.{column_name}: nothing to send (DynamoDB stores no column types, "
            "defaults or nullability)"
        )

    def _described(self, table: str) -> dict[str, Any]:
        """DescribeTable's answer; empty offline (and for a table that does not exist yet)."""
        return {} if self.as_sql else live.describe(self.connection, table) or {}

    # -- constraints: the key schema, and unique constraints kept by guard items ----------------

    def add_constraint(self, const: Any, **kw: Any) -> None:
        if isinstance(const, UniqueConstraint):
            self._unique_guards(const, create=True)
            return
        self._refuse_constraint(const)

    def drop_constraint(self, const: Any, **kw: Any) -> None:
        if isinstance(const, UniqueConstraint):
            self._unique_guards(const, create=False)
            return
        self._refuse_constraint(const)

    def _unique_guards(self, const: UniqueConstraint, create: bool) -> None:
        """A unique constraint added to a stored table gets a guard item per value of its rows
        (refused, writing nothing, when two rows share a value), and its name is recorded with
        its columns; dropped by name, its guards are deleted. The models must declare the
        constraint too: their writes keep the guards from then on."""
        table = const.table.name
        guards = guard_names.guard_table(table)
        if self.as_sql:
            verb = "write" if create else "delete"
            self.static_output(
                f"-- {verb} the guard items of unique constraint {const.name!r} on {table}: Scan "
                f"{table!r}, then BatchWriteItem into {guards!r}"
            )
            return
        transport = self.connection.connection.dbapi_connection.transport
        if not create:
            columns = guard_upkeep.recorded_columns(transport, table, str(const.name))
            if columns is None:
                raise CommandError(
                    f"no unique constraint {const.name!r} is recorded for {table!r}: sa_dynamo records the "
                    "columns of a constraint created by op.create_unique_constraint or created with its "
                    "table under a name. Check the name"
                )
            count = guard_upkeep.drop_guards(transport, table, columns)
            log.info(f"drop_constraint {const.name} on {table}: {count} guard items deleted from {guards}")
            return
        columns = tuple(column.name for column in const.columns)
        try:
            count = guard_upkeep.create_guards(
                transport, table, columns, self.connection.dialect.hide_parameters
            )
        except dbapi_errors.IntegrityError as error:
            raise CommandError(str(error)) from None
        if const.name:
            transport.send("PutItem", guard_names.record_request(table, str(const.name), columns))
        log.info(f"create_unique_constraint {const.name} on {table}: {count} guard items in {guards}")

    def _refuse_constraint(self, const: Any) -> None:
        table = const.table.name
        if isinstance(const, PrimaryKeyConstraint):
            raise KeySchemaChangeError(
                f"cannot change the primary key of {table!r}: it is the table's DynamoDB key schema, fixed "
                f"when the table is created. Instead, {key_change_advice(table)}"
            )
        raise CommandError(
            f"DynamoDB has no {type(const).__name__} (constraint {const.name!r} on {table!r}): nothing "
            "enforces it there; enforce it in the application, or with conditions on the writes"
        )

    # -- DynamoDB's own operations ------------------------------------------------------------

    def set_ttl(self, table: str, attribute: str, enabled: bool) -> None:
        """Turn Time to Live on or off; a table already in that state is left alone."""
        request = {
            "TableName": table,
            "TimeToLiveSpecification": {"Enabled": enabled, "AttributeName": attribute},
        }
        if self.as_sql:
            self.static_output(render_call("UpdateTimeToLive", request))
            return
        current = live.ttl_attribute(self.connection, table)
        if current == (attribute if enabled else None):
            self._note(f"Time to Live on {table}.{attribute} is already {'on' if enabled else 'off'}")
            return
        if current is not None and current != attribute:
            advice = f": turn it off first with op.remove_ttl({table!r}, {current!r})" if enabled else ""
            raise CommandError(f"Time to Live on {table!r} reads {current!r}, not {attribute!r}{advice}")
        live.send(self.connection, "UpdateTimeToLive", request)
        log.info(render_call("UpdateTimeToLive", request))

    def backfill(self, spec: Backfill) -> None:
        if self.as_sql:
            self.static_output(spec.plan())
            return
        self._require_transaction("run a backfill")
        checkpoints = Checkpoints(checkpoint_table(self.version_table.name))
        run_backfill(self.connection.engine, spec, checkpoints)
        # Forgotten in the commit that records the revision: until then a re-run finds the
        # backfill complete and skips it; after it, a later upgrade runs it afresh.
        checkpoints.forget(self.connection, spec.checkpoint_id)

    def _note(self, text: str) -> None:
        if self.as_sql:
            self.static_output(f"-- {text}")
        else:
            log.info(text)
