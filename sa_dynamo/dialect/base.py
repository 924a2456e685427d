"""The DynamoDB dialect: URL handling, execution, isolation levels, reflection.

``dynamodb://`` uses the AWS default credential chain and region; ``dynamodb://HOST:PORT`` a
plain-http endpoint such as DynamoDB Local; ``dynamodb+local://`` an embedded DynamoDB Local
that starts on first connect (see ``DynamoDBLocalDialect``).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections import defaultdict
from typing import Any

from sqlalchemy import event
from sqlalchemy import types as sqltypes
from sqlalchemy.engine import default, reflection
from sqlalchemy.exc import ArgumentError, CompileError, DBAPIError
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql import compiler
from sqlalchemy.sql import schema as sa_schema
from sqlalchemy.sql.selectable import TextualSelect

from .. import dbapi as dynamo_dbapi
from .. import sqltext
from ..dbapi import admin
from ..dbapi.cursor import Discriminator
from ..exc import ScanNotAllowed, ScanWarning
from ..plan import Plan, plan_of_text, scan_message
from .compiler import DMLTemplate, DynamoDBCompiler, DynamoDBIdentifierPreparer, not_in_as_chain
from .ddl import DynamoDBDDLCompiler
from .options import index_from_execution_options
from .types import colspecs

log = logging.getLogger("sa_dynamo")

_REFLECTED_TYPES = {"S": sqltypes.String, "N": sqltypes.Numeric, "B": sqltypes.LargeBinary}
ISOLATION_LEVELS = ("SERIALIZABLE", "AUTOCOMMIT")
UNKNOWN_TYPE_POLICIES = ("skip", "raise", "base")
SCAN_POLICIES = ("allow", "warn", "error")


def _absent(template: Any, params: Any) -> frozenset[int]:
    return frozenset(i for i in range(len(template.entries)) if params[i] is None)


def _without(params: Any, absent: frozenset[int]) -> list[Any]:
    return [v for i, v in enumerate(params) if i not in absent]


# A streamed read asks for this many batches per request, and never fewer items than the floor:
# each request costs a round trip, so one per batch (or per row, for yield_per(1)) is slow.
STREAM_BATCHES_PER_PAGE = 10
MIN_STREAM_PAGE = 1000


def _stream_page_size(options: Any) -> int | None:
    """Items per request for a result consumed in batches (``yield_per``, ``stream_results``,
    ``max_row_buffer``): a few batches, so that the driver never holds a whole 1 MB page
    (tens of thousands of small items) for a consumer that takes a thousand rows at a time. It
    only sets DynamoDB's Limit, the items evaluated per request; the rows returned are the same."""
    size = options.get("yield_per") or options.get("max_row_buffer")
    if not size and options.get("stream_results"):
        size = 1000  # SQLAlchemy's default max_row_buffer
    return max(int(size) * STREAM_BATCHES_PER_PAGE, MIN_STREAM_PAGE) if size else None


# URL parameters that configure botocore's client: retries and timeouts.
CLIENT_OPTIONS = ("retry_mode", "max_attempts", "connect_timeout", "read_timeout")


def _with_client_config(query: dict[str, Any]) -> dict[str, Any]:
    """Move botocore options out of the URL query into the driver's client_config."""
    config: dict[str, Any] = {}
    retries = {}
    if "retry_mode" in query:
        retries["mode"] = query.pop("retry_mode")
    if "max_attempts" in query:  # attempts in all, the first included (botocore's total_max_attempts)
        retries["total_max_attempts"] = int(query.pop("max_attempts"))
    if retries:
        config["retries"] = retries
    for name in ("connect_timeout", "read_timeout"):
        if name in query:
            config[name] = float(query.pop(name))
    if config:
        query["client_config"] = config
    return query


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


