"""AUTOCOMMIT batches: ``executemany`` as BatchExecuteStatement and PUT as BatchWriteItem, 25
statements or items per call, with retries and a report of partial failures.

A batch is not atomic: each statement succeeds or fails on its own. Throttled statements and
unprocessed items are resent with backoff; what still fails is reported with the rows that
failed, after every other statement was sent, so that the error can say the others were applied.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from . import statement as stmt
from . import writes
from .errors import (
    DUPLICATE_CODES,
    Error,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    batch_error_class,
)
from .values import deserialize

if TYPE_CHECKING:
    from .connection import Connection

log = logging.getLogger("sa_dynamo.dbapi")

BATCH_SIZE = 25
_RETRYABLE_BATCH_CODES = frozenset(
    {"ProvisionedThroughputExceeded", "ThrottlingError", "RequestLimitExceeded", "InternalServerError"}
)
_BATCH_ATTEMPTS = 8


def total_rowcount(counts: list[int]) -> int:
    """The rowcount of several statements: -1 (unknown) if any statement's count is unknown."""
    return -1 if any(c < 0 for c in counts) else sum(counts)


def execute(connection: Connection, kind: str, bodies: list[dict[str, Any]]) -> tuple[int, Error | None]:
    """Send INSERT/UPDATE/DELETE requests in batches of 25; their rowcount, and the error to
    raise when some failed (the others were applied)."""
    counts: list[int] = []
    failures: list[tuple[int, str, str]] = []
    # Every chunk is sent even after a failure, so that the error can say truthfully that
    # all the other statements were applied.
    for start in range(0, len(bodies), BATCH_SIZE):
        counted, failed = _batch(connection, kind, bodies[start : start + BATCH_SIZE], start)
        counts += counted
        failures += failed
    return total_rowcount(counts), _batch_error(failures, len(bodies)) if failures else None


def put(connection: Connection, operation: str, bodies: list[dict[str, Any]]) -> int:
    """``PUT INTO "t" VALUE {...}``, this driver's overwrite write (PartiQL has none): the items
    go out at once with BatchWriteItem, 25 per call, unprocessed ones resent with backoff.
    Returns the number of items written."""
    if not connection.autocommit:
        raise NotSupportedError(
            "PUT (upsert) writes at once with BatchWriteItem and cannot join a transaction: "
            "run it on an AUTOCOMMIT connection"
        )
    puts = []
    for body in bodies:
        write = connection._parse(operation, body)
        if write is None:
            raise ProgrammingError("PUT takes the form PUT INTO \"table\" VALUE {'attribute': ?, ...}")
        puts.append((write.table, {"PutRequest": {"Item": write.values}}))
    for start in range(0, len(puts), BATCH_SIZE):
        pending: dict[str, list] = {}
        for table, request in puts[start : start + BATCH_SIZE]:
            pending.setdefault(table, []).append(request)
        _, pending = _until_processed(connection, "batch_write_item", pending, "UnprocessedItems")
        if pending:
            raise OperationalError(
                f"{sum(map(len, pending.values()))} items stayed unprocessed after {_BATCH_ATTEMPTS} "
                "attempts and were not written; retry later or raise the table's capacity"
            )
    return len(puts)


def _batch(
    connection: Connection, kind: str, bodies: list[dict[str, Any]], offset: int
) -> tuple[list[int], list[tuple[int, str, str]]]:
    """Send one chunk, retrying throttled statements; the rowcounts of the statements that
    succeeded and (row, code, message) for each that failed. An INSERT that reports a
    duplicate key after a resend succeeded if its item is stored as sent (_stored_as_sent)."""
    pending = list(range(len(bodies)))
    counts: list[int] = []
    failures: list[tuple[int, str, str]] = []
    for attempt in range(_BATCH_ATTEMPTS):
        if attempt:
            _pause(attempt)
        response = connection._call("batch_execute_statement", {"Statements": [bodies[i] for i in pending]})
        # botocore resends a request whose answer was lost (a reset, a 500) and so do we below
        # for statements that failed with an internal error: an unseen attempt may have
        # applied a statement that now reports a duplicate.
        resent = attempt > 0 or response.get("ResponseMetadata", {}).get("RetryAttempts", 0) > 0
        throttled = []
        duplicates: dict[int, str] = {}
        for index, answer in zip(pending, response.get("Responses", []), strict=True):
            if "Error" not in answer:
                counts.append(_batch_rowcount(kind, bodies[index]["Statement"], answer))
                continue
            code, message = answer["Error"].get("Code", ""), answer["Error"].get("Message", "")
            if code == "ConditionalCheckFailed" and kind in ("UPDATE", "DELETE"):
                counts.append(0)  # SQL: the WHERE matched no row
            elif code in _RETRYABLE_BATCH_CODES and attempt + 1 < _BATCH_ATTEMPTS:
                throttled.append(index)
            elif code in DUPLICATE_CODES and kind == "INSERT" and resent:
                duplicates[index] = message
            else:
                failures.append((offset + index, code, message))
        if duplicates:
            written = _stored_as_sent(connection, bodies, list(duplicates))
            counts += [1] * len(written)
            failures += [
                (
                    offset + index,
                    "DuplicateItem",
                    f"{message} (the request was resent after its answer "
                    "was lost, and the stored item differs from this row)",
                )
                for index, message in duplicates.items()
                if index not in written
            ]
        pending = throttled
        if not pending:
            break
    return counts, failures


