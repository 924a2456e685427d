"""CREATE/DROP TABLE and CREATE/DROP INDEX -> DynamoDB control-plane calls.

PartiQL has no DDL, so the DDL compiler builds the CreateTable/DeleteTable/UpdateTable request
and renders the calls it stands for readably (a table with unique constraints brings the table
of their guard items, dbapi/unique.py) (that rendering is what ``echo=True`` shows); the
execution context sends the request and waits until the table or index is ACTIVE (or gone).
What DynamoDB cannot hold (more than two key columns, a boolean key, a check constraint, a
server-side default) is a CompileError or ArgumentError before anything is sent, never dropped.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import CheckConstraint, Index, Table, UniqueConstraint
from sqlalchemy.exc import CompileError
from sqlalchemy.schema import CreateTable
from sqlalchemy.sql import compiler

from ..dbapi import guard_names, guard_upkeep, own_tables
from ..dbapi.control_plane import GUARD_RECORDS_KEY, GUARD_TABLE_KEY, LOCAL_INDEX_KEY, TTL_KEY
from ..dbapi.counters import reset_request
from .client_side import foreign_keys
from .key_schema import key_schema
from .types import attribute_type, key_attribute_type
from .write_rules import unique_constraints

PROJECTIONS = ("ALL", "KEYS_ONLY", "INCLUDE")
BILLING_MODES = ("PAY_PER_REQUEST", "PROVISIONED")


def _key_elements(hash_name: str, range_name: str | None) -> list[dict[str, str]]:
    keys = [{"AttributeName": hash_name, "KeyType": "HASH"}]
    if range_name is not None:
        keys.append({"AttributeName": range_name, "KeyType": "RANGE"})
    return keys


def provisioned_throughput(table: Table) -> dict[str, int] | None:
    """The table's ProvisionedThroughput, or None when it bills per request.

    Capacities without a billing mode mean PROVISIONED; PROVISIONED without capacities means 1/1.
    The same throughput goes to every GSI, which DynamoDB requires on a provisioned table.
    """
    options = table.dialect_options["dynamodb"]
    read, write = options["read_capacity"], options["write_capacity"]
    given = read is not None or write is not None
    mode = (options["billing_mode"] or ("PROVISIONED" if given else "PAY_PER_REQUEST")).upper()
    if mode not in BILLING_MODES:
        raise CompileError(
            f"table {table.name!r}: dynamodb_billing_mode must be one of {', '.join(BILLING_MODES)}, "
            f"not {options['billing_mode']!r}"
        )
    if mode == "PAY_PER_REQUEST":
        if given:
            raise CompileError(
                f"table {table.name!r} bills PAY_PER_REQUEST, which takes no capacities: drop "
                "dynamodb_read_capacity/dynamodb_write_capacity or use dynamodb_billing_mode='PROVISIONED'"
            )
        return None
    return {
        "ReadCapacityUnits": 1 if read is None else int(read),
        "WriteCapacityUnits": 1 if write is None else int(write),
    }


def _projection(index: Index) -> dict[str, Any]:
    options = index.dialect_options["dynamodb"]
    projection_type = (options["projection"] or "ALL").upper()
    if projection_type not in PROJECTIONS:
        raise CompileError(
            f"index {index.name!r}: dynamodb_projection must be one of {', '.join(PROJECTIONS)}"
        )
    include = options["include"]
    if projection_type != "INCLUDE":
        if include:
            raise CompileError(
                f"index {index.name!r}: dynamodb_include needs dynamodb_projection='INCLUDE' "
                f"(the projection is {projection_type})"
            )
        return {"ProjectionType": projection_type}
    if not include:
        raise CompileError(
            f"index {index.name!r}: INCLUDE projection needs dynamodb_include=[attribute names]"
        )
    return {"ProjectionType": "INCLUDE", "NonKeyAttributes": [getattr(c, "name", c) for c in include]}


def index_definition(index: Index) -> tuple[bool, dict[str, Any], list]:
    """(is_local, the GlobalSecondaryIndexes/LocalSecondaryIndexes entry, its key columns)."""
    columns = list(index.columns)
    if not 1 <= len(columns) <= 2 or len(columns) != len(index.expressions):
        raise CompileError(
            f"index {index.name!r} must name one or two columns (partition key, then optional sort key)"
        )
    local = bool(index.dialect_options["dynamodb"]["local"])
    definition: dict[str, Any] = {
        "IndexName": index.name,
        "KeySchema": _key_elements(columns[0].name, columns[1].name if len(columns) == 2 else None),
        "Projection": _projection(index),
    }
    if local:
        table_keys = key_schema(index.table)
        if table_keys.range_key is None:
            raise CompileError(
                f"local index {index.name!r}: table {index.table.name!r} has no sort key, and DynamoDB "
                "allows local indexes only on tables with one; use a global index"
            )
        if len(columns) != 2 or columns[0].name != table_keys.hash_key.name:
            raise CompileError(
                f"local index {index.name!r} must be ({table_keys.hash_key.name}, <sort attribute>): an "
                "LSI shares the table's partition key"
            )
    else:
        throughput = provisioned_throughput(index.table)
        if throughput:
            definition["ProvisionedThroughput"] = throughput
    return local, definition, columns


def _attribute_definitions(keys: list[tuple[Any, str]]) -> list[dict[str, str]]:
    """AttributeDefinitions for (column, owner) key pairs; one type per attribute name."""
    seen: dict[str, str] = {}
    for column, owner in keys:
        code = key_attribute_type(column, owner)
        if seen.setdefault(column.name, code) != code:
            raise CompileError(f"attribute {column.name!r} is used as a key with two different types")
    return [{"AttributeName": name, "AttributeType": code} for name, code in seen.items()]


def _refuse_what_dynamodb_cannot_enforce(table: Table) -> None:
    """Server-side defaults and check constraints would be accepted and then ignored (unique
    constraints are kept by guard items, dbapi/unique.py)."""
    for column in table.columns:
        if column.server_default is not None:
            raise CompileError(
                f"column {table.name}.{column.name} has a server-side default (server_default, "
                "Computed or Identity); DynamoDB computes no values: use default= (applied by "
                "SQLAlchemy) instead"
            )
    for constraint in table.constraints:
        if isinstance(constraint, CheckConstraint):
            raise CompileError(
                f"table {table.name!r} has a check constraint; DynamoDB enforces none: drop it "
                "(or check the values in the application, e.g. with a @validates method)"
            )
    if own_tables.is_guard_table(table.name):
        raise CompileError(
            f"table {table.name!r}: names ending in {own_tables.GUARD_SUFFIX!r} are kept for the guard "
            "items of unique constraints: rename the table"
        )
    if table.name == own_tables.COUNTERS_TABLE:
        raise CompileError(
            f"table {table.name!r} is the name of the table sa_dynamo keeps its autoincrement "
            "counters in: rename the table"
        )


def guard_table_request(table: Table) -> dict[str, Any] | None:
    """The CreateTable request of the table of ``table``'s unique guards, None when it has no
    unique constraint. It bills as ``table`` does."""
    if not unique_constraints(table):
        return None
    request = guard_upkeep.guard_table_request(table.name, provisioned_throughput(table))
    named = {
        constraint.name: [column.name for column in constraint.columns]
        for constraint in sorted(table.constraints, key=lambda c: str(c.name))
        if isinstance(constraint, UniqueConstraint) and isinstance(constraint.name, str)
    }
    return {**request, GUARD_RECORDS_KEY: named} if named else request


def create_table_request(table: Table) -> dict[str, Any]:
    """The CreateTable request for a Table: key schema, attribute types, indexes, billing."""
    if table.schema is not None:
        raise CompileError(f"table {table.name!r}: DynamoDB has no schemas; drop schema=")
    _refuse_what_dynamodb_cannot_enforce(table)
    keys = key_schema(table)
    request: dict[str, Any] = {
        "TableName": table.name,
        "KeySchema": _key_elements(
            keys.hash_key.name, keys.range_key.name if keys.range_key is not None else None
        ),
    }
    key_columns = [(column, f"table {table.name!r}") for column in keys.columns]
    globals_, locals_ = [], []
    for index in sorted(table.indexes, key=lambda i: i.name or ""):
        local, definition, columns = index_definition(index)
        (locals_ if local else globals_).append(definition)
        key_columns += [(column, f"index {index.name!r}") for column in columns]
    request["AttributeDefinitions"] = _attribute_definitions(key_columns)
    throughput = provisioned_throughput(table)
    request["BillingMode"] = "PROVISIONED" if throughput else "PAY_PER_REQUEST"
    if throughput:
        request["ProvisionedThroughput"] = throughput
    if globals_:
        request["GlobalSecondaryIndexes"] = globals_
    if locals_:
        request["LocalSecondaryIndexes"] = locals_
    return request


def ttl_attribute(table: Table) -> str | None:
    """The ``dynamodb_ttl`` attribute name; a CompileError if its column cannot hold epoch seconds."""
    ttl = table.dialect_options["dynamodb"]["ttl"]
    if ttl is None:
        return None
    name = getattr(ttl, "name", ttl)
    column = table.columns.get(name)
    if column is not None and attribute_type(column.type) != "N":
        # DynamoDB silently never expires an item whose TTL attribute is not a number.
        raise CompileError(
            f"table {table.name!r}: the dynamodb_ttl column {name!r} has type {column.type!r}, but "
            "DynamoDB expires items only by a number of epoch seconds: declare it Integer"
        )
    return name


def autoincrement_counter(table: Table) -> tuple[str, str] | None:
    """(table, column) of the counter that numbers the table's autoincrement key column (an
    Integer primary key alone, SQLAlchemy's ``autoincrement="auto"``): dbapi/counters.py."""
    column = table.autoincrement_column
    return None if column is None else (table.name, column.name)


