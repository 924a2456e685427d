"""Control-plane calls (tables, indexes, TTL, listing) for the dialect's DDL and reflection.

PartiQL has no DDL; these run the DynamoDB table APIs with the same error translation as the
cursor, and wait until the change has taken effect so the next statement can rely on it. This
is the one module that sends DescribeTable: the driver, the dialect's reflection, ``sa-dynamo
check`` and the migrations all read a table's description through ``describe_table``.
"""

from __future__ import annotations

import time
from typing import Any

from . import guard_names, own_tables
from .errors import Error, OperationalError, ProgrammingError
from .transport import Transport
from .validate import TableRules, check_name, rules_from_description

# Polls start fast (DynamoDB Local finishes most changes at once) and back off to one a second.
_FIRST_POLL_SECONDS = 0.05
_MAX_POLL_SECONDS = 1.0
_WAIT_SECONDS = 600
# Keys the dialect adds to a request for what the call itself cannot carry: the TTL to enable once
# the table is ACTIVE (UpdateTimeToLive's TimeToLiveSpecification), and whether an index is local.
TTL_KEY = "TimeToLiveSpecification"
LOCAL_INDEX_KEY = "LocalIndex"
# ... and the table of the guard items of the table's unique constraints, created with it
GUARD_TABLE_KEY = "UniqueGuardTable"
# ... whose request lists the named constraints to record in it (guard_names.record_request)
GUARD_RECORDS_KEY = "UniqueConstraintNames"


def _wait(transport: Transport, what: str, done: Any) -> None:
    """Poll ``done`` until it holds, pausing as the transport pauses (never blocking an event loop)."""
    deadline = time.monotonic() + _WAIT_SECONDS
    delay = _FIRST_POLL_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise OperationalError(f"gave up waiting for {what} after {_WAIT_SECONDS} s")
        transport.pause(delay)
        delay = min(delay * 2, _MAX_POLL_SECONDS)


def _named(request: dict[str, Any]) -> dict[str, Any]:
    """The request, once the table and index names it carries are names DynamoDB accepts."""
    check_name("table", request["TableName"])
    indexes = request.get("GlobalSecondaryIndexes", []) + request.get("LocalSecondaryIndexes", [])
    indexes += [
        change for update in request.get("GlobalSecondaryIndexUpdates", []) for change in update.values()
    ]
    for index in indexes:
        check_name("index", index["IndexName"])
    return request


def _described(transport: Transport, table: str) -> dict[str, Any]:
    """DescribeTable's Table; a ProgrammingError (ResourceNotFoundException) when there is none."""
    return transport.send("DescribeTable", _named({"TableName": table}))["Table"]


def describe_table(transport: Transport, table: str) -> dict[str, Any] | None:
    """DescribeTable's Table, or None when the table does not exist."""
    try:
        return _described(transport, table)
    except Error as error:
        if error.code == "ResourceNotFoundException":
            return None
        raise


def key_names(described: dict[str, Any]) -> tuple[str, ...]:
    """The key attributes of a described table, HASH first (none for ``{}``, a table not known)."""
    ordered = sorted(described.get("KeySchema", []), key=lambda k: k["KeyType"] != "HASH")
    return tuple(k["AttributeName"] for k in ordered)


def table_rules(transport: Transport, table: str) -> TableRules:
    """What DescribeTable tells of an existing table's writes (its and its indexes' key
    attributes and types); DynamoDB's error when there is no such table."""
    return rules_from_description(_described(transport, table))


def time_to_live_attribute(transport: Transport, table: str) -> str | None:
    """The attribute whose epoch seconds expire items, when TTL is enabled (or being enabled)."""
    described = transport.send("DescribeTimeToLive", _named({"TableName": table}))["TimeToLiveDescription"]
    if described.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return described.get("AttributeName")
    return None