class DynamoDBExecutionContext(default.DefaultExecutionContext):
    """Applies per-execution facts the compiled PartiQL cannot carry: None -> absent attribute,
    the row limit, page size and consistent reads."""

    dynamodb_request: tuple[str, dict[str, Any]] | None = None
    dynamodb_groups: list[tuple[str, list]] | None = None
    dynamodb_no_rows = False

    def pre_exec(self) -> None:
        compiled = self.compiled
        if compiled is None:
            # exec_driver_sql: PartiQL sent as written, still planned and guarded.
            self._guard(plan_of_text(self.statement, self._key_names))
            return
        if self.isddl:
            self._pre_exec_ddl(compiled)
            return
        # text().columns(...) is a TextualSelect, which SQLAlchemy does not count as plain text;
        # its SQL must be rewritten all the same (else it is sent as PartiQL, without the guards).
        if self.is_text or isinstance(compiled.statement, TextualSelect):
            self._configure_cursor(compiled)
            self._translate_text()
            return
        self._apply_template(compiled.dynamodb_template)
        if compiled.dynamodb_not_in_chain:
            self.statement = not_in_as_chain(self.statement)
        self._check_key_values(compiled)
        self._configure_cursor(compiled)
        plan = compiled.dynamodb_plan
        if plan is not None:
            self._guard(self._finished_plan(compiled, plan))

    def _finished_plan(self, compiled: Any, plan: Plan) -> Plan:
        """The plan with the PartiQL as sent. Without parameters expanded at execution time it is
        the same for every execution of the same text, so the compiled statement keeps it."""
        if self._expanded_parameters:
            return plan.finished(self.statement, self._rendered_at_execution)
        kept = getattr(compiled, "_dynamodb_finished_plan", None)
        if kept is not None and kept[0] is plan and kept[1] == self.statement:
            return kept[2]
        finished = plan.finished(self.statement, self._rendered_at_execution)
        compiled._dynamodb_finished_plan = (plan, self.statement, finished)
        return finished

    def _key_names(self, table: str) -> tuple[str, ...]:
        return self.cursor.connection.key_names(table)

    def _translate_text(self) -> None:
        """text(): the SQL is rewritten to PartiQL by the same rules as compiled statements;
        what echo and the events show is the rewritten statement."""

        def keys(table: str) -> sqltext.KeyNames | None:
            try:
                names = self._key_names(table)
            except dynamo_dbapi.Error:
                return None  # the statement itself will report the unknown table
            return sqltext.KeyNames(names[0], names[1] if len(names) > 1 else None)

        translation = sqltext.translate(self.statement, keys)
        rows = self.parameters
        # As _check_key_values for compiled statements: empty key values refused, no rows sent
        # for a WHERE folded to FALSE or a sort-key BETWEEN with reversed bounds.
        self.dynamodb_no_rows = translation.checks.no_rows(rows)
        self.statement = translation.text
        self.parameters = [[row[i] for i in translation.order] for row in rows]
        self._apply_template(DMLTemplate.of(self.statement))
        if translation.limit_param is not None:
            self.cursor.max_rows = int(rows[0][translation.limit_param])
        elif translation.limit is not None:
            self.cursor.max_rows = translation.limit
        self._guard(plan_of_text(self.statement, self._key_names))

    def _check_key_values(self, compiled: Any) -> None:
        """Decide on the client what DynamoDB would reject: an empty string compared with a key
        attribute (refused: no key can be empty), a LIKE wildcard in a startswith()/contains()
        value (refused: begins_with has none), a sort-key BETWEEN whose bounds are reversed (no
        rows, as SQL says, without asking DynamoDB)."""
        values = self.compiled_parameters[0] if self.compiled_parameters else {}
        for name, attribute in compiled.dynamodb_key_parameters.items():
            # an IN list has been expanded into one parameter per value by now
            candidates = [values.get(n) for n in self._expanded_parameters.get(name, [name])]
            if any(v in ("", b"") for v in candidates):
                raise CompileError(
                    f"DynamoDB PartiQL cannot express a comparison of key attribute {attribute!r} with an "
                    "empty value: no key is empty, so leave the condition out or skip the query"
                )
        for name, method in compiled.dynamodb_like_parameters.items():
            value = values.get(name)
            if isinstance(value, str) and ("%" in value or "_" in value):
                raise CompileError(
                    f"DynamoDB PartiQL cannot express {method}({value!r}) as SQL means it: SQL's LIKE reads "
                    "% and _ in the value as wildcards, DynamoDB matches them literally; pass "
                    f"autoescape=True to {method}() to match them literally"
                )
        self.dynamodb_no_rows = compiled.dynamodb_always_empty
        if compiled.dynamodb_key_between is not None:
            low, high = (values[name] for name in compiled.dynamodb_key_between)
            self.dynamodb_no_rows = self.dynamodb_no_rows or low > high

    def _rendered_at_execution(self, name: str) -> str:
        """How a parameter rendered at execution time appears in the plan: an expanded list as
        its placeholders, a literal (a JSON path step) as ``?`` (the PartiQL shows its value)."""
        return ", ".join("?" * len(self._expanded_parameters.get(name, [name])))

    def _guard(self, plan: Plan) -> None:
        """Log the plan; hold back a scan the policy forbids; hand the plan to explain()."""
        explain = self.execution_options.get("dynamodb_explain")
        if explain is not None:
            explain["plan"] = plan
            return
        if log.isEnabledFor(logging.INFO):
            log.info(plan.summary())
        if plan.operation != "Scan":
            return
        policy = self.execution_options.get("dynamodb_scan", self.dialect.dynamodb_scan)
        if policy not in SCAN_POLICIES:
            raise ArgumentError(f"dynamodb_scan must be one of {', '.join(SCAN_POLICIES)}, not {policy!r}")
        if policy == "error":
            raise ScanNotAllowed(scan_message(plan))
        if policy == "warn":
            log.warning(scan_message(plan))
            warnings.warn(scan_message(plan), ScanWarning, stacklevel=2)

    def _apply_template(self, template: DMLTemplate | None) -> None:
        """None means attribute absent: leave it out of an INSERT, REMOVE it in an UPDATE."""
        if template is not None:
            groups: dict[frozenset[int], list] = defaultdict(list)
            for params in self.parameters:
                groups[_absent(template, params)].append(params)
            if len(groups) > 1:
                self.dynamodb_groups = [
                    (template.render(a), [_without(p, a) for p in rows]) for a, rows in groups.items()
                ]
            elif absent := next(iter(groups)):
                # Rewritten here, before the statement is logged, so echo shows what is sent.
                self.statement = template.render(absent)
                self.parameters = [_without(params, absent) for params in self.parameters]

    def _configure_cursor(self, compiled: Any) -> None:
        cursor = self.cursor
        options = self.execution_options
        cursor.page_size = options.get("dynamodb_page_size")
        if cursor.page_size is None:  # an explicit dynamodb_page_size wins
            cursor.page_size = _stream_page_size(options)
        cursor.consistent_read = bool(options.get("dynamodb_consistent_read", False))
        if cursor.consistent_read and compiled.dynamodb_global_index:
            raise ArgumentError(
                "dynamodb_consistent_read is not available on a global secondary index (DynamoDB "
                "replicates GSIs asynchronously): read from the table or a local index instead"
            )
        cursor.count_only = compiled.dynamodb_count_only
        cursor.count = compiled.dynamodb_count
        cursor.hidden_columns = compiled.dynamodb_hidden_columns
        if compiled.dynamodb_key_names is not None:
            cursor.connection.set_key_names(*compiled.dynamodb_key_names)
        page = options.get("dynamodb_page")
        if page is not None:
            cursor.page_rows = page.size
            cursor.start_token = page.start(self.statement, self.parameters, cursor)
        discriminator = options.get("dynamodb_discriminator")
        if discriminator is not None:
            policy = options.get("dynamodb_unknown_type", "skip")
            if policy not in UNKNOWN_TYPE_POLICIES:
                raise ArgumentError(
                    f"dynamodb_unknown_type must be one of {', '.join(UNKNOWN_TYPE_POLICIES)}, not {policy!r}"
                )
            attribute, known, base = discriminator
            cursor.discriminator = Discriminator(attribute, known, policy, base)
        if compiled.dynamodb_limit_bind is not None:
            cursor.max_rows = int(self.compiled_parameters[0][compiled.dynamodb_limit_bind])

    def _pre_exec_ddl(self, compiled: Any) -> None:
        self.dynamodb_request = compiled.dynamodb_request
        if self.dynamodb_request is None:
            return
        method, request = self.dynamodb_request
        # create_all() creates a table's indexes right after the table, which CreateTable already
        # made: those CreateIndex statements send nothing. Any other DDL ends that window.
        info = self.root_connection.info
        created = info.pop("sa_dynamo_indexes_created_with_table", set())
        if method == "create_table":
            info["sa_dynamo_indexes_created_with_table"] = {
                (request["TableName"], i["IndexName"])
                for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
                for i in request.get(key, [])
            }
        elif method == "create_index":
            table = request["TableName"]
            index = request["GlobalSecondaryIndexUpdates"][0]["Create"]["IndexName"]
            if (table, index) in created:
                created.discard((table, index))
                info["sa_dynamo_indexes_created_with_table"] = created
                self.dynamodb_request = None
                self.statement = f"-- index {index} was created with table {table}"