def check_before_create(metadata: Any, connection: Any, tables: Any = (), **kw: Any) -> None:
    """MetaData's ``before_create``: compile every table's CreateTable before the first is sent, so
    that create_all() refusing one table (a foreign key's action, a check constraint...) has
    created none of the others."""
    if connection.dialect.name == "dynamodb":
        for table in tables:
            CreateTable(table).compile(dialect=connection.dialect)


def render_call(operation: str, request: dict[str, Any]) -> str:
    """What echo shows for a control-plane call: its name and its request as JSON."""
    return f"{operation} {json.dumps(request, default=str, ensure_ascii=False)}"


class DynamoDBDDLCompiler(compiler.DDLCompiler):
    """Builds the control-plane request for a DDL construct; ``control_plane_request`` is (method, kwargs).

    The rendering shows each call control_plane.py makes for it, one per line.
    """

    control_plane_request: tuple[str, dict[str, Any]] | None = None
    # The counter a CREATE or DROP TABLE resets, as a new PostgreSQL table's SERIAL starts at 1.
    counter: tuple[str, str] | None = None

    def _call(self, method: str, request: dict[str, Any], *calls: tuple[str, dict[str, Any]]) -> str:
        self.control_plane_request = (method, request)
        if self.counter is not None:
            calls += (("DeleteItem", reset_request(*self.counter)),)
        return "\n".join(render_call(operation, sent) for operation, sent in calls)

    def visit_create_table(self, create, **kw):
        table = create.element
        request = create_table_request(table)
        for fk in table.foreign_key_constraints:  # an action carried out or refused, never ignored
            foreign_keys.check(fk, self.dialect)
        self.dialect.declared(table)  # once the request says the Table is one DynamoDB can hold
        self.counter = autoincrement_counter(table)
        sent, calls = dict(request), [("CreateTable", request)]
        ttl = ttl_attribute(table)
        if ttl is not None:
            sent[TTL_KEY] = spec = {"Enabled": True, "AttributeName": ttl}
            calls.append(("UpdateTimeToLive", {"TableName": table.name, TTL_KEY: spec}))
        guards = guard_table_request(table)
        if guards is not None:
            sent[GUARD_TABLE_KEY] = guards
            records = guards.get(GUARD_RECORDS_KEY, {})
            calls.append(("CreateTable", {k: v for k, v in guards.items() if k != GUARD_RECORDS_KEY}))
            calls += [
                ("PutItem", guard_names.record_request(table.name, n, tuple(c))) for n, c in records.items()
            ]
        return self._call("create_table", sent, *calls)

    def visit_drop_table(self, drop, **kw):
        # the guard table goes with it, whatever the Table says (control_plane.delete_table)
        table = drop.element
        request = {"TableName": table.name}
        calls = [("DeleteTable", request)]
        declared = any(isinstance(c, UniqueConstraint) for c in table.constraints)
        if declared or any(index.unique for index in table.indexes):
            calls.append(("DeleteTable", {"TableName": guard_names.guard_table(table.name)}))
        self.counter = autoincrement_counter(table)
        return self._call("delete_table", request, *calls)

    def visit_create_index(self, create, **kw):
        index = create.element
        local, definition, columns = index_definition(index)
        request = {
            "TableName": index.table.name,
            "AttributeDefinitions": _attribute_definitions([(c, f"index {index.name!r}") for c in columns]),
            "GlobalSecondaryIndexUpdates": [{"Create": definition}],
        }
        return self._call("create_index", {**request, LOCAL_INDEX_KEY: local}, ("UpdateTable", request))

    def visit_drop_index(self, drop, **kw):
        index = drop.element
        if index.dialect_options["dynamodb"]["local"]:
            raise CompileError(
                f"local index {index.name!r} lives as long as table {index.table.name!r}: DynamoDB "
                "cannot drop it alone; recreate the table without it"
            )
        request = {
            "TableName": index.table.name,
            "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": index.name}}],
        }
        return self._call("drop_index", request, ("UpdateTable", request))

    def visit_create_schema(self, create, **kw):
        raise CompileError("DynamoDB has no schemas")

    visit_drop_schema = visit_create_schema

    def visit_add_constraint(self, create, **kw):
        raise CompileError("DynamoDB has no constraints beyond the key schema")

    visit_drop_constraint = visit_add_constraint