def list_tables(transport: Transport, page_size: int | None = None) -> list[str]:
    """Every table name but sa_dynamo's own (own_tables.py: unique guards, the counters),
    following ListTables paging (``page_size`` names per request; at most 100, DynamoDB's
    default)."""
    names: list[str] = []
    request: dict[str, Any] = {} if page_size is None else {"Limit": page_size}
    while True:
        page = transport.send("ListTables", request)
        names += [name for name in page.get("TableNames", []) if not own_tables.is_own_table(name)]
        if "LastEvaluatedTableName" not in page:
            return names
        request = {**request, "ExclusiveStartTableName": page["LastEvaluatedTableName"]}


def _status(transport: Transport, table: str) -> str | None:
    described = describe_table(transport, table)
    return None if described is None else described["TableStatus"]


def _index_status(transport: Transport, table: str, index: str) -> str | None:
    described = describe_table(transport, table) or {}
    for entry in described.get("GlobalSecondaryIndexes", []) + described.get("LocalSecondaryIndexes", []):
        if entry["IndexName"] == index:
            return entry.get("IndexStatus", "ACTIVE")
    return None


def wait_active(transport: Transport, table: str) -> None:
    _wait(transport, f"table {table} to become ACTIVE", lambda: _status(transport, table) == "ACTIVE")


def create_table(transport: Transport, request: dict[str, Any]) -> None:
    request = dict(request)
    ttl = request.pop(TTL_KEY, None)
    guards = request.pop(GUARD_TABLE_KEY, None)
    name = request["TableName"]
    transport.send("CreateTable", _named(request))
    wait_active(transport, name)
    if ttl:
        transport.send("UpdateTimeToLive", {"TableName": name, TTL_KEY: ttl})
    if guards:
        records = guards.pop(GUARD_RECORDS_KEY, {})
        create_table(transport, guards)
        for constraint, columns in records.items():
            transport.send("PutItem", guard_names.record_request(name, constraint, tuple(columns)))


def delete_table(transport: Transport, request: dict[str, Any]) -> None:
    """Delete a table, and the table of its unique constraints' guards if there is one (the
    Table dropped need not declare them: Alembic's op.drop_table names the table only)."""
    name = request["TableName"]
    transport.send("DeleteTable", _named(request))
    _wait(transport, f"table {name} to be deleted", lambda: _status(transport, name) is None)
    guards = guard_names.guard_table(name)
    if not own_tables.is_guard_table(name) and _status(transport, guards) is not None:
        delete_table(transport, {"TableName": guards})


def create_index(transport: Transport, request: dict[str, Any]) -> None:
    """Add a GSI and wait until it is ACTIVE. A local index exists only from its table's
    CreateTable on (the dialect sends nothing for one that CreateTable made)."""
    request = dict(request)
    local = request.pop(LOCAL_INDEX_KEY, False)
    table = request["TableName"]
    index = request["GlobalSecondaryIndexUpdates"][0]["Create"]["IndexName"]
    if local:
        raise ProgrammingError(
            f"local index {index} can only be created with table {table}: recreate the table to add it"
        )
    transport.send("UpdateTable", _named(request))
    _wait(
        transport,
        f"index {index} on {table} to become ACTIVE",
        lambda: _index_status(transport, table, index) == "ACTIVE",
    )


def drop_index(transport: Transport, request: dict[str, Any]) -> None:
    table = request["TableName"]
    index = request["GlobalSecondaryIndexUpdates"][0]["Delete"]["IndexName"]
    transport.send("UpdateTable", _named(request))
    _wait(
        transport,
        f"index {index} on {table} to be deleted",
        lambda: _index_status(transport, table, index) is None,
    )


OPERATIONS = {
    "create_table": create_table,
    "delete_table": delete_table,
    "create_index": create_index,
    "drop_index": drop_index,
}


def run(transport: Transport, method: str, request: dict[str, Any]) -> None:
    """Run one control-plane operation by name (as built by the dialect's DDL compiler)."""
    OPERATIONS[method](transport, request)
