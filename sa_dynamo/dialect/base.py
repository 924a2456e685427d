"""The DynamoDB dialect: capabilities, execution hooks, isolation levels (reflection: table_reflection.py; URLs: url.py).

``dynamodb://`` uses the AWS default credential chain and region; ``dynamodb://HOST:PORT`` a
plain-http endpoint such as DynamoDB Local. The embedded ``dynamodb+local://`` is in local.py
(the server itself: sa_dynamo/local_server.py).
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import MetaData, Table, event
from sqlalchemy.dialects import registry
from sqlalchemy.engine import default
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchTableError
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql import compiler
from sqlalchemy.sql import schema as sa_schema

from .. import dbapi as dynamo_dbapi
from .. import sql_text, sqlalchemy_private
from ..dbapi import control_plane, counters
from ..dbapi.validate import TableRules
from . import capacity_warning, item_sample, sending
from .client_side import foreign_keys
from .client_side.steps import computed
from .compiler import DynamoDBCompiler, DynamoDBIdentifierPreparer
from .ddl import DynamoDBDDLCompiler, check_before_create
from .execution import SCAN_POLICIES, DynamoDBExecutionContext
from .options import EXPLAIN, index_from_execution_options
from .table_reflection import Reflection
from .types import colspecs
from .url import connect_args, no_sqlite_arguments
from .write_rules import table_rules

log = logging.getLogger("sa_dynamo")

ISOLATION_LEVELS = ("SERIALIZABLE", "AUTOCOMMIT")


def _stale_write(error: Exception) -> str | None:
    """The UPDATE/DELETE whose condition failed in a cancelled commit, if that is why it failed."""
    reasons = getattr(error, "response", {}).get("CancellationReasons") or []
    for reason, sent in zip(reasons, getattr(error, "statements", []), strict=False):
        statement = sent["Statement"]
        if reason.get("Code") == "ConditionalCheckFailed" and statement.split(" ", 1)[0] in (
            "UPDATE",
            "DELETE",
        ):
            return statement
    return None


class DynamoDBDialect(Reflection, default.DefaultDialect):
    """SQLAlchemy dialect for DynamoDB's PartiQL API."""

    name = "dynamodb"
    driver = "sa_dynamo"  # the driver's own (sa_dynamo.dbapi); its transport: ?transport=
    default_paramstyle = "qmark"
    supports_statement_cache = True
    supports_alter = False
    supports_sequences = False
    supports_native_boolean = True
    supports_native_decimal = True
    supports_native_enum = False
    supports_native_uuid = False
    supports_sane_rowcount = True
    supports_sane_multi_rowcount = True  # executemany sums exact rowcounts, in batches too
    supports_multivalues_insert = False
    supports_empty_insert = False
    supports_default_values = False
    supports_default_metavalue = False
    supports_is_distinct_from = False
    supports_comments = False
    supports_schemas = False
    supports_views = False
    supports_constraint_comments = False
    postfetch_lastrowid = False
    # An autoincrement key's value is taken from its counter before the INSERT (execution.py),
    # so the ORM and inserted_primary_key know it as on SQLite.
    preexecute_autoincrement_sequences = True
    insert_returning = False
    update_returning = False
    delete_returning = False
    use_insertmanyvalues = False
    requires_name_normalize = False
    max_identifier_length = 255
    statement_compiler = DynamoDBCompiler
    ddl_compiler = DynamoDBDDLCompiler
    type_compiler_cls = compiler.GenericTypeCompiler
    preparer = DynamoDBIdentifierPreparer
    execution_ctx_cls = DynamoDBExecutionContext
    colspecs = colspecs

    construct_arguments = [
        (
            sa_schema.Table,
            {
                "billing_mode": None,
                "ttl": None,
                "read_capacity": None,
                "write_capacity": None,
                "reflect_sample": None,
            },
        ),
        (sa_schema.Column, {"key": None}),
        (sa_schema.Index, {"projection": None, "local": False, "include": None}),
    ]

    # Table(..., autoload_with=..., dynamodb_reflect_sample=N) hands N to get_columns
    reflection_options = ("dynamodb_reflect_sample",)

    def __init__(
        self,
        dynamodb_scan: str = "warn",
        dynamodb_chunked_commit: bool = False,
        dynamodb_reflect_sample: int = item_sample.DEFAULT_SAMPLE,
        dynamodb_autoincrement_block: int = counters.DEFAULT_BLOCK,
        dynamodb_capacity_warning: float | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.dynamodb_capacity_warning = capacity_warning.ratio(dynamodb_capacity_warning)
        try:
            self.counters = counters.Counters(dynamodb_autoincrement_block)
        except dynamo_dbapi.InterfaceError as error:
            raise ArgumentError(str(error)) from None
        self.dynamodb_chunked_commit = dynamodb_chunked_commit
        self.dynamodb_reflect_sample = item_sample.sample_size(dynamodb_reflect_sample)
        if dynamodb_scan not in SCAN_POLICIES:
            raise ArgumentError(
                f"dynamodb_scan must be one of {', '.join(SCAN_POLICIES)}, not {dynamodb_scan!r}"
            )
        self.dynamodb_scan = dynamodb_scan
        self._sql_text = sql_text.Translator(lambda statement: statement.compile(dialect=self))
        # The columns of the tables this engine created or wrote through a declared Table, in
        # their declared order: the order of SELECT *'s columns, as in SQL (items keep none).
        self.declared_columns: dict[str, tuple[str, ...]] = {}
        # The write rules of those Tables, for SQL text's writes (its Tables are reflected, and
        # DynamoDB keeps no NOT NULL or column types); None when Tables of one name disagree.
        self.declared_rules: dict[str, TableRules | None] = {}
        # The types of those Tables' columns, or of a reflected Table's, by table and column:
        # SQL text's results come back typed by them (its Tables are untyped).
        self.column_types: dict[str, dict[str, Any]] = {}
        # The tables those Tables' ForeignKeys reference with ondelete, each with the FKs: a
        # DELETE of one through a Table that does not know them (SQL text's) would skip them.
        self.ondelete_parents: dict[str, set[str]] = {}

    def star_order(self, table: Table) -> tuple[str, ...]:
        """The columns ``SELECT *`` of ``table`` gives first, in order: its declared ones when the
        engine has seen the Table declared, else those of ``table`` (a reflected table's keys)."""
        return self.declared_columns.get(table.name) or tuple(c.name for c in table.columns)

    def declared(self, table: Table) -> None:
        self.declared_columns[table.name] = tuple(c.name for c in table.columns)
        self.column_types.setdefault(table.name, {}).update((c.name, c.type) for c in table.columns)
        for parent, described in foreign_keys.referenced(table):
            self.ondelete_parents.setdefault(parent, set()).add(described)
        rules = table_rules(table)
        self.declared_rules[table.name] = (
            rules if self.declared_rules.get(table.name, rules) == rules else None
        )

    def result_type(self, results: sql_text.ResultAttributes, column: str) -> Any:
        """The declared (or reflected) type of the attribute a result column of SQL text holds;
        None when the engine knows none."""
        attribute = results.attribute(column)
        return None if attribute is None else self.column_types.get(results.table, {}).get(attribute)

    def translate_text(
        self, connection: Any, sql: str, binds: Any = None, result_types: Any = None
    ) -> sql_text.Translated:
        """SQL text as a compiled Core statement, against the tables' live key schemas."""

        def reflect(table: str) -> Table:
            try:
                # the key schema and indexes only: no sample of items per statement
                return Table(table, MetaData(), autoload_with=connection, dynamodb_reflect_sample=0)
            except NoSuchTableError:
                raise dynamo_dbapi.ProgrammingError(
                    f"table {table!r} does not exist: create it first, or check the name (DynamoDB "
                    "table names are case-sensitive)"
                ) from None
            except DBAPIError as error:
                # Raised while the statement executes, the driver's error is wrapped by the engine,
                # once and with the statement; SQLAlchemy 2.0 would wrap SQLAlchemy's own again.
                raise error.orig from error.orig.__cause__

        return self._sql_text.translate(sql, reflect, binds, result_types)

    # create_engine(hide_parameters=True): no parameter value in the messages of the dialect
    # and its driver either (set from the engine, see engine_created).
    hide_parameters = False

    # How many connections the engine's pool hands out at once (set from the engine): the driver's
    # HTTP pool keeps as many alive. None: botocore's default, 10.
    pool_capacity: int | None = None

    @classmethod
    def engine_created(cls, engine: Any) -> None:
        engine.dialect.hide_parameters = engine.hide_parameters
        engine.dialect.pool_capacity = sqlalchemy_private.pool_capacity(engine.pool)
        event.listen(engine, "before_execute", index_from_execution_options, retval=True)
        if not event.contains(MetaData, "before_create", check_before_create):
            event.listen(MetaData, "before_create", check_before_create)

    @classmethod
    def import_dbapi(cls) -> Any:
        return dynamo_dbapi

    @classmethod
    def get_async_dialect_cls(cls, url: Any) -> type:
        """``create_async_engine("dynamodb://")``: the same URL on the driver's asyncio connections
        (``dynamodb+asyncio://``, loaded by name: the async dialects build on this module)."""
        return registry.load("dynamodb.asyncio")

    def create_connect_args(self, url: Any) -> tuple[list, dict[str, Any]]:
        return connect_args(url)

    def connect(self, *cargs: Any, **cparams: Any) -> Any:
        """The driver's connection, its HTTP pool sized like the engine's pool (a
        ``max_pool_connections`` in the user's ``client_config`` wins); SQLite's own connect
        arguments are refused by name."""
        no_sqlite_arguments(cparams)
        if self.pool_capacity is not None:
            cparams["client_config"] = {
                "max_pool_connections": self.pool_capacity,
                **(cparams.get("client_config") or {}),
            }
        return super().connect(*cargs, **cparams)

    # -- execution -------------------------------------------------------------------------

    def do_execute(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        if context is not None and context.isddl:
            if context.control_plane_request is not None:
                self._sql_text.forget()  # key schemas and indexes may change
                transport = cursor.connection.transport
                method, request = context.control_plane_request
                control_plane.run(transport, method, request)
                counter = context.compiled.counter
                if counter is not None:
                    if method == "create_table":
                        counters.ensure_table(transport)
                    self.counters.reset(transport, *counter)
            return
        if computed(cursor, context):
            return
        if context is not None and context.execution_options.get(EXPLAIN) is not None:
            cursor.describe(statement)  # explain(): nothing sent
            return
        if context is not None and context.matches_nothing:
            cursor.matched_nothing(statement)  # an answer known without asking: nothing sent
            return
        sending.execute(cursor, statement, parameters, context)

    def do_executemany(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        if computed(cursor, context):
            return
        if context is not None and context.execution_options.get(EXPLAIN) is not None:
            return
        if context is not None and context.matches_nothing:  # the WHERE matches nothing, for every row
            cursor.matched_nothing(statement)
            return
        sending.executemany(cursor, statement, parameters, context)

    def do_begin(self, dbapi_connection: Any) -> None:
        pass

    def do_commit(self, dbapi_connection: Any) -> None:
        try:
            dbapi_connection.commit()
        except dynamo_dbapi.IntegrityError as error:
            stale = _stale_write(error)
            if stale is None:
                raise
            raise StaleDataError(
                f"{stale} matched no item at commit: the item was changed or deleted since it was "
                "read (or its version check failed). Nothing of this transaction was written; "
                "reload and retry (sa_dynamo.run_transaction retries for you)"
            ) from error

    def on_connect(self) -> Any:
        chunked = self.dynamodb_chunked_commit

        def configure(dbapi_connection: Any) -> None:
            dbapi_connection.chunked_commit = chunked
            dbapi_connection.hide_parameters = self.hide_parameters

        return configure

    def do_ping(self, dbapi_connection: Any) -> bool:
        dbapi_connection.transport.send("ListTables", {"Limit": 1})
        return True

    def is_disconnect(self, e: Exception, connection: Any, cursor: Any) -> bool:
        return isinstance(e, dynamo_dbapi.OperationalError) and "connection to DynamoDB failed" in str(e)

    def _get_server_version_info(self, connection: Any) -> tuple:
        return ()

    def _get_default_schema_name(self, connection: Any) -> None:
        return None

    # -- isolation -------------------------------------------------------------------------

    def get_isolation_level_values(self, dbapi_connection: Any) -> list[str]:
        return list(ISOLATION_LEVELS)

    def set_isolation_level(self, dbapi_connection: Any, level: str) -> None:
        dbapi_connection.autocommit = level == "AUTOCOMMIT"

    def get_isolation_level(self, dbapi_connection: Any) -> str:
        return "AUTOCOMMIT" if dbapi_connection.autocommit else "SERIALIZABLE"

    def get_default_isolation_level(self, dbapi_conn: Any) -> str:
        return "SERIALIZABLE"