def _stored_as_sent(connection: Connection, bodies: list[dict[str, Any]], indexes: list[int]) -> set[int]:
    """Those of the INSERTs at ``indexes`` whose item is stored exactly as they write it.

    They reported a duplicate key on a resent request. BatchExecuteStatement takes no
    idempotency token, so only the stored item can tell whether an earlier attempt wrote it:
    if it holds exactly this row's attributes, the INSERT counts as done (an identical item
    written by someone else in that window cannot be told apart, and leaves the same table).
    Anything else stays a duplicate-key error."""
    inserts = {
        i: writes.parse(bodies[i]["Statement"], bodies[i].get("Parameters", []), connection.key_names)
        for i in indexes
    }
    keys: dict[str, list[dict[str, Any]]] = {}
    for write in filter(None, inserts.values()):
        keys.setdefault(write.table, []).append(dict(write.key))
    if not keys:
        return set()
    requests = {table: {"Keys": table_keys, "ConsistentRead": True} for table, table_keys in keys.items()}
    responses, _ = _until_processed(connection, "batch_get_item", requests, "UnprocessedKeys")
    stored = [
        (table, _plain(item))
        for response in responses
        for table, items in response.get("Responses", {}).items()
        for item in items
    ]
    written = {
        i
        for i, write in inserts.items()
        if write is not None and (write.table, _plain(write.values)) in stored
    }
    if written:
        log.info(
            "%d of %d INSERTs that reported a duplicate key after a resend found their item stored "
            "as sent: an earlier attempt wrote them, counted as written",
            len(written),
            len(indexes),
        )
    return written


def _until_processed(
    connection: Connection, method: str, requests: dict[str, Any], leftover: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Call BatchWriteItem or BatchGetItem and resend, with backoff, what DynamoDB returns
    under ``leftover`` (left unprocessed for lack of capacity); the responses and whatever
    was still unprocessed after the last attempt."""
    responses = []
    for attempt in range(_BATCH_ATTEMPTS):
        if attempt:
            _pause(attempt)
        response = connection._call(method, {"RequestItems": requests})
        responses.append(response)
        requests = response.get(leftover) or {}
        if not requests:
            break
    return responses, requests


def _pause(attempt: int) -> None:
    """Back off before resending what DynamoDB throttled or left unprocessed."""
    time.sleep(min(0.05 * 2**attempt, 2.0))


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """An item as Python values, so that equal items compare equal (1.0 = 1, sets unordered)."""
    return {name: deserialize(value) for name, value in item.items()}


def _batch_rowcount(kind: str, operation: str, answer: dict[str, Any]) -> int:
    # A DELETE of a missing item succeeds; only its RETURNING ALL OLD * item tells it deleted one.
    if kind == "DELETE":
        return (1 if "Item" in answer else 0) if stmt.has_returning(operation) else -1
    return 1


def _batch_error(failures: list[tuple[int, str, str]], total: int) -> Error:
    _, code, message = failures[0]
    detail = "; ".join(f"row {i}: {c}: {m}" for i, c, m in failures[:10])
    more = f" (and {len(failures) - 10} more)" if len(failures) > 10 else ""
    cls = batch_error_class(code, message)
    return cls(
        f"{len(failures)} of {total} batched statements failed, the others were applied: {detail}{more}",
        code=code,
    )
