"""The guard items of a unique constraint kept up apart from the rows' writes (unique.py): the
guard table created, the guards of the rows already stored written when a constraint is added to
a table (refused when two rows share a value), removed when it is dropped, and compared with the
rows (``sa-dynamo check``). Each reads the whole table with a strongly consistent Scan."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from . import batch, capacity, control_plane
from .errors import IntegrityError, OperationalError, shown
from .guard_names import GUARD_COLUMNS, GUARD_KEY, GUARD_ROW, columns_text, guard_table, record_key
from .limits import BATCH_SIZE
from .transport import Transport
from .unique import guard_item, guards_of

Item = dict[str, Any]


def guard_table_request(table: str, throughput: dict[str, int] | None = None) -> dict[str, Any]:
    """The CreateTable request of ``table``'s guard table, billed as ``throughput`` says (None:
    per request)."""
    request: dict[str, Any] = {
        "TableName": guard_table(table),
        "KeySchema": [{"AttributeName": GUARD_KEY, "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": GUARD_KEY, "AttributeType": "S"}],
        "BillingMode": "PROVISIONED" if throughput else "PAY_PER_REQUEST",
    }
    if throughput:
        request["ProvisionedThroughput"] = throughput
    return request


def ensure_guard_table(transport: Transport, table: str) -> bool:
    """Create ``table``'s guard table unless it exists; whether it was created."""
    if control_plane.describe_table(transport, guard_table(table)) is not None:
        return False
    control_plane.create_table(transport, guard_table_request(table))
    return True


def recorded_columns(transport: Transport, table: str, name: str) -> tuple[str, ...] | None:
    """The columns of the constraint ``name`` of ``table`` as recorded, None when not recorded."""
    if control_plane.describe_table(transport, guard_table(table)) is None:
        return None
    request = {"TableName": guard_table(table), "Key": record_key(name), "ConsistentRead": True}
    item = transport.send("GetItem", request).get("Item")
    return tuple(json.loads(item[GUARD_COLUMNS]["S"])) if item else None


def _scan(transport: Transport, table: str, **request: Any) -> Iterator[Item]:
    request = {"TableName": table, "ConsistentRead": True, **request}
    while True:
        page = transport.send("Scan", capacity.asking(request))
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        request = {**request, "ExclusiveStartKey": page["LastEvaluatedKey"]}


def wanted_guards(
    transport: Transport, table: str, columns: tuple[str, ...], hidden: bool = False
) -> dict[str, Item]:
    """The guard each stored row of ``table`` needs under the constraint on ``columns``, by key;
    an IntegrityError, before anything is written, when rows share a value."""
    keys = control_plane.key_names(control_plane.describe_table(transport, table) or {})
    guards: dict[str, Item] = {}
    shared: dict[str, int] = {}
    for item in _scan(transport, table):
        for key in guards_of(item, (columns,)):
            if key in guards:
                shared[key] = shared.get(key, 1) + 1
            guards[key] = guard_item(columns, key, {name: item[name] for name in keys})
    if shared:
        values = "" if hidden else ": " + ", ".join(shown(key, False) for key in list(shared)[:5])
        names = ", ".join(f"{table}.{name}" for name in columns)
        raise IntegrityError(
            f"UNIQUE constraint failed: {names}: {len(shared)} value(s) are held by more than one row "
            f"already{values}. Nothing was written: change or delete the duplicate rows, then add the "
            "constraint again"
        )
    return guards


def create_guards(transport: Transport, table: str, columns: tuple[str, ...], hidden: bool = False) -> int:
    """Give every stored row of ``table`` its guard under a new constraint on ``columns`` (the
    guard table created if need be); how many. Rewriting a guard is harmless, so a run cut short
    can be run again. Writes made meanwhile by programs that do not know the constraint yet are
    not guarded: add it while they are stopped."""
    guards = wanted_guards(transport, table, columns, hidden)
    ensure_guard_table(transport, table)
    _write(transport, guard_table(table), [{"PutRequest": {"Item": item}} for item in guards.values()])
    return len(guards)


def drop_guards(transport: Transport, table: str, columns: tuple[str, ...]) -> int:
    """Delete the guards of the constraint on ``columns`` of ``table``; how many."""
    if control_plane.describe_table(transport, guard_table(table)) is None:
        return 0
    found = _scan(
        transport,
        guard_table(table),
        FilterExpression="#c = :c",
        ExpressionAttributeNames={"#c": GUARD_COLUMNS},
        ExpressionAttributeValues={":c": {"S": columns_text(columns)}},
    )
    deletes = [{"DeleteRequest": {"Key": {GUARD_KEY: item[GUARD_KEY]}}} for item in found]
    _write(transport, guard_table(table), deletes)
    return len(deletes)


def missing_guards(transport: Transport, table: str, columns: tuple[str, ...]) -> list[Item]:
    """The keys of the rows of ``table`` whose guard under the constraint on ``columns`` is
    missing (or names another row): writes that did not go through sa_dynamo, or rows stored
    before the constraint was added without creating its guards."""
    wanted = wanted_guards(transport, table, columns, hidden=True)
    if not wanted:
        return []
    if control_plane.describe_table(transport, guard_table(table)) is None:
        return [guard[GUARD_ROW]["M"] for guard in wanted.values()]
    stored = batch.read_items(transport, guard_table(table), [{GUARD_KEY: {"S": key}} for key in wanted])
    held = {item[GUARD_KEY]["S"]: item.get(GUARD_ROW) for item in stored}
    return [guard[GUARD_ROW]["M"] for key, guard in wanted.items() if held.get(key) != guard[GUARD_ROW]]


def _write(transport: Transport, table: str, requests: list[Item]) -> None:
    for start in range(0, len(requests), BATCH_SIZE):
        _, leftover = batch.until_processed(
            transport, "BatchWriteItem", {table: requests[start : start + BATCH_SIZE]}, "UnprocessedItems"
        )
        if leftover:
            raise OperationalError(
                f"{sum(len(r) for r in leftover.values())} guard items of {table!r} stayed unprocessed: "
                "DynamoDB is short of capacity; run the operation again later (it can be repeated)"
            )
