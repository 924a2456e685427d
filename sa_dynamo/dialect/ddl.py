"""CREATE/DROP TABLE and CREATE/DROP INDEX -> DynamoDB control-plane calls.

PartiQL has no DDL, so the DDL compiler builds the CreateTable/DeleteTable/UpdateTable request
and renders it readably (that rendering is what ``echo=True`` shows); the execution context
sends the request and waits until the table or index is ACTIVE (or gone).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Index, Table
from sqlalchemy.exc import CompileError
from sqlalchemy.sql import compiler

from .keys import key_schema
from .types import key_attribute_type

PROJECTIONS = ("ALL", "KEYS_ONLY", "INCLUDE")


def _key_elements(hash_name: str, range_name: str | None) -> list[dict[str, str]]:
    keys = [{"AttributeName": hash_name, "KeyType": "HASH"}]
    if range_name is not None:
        keys.append({"AttributeName": range_name, "KeyType": "RANGE"})
    return keys


def _throughput(options: dict[str, Any]) -> dict[str, int] | None:
    read, write = options["read_capacity"], options["write_capacity"]
    if read is None and write is None:
        return None
    return {"ReadCapacityUnits": int(read or 1), "WriteCapacityUnits": int(write or 1)}


def index_definition(index: Index) -> tuple[bool, dict[str, Any], list]:
    """(is_local, the GlobalSecondaryIndexes/LocalSecondaryIndexes entry, its key columns)."""
    options = index.dialect_options["dynamodb"]
    columns = list(index.columns)
    if index.unique:
        raise CompileError(f"index {index.name!r}: DynamoDB has no unique indexes; drop unique=True")
    if not 1 <= len(columns) <= 2 or len(columns) != len(index.expressions):
        raise CompileError(
            f"index {index.name!r} must name one or two columns (partition key, then optional sort key)"
        )
    projection_type = (options["projection"] or "ALL").upper()
    if projection_type not in PROJECTIONS:
        raise CompileError(
            f"index {index.name!r}: dynamodb_projection must be one of {', '.join(PROJECTIONS)}"
        )
    projection: dict[str, Any] = {"ProjectionType": projection_type}
    if projection_type == "INCLUDE":
        include = options["include"]
        if not include:
            raise CompileError(
                f"index {index.name!r}: INCLUDE projection needs dynamodb_include=[attribute names]"
            )
        projection["NonKeyAttributes"] = [getattr(c, "name", c) for c in include]
    local = bool(options["local"])
    definition: dict[str, Any] = {
        "IndexName": index.name,
        "KeySchema": _key_elements(columns[0].name, columns[1].name if len(columns) == 2 else None),
        "Projection": projection,
    }
    if local:
        table_hash = key_schema(index.table).hash_key.name
        if len(columns) != 2 or columns[0].name != table_hash:
            raise CompileError(
                f"local index {index.name!r} must be ({table_hash}, <sort attribute>): an LSI shares "
                "the table's partition key"
            )
    else:
        throughput = _throughput(index.table.dialect_options["dynamodb"])
        if throughput:
            definition["ProvisionedThroughput"] = throughput
    return local, definition, columns


def _attribute_definitions(columns: list) -> list[dict[str, str]]:
    seen: dict[str, str] = {}
    for column in columns:
        code = key_attribute_type(column)
        if seen.setdefault(column.name, code) != code:
            raise CompileError(f"attribute {column.name!r} is used as a key with two different types")
    return [{"AttributeName": name, "AttributeType": code} for name, code in seen.items()]


def create_table_request(table: Table) -> dict[str, Any]:
    """The CreateTable request for a Table: key schema, attribute types, indexes, billing."""
    if table.schema is not None:
        raise CompileError(f"table {table.name!r}: DynamoDB has no schemas; drop schema=")
    keys = key_schema(table)
    options = table.dialect_options["dynamodb"]
    request: dict[str, Any] = {
        "TableName": table.name,
        "KeySchema": _key_elements(
            keys.hash_key.name, keys.range_key.name if keys.range_key is not None else None
        ),
    }
    key_columns = list(keys.columns)
    globals_, locals_ = [], []
    for index in sorted(table.indexes, key=lambda i: i.name or ""):
        local, definition, columns = index_definition(index)
        (locals_ if local else globals_).append(definition)
        key_columns += columns
    request["AttributeDefinitions"] = _attribute_definitions(key_columns)
    throughput = _throughput(options)
    billing = (options["billing_mode"] or ("PROVISIONED" if throughput else "PAY_PER_REQUEST")).upper()
    request["BillingMode"] = billing
    if billing == "PROVISIONED":
        request["ProvisionedThroughput"] = throughput or {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    if globals_:
        request["GlobalSecondaryIndexes"] = globals_
    if locals_:
        request["LocalSecondaryIndexes"] = locals_
    return request


def render_call(operation: str, request: dict[str, Any]) -> str:
    """What echo shows for a control-plane call: its name and its request as JSON."""
    return f"{operation} {json.dumps(request, default=str)}"


class DynamoDBDDLCompiler(compiler.DDLCompiler):
    """Builds the control-plane request for a DDL construct; ``dynamodb_request`` is (method, kwargs)."""

    dynamodb_request: tuple[str, dict[str, Any]] | None = None

    def _call(self, method: str, operation: str, request: dict[str, Any]) -> str:
        self.dynamodb_request = (method, request)
        return render_call(operation, request)

    def visit_create_table(self, create, **kw):
        table = create.element
        request = create_table_request(table)
        ttl = table.dialect_options["dynamodb"]["ttl"]
        if ttl:
            request = dict(request, TimeToLiveAttribute=ttl)
        return self._call("create_table", "CreateTable", request)

    def visit_drop_table(self, drop, **kw):
        return self._call("delete_table", "DeleteTable", {"TableName": drop.element.name})

    def visit_create_index(self, create, **kw):
        index = create.element
        local, definition, columns = index_definition(index)
        request = {
            "TableName": index.table.name,
            "AttributeDefinitions": _attribute_definitions(columns),
            "GlobalSecondaryIndexUpdates": [{"Create": definition}],
            "LocalIndex": local,
        }
        return self._call("create_index", "UpdateTable", request)

    def visit_drop_index(self, drop, **kw):
        index = drop.element
        request = {
            "TableName": index.table.name,
            "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": index.name}}],
        }
        return self._call("drop_index", "UpdateTable", request)

    def visit_create_schema(self, create, **kw):
        raise CompileError("DynamoDB has no schemas")

    visit_drop_schema = visit_create_schema

    def visit_add_constraint(self, create, **kw):
        raise CompileError("DynamoDB has no constraints beyond the key schema")

    visit_drop_constraint = visit_add_constraint