class DynamoDBDialect(default.DefaultDialect):
    """SQLAlchemy dialect for DynamoDB's PartiQL API."""

    name = "dynamodb"
    driver = "boto3"
    default_paramstyle = "qmark"
    supports_statement_cache = True
    supports_alter = False
    supports_sequences = False
    supports_native_boolean = True
    supports_native_decimal = True
    supports_native_enum = False
    supports_native_uuid = False
    supports_sane_rowcount = True
    supports_sane_multi_rowcount = False
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
        (sa_schema.Table, {"billing_mode": None, "ttl": None, "read_capacity": None, "write_capacity": None}),
        (sa_schema.Column, {"key": None}),
        (sa_schema.Index, {"projection": None, "local": False, "include": None}),
    ]

    def __init__(self, dynamodb_scan: str = "warn", dynamodb_chunked_commit: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.dynamodb_chunked_commit = dynamodb_chunked_commit
        if dynamodb_scan not in SCAN_POLICIES:
            raise ArgumentError(
                f"dynamodb_scan must be one of {', '.join(SCAN_POLICIES)}, not {dynamodb_scan!r}"
            )
        self.dynamodb_scan = dynamodb_scan

    @classmethod
    def engine_created(cls, engine: Any) -> None:
        event.listen(engine, "before_execute", index_from_execution_options, retval=True)

    @classmethod
    def import_dbapi(cls) -> Any:
        return dynamo_dbapi

    def create_connect_args(self, url: Any) -> tuple[list, dict[str, Any]]:
        query = dict(url.query)
        unknown = set(query) - {"region_name", "endpoint_url", "profile_name", *CLIENT_OPTIONS}
        if unknown:
            raise ValueError(
                f"unknown URL parameter(s) {', '.join(sorted(unknown))}: dynamodb:// accepts "
                f"region_name, endpoint_url, profile_name, {', '.join(CLIENT_OPTIONS)}"
            )
        if url.host and "endpoint_url" not in query:
            host = f"[{url.host}]" if ":" in url.host else url.host  # an IPv6 address
            query["endpoint_url"] = f"http://{host}:{url.port or 8000}"
        return [], _with_client_config(query)

    # -- execution -------------------------------------------------------------------------

    def do_execute(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        if context is not None and context.isddl:
            if context.dynamodb_request is not None:
                admin.run(cursor.connection, *context.dynamodb_request)
            return
        if context is not None and (
            context.dynamodb_no_rows or context.execution_options.get("dynamodb_explain") is not None
        ):
            cursor.describe(statement)  # explain(), or an answer known without asking: nothing sent
            return
        cursor.execute(statement, parameters)

    def do_executemany(self, cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        if context is not None and context.execution_options.get("dynamodb_explain") is not None:
            return
        groups = getattr(context, "dynamodb_groups", None)
        if groups is None:
            cursor.executemany(statement, parameters)
            return
        # Rows leave different attributes absent, so they need different statements; the engine
        # log shows the full template, this logger each statement actually sent.
        total = 0
        for sent, rows in groups:
            log.info(
                "%s -- for %d of %d rows (the others leave other attributes absent)",
                sent,
                len(rows),
                len(parameters),
            )
            cursor.executemany(sent, rows)
            total += max(cursor.rowcount, 0)
        cursor.rowcount = total

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

        return configure

    def do_ping(self, dbapi_connection: Any) -> bool:
        dbapi_connection._call("list_tables", {"Limit": 1})
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

    # -- reflection ------------------------------------------------------------------------

    @staticmethod
    def _dbapi_connection(connection: Any) -> Any:
        return connection.connection.dbapi_connection

    def _admin(self, call: Any, connection: Any, *args: Any) -> Any:
        """A control-plane call for reflection, its driver errors raised as SQLAlchemy's (as
        statement execution does)."""
        try:
            return call(self._dbapi_connection(connection), *args)
        except dynamo_dbapi.Error as error:
            raise DBAPIError.instance(None, None, error, dynamo_dbapi.Error) from error

    @reflection.cache
    def _describe(self, connection: Any, table_name: str, **kw: Any) -> dict[str, Any] | None:
        return self._admin(admin.describe_table, connection, table_name)

    def _described(self, connection: Any, table_name: str, **kw: Any) -> dict[str, Any]:
        described = self._describe(connection, table_name, **kw)
        if described is None:
            from sqlalchemy.exc import NoSuchTableError

            raise NoSuchTableError(table_name)
        return described

    @reflection.cache
    def has_table(self, connection: Any, table_name: str, schema: str | None = None, **kw: Any) -> bool:
        return self._describe(connection, table_name, **kw) is not None

    @reflection.cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        return self._admin(admin.list_tables, connection)

    @reflection.cache
    def get_table_options(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Billing mode, provisioned capacity and the TTL attribute, as the Table keywords that
        create the same table."""
        described = self._described(connection, table_name, **kw)
        mode = described.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
        options: dict[str, Any] = {"dynamodb_billing_mode": mode}
        if mode == "PROVISIONED":
            throughput = described["ProvisionedThroughput"]
            options["dynamodb_read_capacity"] = throughput["ReadCapacityUnits"]
            options["dynamodb_write_capacity"] = throughput["WriteCapacityUnits"]
        ttl = self._admin(admin.time_to_live_attribute, connection, table_name)
        if ttl is not None:
            options["dynamodb_ttl"] = ttl
        return options

    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        return []

    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        return []

    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[dict]:
        """The attributes DynamoDB knows types for: table keys first, then index keys."""
        described = self._described(connection, table_name, **kw)
        types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
        keys = [k["AttributeName"] for k in described["KeySchema"]]
        ordered = keys + [name for name in types if name not in keys]
        return [
            {
                "name": name,
                "type": _REFLECTED_TYPES[types[name]](),
                "nullable": name not in keys,
                "default": None,
                "autoincrement": False,
            }
            for name in ordered
        ]

    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict:
        described = self._described(connection, table_name, **kw)
        return {"constrained_columns": [k["AttributeName"] for k in described["KeySchema"]], "name": None}

    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[dict]:
        described = self._described(connection, table_name, **kw)
        indexes = []
        for local, key in ((False, "GlobalSecondaryIndexes"), (True, "LocalSecondaryIndexes")):
            for entry in described.get(key, []):
                projection = entry["Projection"]
                options: dict[str, Any] = {
                    "dynamodb_projection": projection["ProjectionType"],
                    "dynamodb_local": local,
                }
                if projection.get("NonKeyAttributes"):
                    options["dynamodb_include"] = projection["NonKeyAttributes"]
                indexes.append(
                    {
                        "name": entry["IndexName"],
                        "column_names": [k["AttributeName"] for k in entry["KeySchema"]],
                        "unique": False,
                        "dialect_options": options,
                    }
                )
        return indexes

    def get_foreign_keys(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list:
        return []

    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list:
        return []

    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list:
        return []


class DynamoDBLocalDialect(DynamoDBDialect):
    """``dynamodb+local://``: a private DynamoDB Local on a free loopback port, started on first
    connect and stopped at exit; ``?data_dir=PATH`` keeps the data between runs. When
    ``SA_DYNAMO_LOCAL_ENDPOINT`` is set, that running server is used instead."""

    driver = "local"
    supports_statement_cache = True
    _servers: dict[str | None, Any] = {}
    _lock = threading.Lock()

    def create_connect_args(self, url: Any) -> tuple[list, dict[str, Any]]:
        query = dict(url.query)
        data_dir = query.pop("data_dir", None)
        if query:
            raise ValueError(f"dynamodb+local:// accepts only ?data_dir=PATH, not {', '.join(sorted(query))}")
        return [], {"local_data_dir": data_dir}

    def connect(self, *cargs: Any, local_data_dir: str | None = None, **cparams: Any) -> Any:
        """Start the private DynamoDB Local on first connect (not at create_engine), once per data dir."""
        import os

        from .. import local

        endpoint = os.environ.get(local.ENV_ENDPOINT)
        if endpoint is None:
            with self._lock:
                server = self._servers.get(local_data_dir)
                if server is None:
                    server = self._servers[local_data_dir] = local.start(data_dir=local_data_dir)
            endpoint = server.endpoint_url
        return super().connect(*cargs, endpoint_url=endpoint, **cparams)
