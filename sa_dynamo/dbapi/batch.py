"""AUTOCOMMIT writes: one statement sent at once, ``executemany`` as BatchExecuteStatement and
PUT as BatchWriteItem, 25 statements or items per call, with retries and a report of what
became of every row.

A batch is not atomic: each statement succeeds or fails on its own. Every row has passed
validate.py before the first call, so what fails is what only DynamoDB can judge (a duplicate
key, a failed condition) or a request that never got its answer. Throttled statements and
unprocessed items are resent with backoff. When rows fail, the error raised after the last
batch says which were applied; when a call fails outright (the connection is lost, retries run
out), the error says which rows were applied, which were not sent, and which were in flight and
may or may not have been applied: ``applied``, ``unapplied`` and ``unknown``, row indexes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import capacity, lost_answers
from . import statement as stmt
from .errors import (
    CONDITION_FAILED,
    DUPLICATE_CODES,
    MISSING_TABLE_CODES,
    Error,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    batch_error_class,
    in_row,
    missing_table,
    report_partial,
)
from .limits import BATCH_SIZE, MAX_GET_KEYS
from .transport import Transport
from .values import deserialize_item, key_of
from .writes import Write

if TYPE_CHECKING:
    from .tables import Tables

log = logging.getLogger("sa_dynamo.dbapi")

_RETRYABLE_BATCH_CODES = frozenset(
    {"ProvisionedThroughputExceeded", "ThrottlingError", "RequestLimitExceeded", "InternalServerError"}
)
_BATCH_ATTEMPTS = 8
NOT_OURS = "(the request was resent after its answer was lost, and the stored item differs from this row)"


def write_now(
    transport: Transport, kind: str, body: dict[str, Any], write: Write | None, hidden: bool = False
) -> dict[str, Any] | int:
    """One write of an AUTOCOMMIT connection (``write``: what Tables.checked found it writes),
    sent at once: DynamoDB's answer, or the rowcount an error decides: 0 when an UPDATE's or
    DELETE's condition failed (SQL: the WHERE matched no row), 1 when an attempt whose answer
    was lost wrote what this INSERT writes, or this UPDATE sets (lost_answers.py). Where a lost
    answer leaves the outcome unknown, an OperationalError whose ``outcome_unknown`` is True."""
    try:
        response = transport.send("ExecuteStatement", capacity.asking(body))
    except Error as error:
        if error.code == CONDITION_FAILED and kind in ("UPDATE", "DELETE"):
            if not lost_answers.lost_before(error.response):
                return 0
            if kind == "UPDATE" and write is not None:
                (item,) = stored(transport, [write])
                if lost_answers.holds_what_it_sets(item, write):
                    return 1
            raise lost_answers.resent_and_unmatched(error, kind, write, hidden) from None
        if error.code in DUPLICATE_CODES and write is not None and resent(error.response):
            # An attempt whose answer was lost may have written the item: it is ours if it
            # holds exactly what this INSERT writes (as for a batch, stored_as_sent).
            if stored_as_sent(transport, [write]) == [True]:
                return 1
            error.args = (f"{error.args[0]} {NOT_OURS}",)
        if error.unanswered:
            raise lost_answers.unanswered(error, kind, write, hidden) from None
        raise
    if (
        kind == "DELETE"
        and not response.get("Items")
        and stmt.has_returning(body["Statement"])
        and lost_answers.lost_before(response)
    ):
        raise lost_answers.resent_and_unmatched(None, kind, write, hidden)
    return response


def total_rowcount(counts: list[int]) -> int:
    """The rowcount of several statements: -1 (unknown) if any statement's count is unknown."""
    return -1 if any(c < 0 for c in counts) else sum(counts)


def resent(response: dict[str, Any]) -> bool:
    """Whether botocore sent the request more than once (an earlier attempt may have been applied)."""
    return response.get("ResponseMetadata", {}).get("RetryAttempts", 0) > 0


@dataclass
class Outcome:
    """What became of each row of one executemany: applied (with its rowcount) or refused."""

    rows: int
    counts: dict[int, int] = field(default_factory=dict)
    failures: dict[int, tuple[str, str]] = field(default_factory=dict)  # row -> (code, message)
    # Rows that reported a duplicate after a resend, while their items are read back: an
    # earlier attempt may have applied them, whatever stops the reading.
    resolving: set[int] = field(default_factory=set)
    # Rows answered that nothing shows applied or not: an UPDATE or DELETE that matched nothing
    # when sent again after a lost answer (lost_answers.py), row -> why.
    unknown: dict[int, str] = field(default_factory=dict)

    def cut_off(self, error: Error, chunks: list[list[int]], failed: int) -> Error:
        """The error of a call that failed outright: the rows of earlier calls as answered, the
        rows of this call not yet answered in flight (unknown, unless DynamoDB refused the call:
        then not applied) and the rows of later calls never sent."""
        in_flight = [row for row in chunks[failed] if row not in self.counts and row not in self.failures]
        later = [row for chunk in chunks[failed + 1 :] for row in chunk]
        unknown = [row for row in in_flight if error.unanswered or row in self.resolving]
        unapplied = [*self.failures, *later, *(row for row in in_flight if row not in unknown)]
        error.args = (f"an AUTOCOMMIT executemany of {self.rows} rows stopped: {error.args[0]}",)
        return report_partial(error, list(self.counts), unapplied, [*self.unknown, *unknown])

    def failed(self, missing_table: str) -> Error:
        """The error for rows DynamoDB refused, or whose outcome a lost answer left unknown, all
        other rows having been applied (``missing_table``: what to say when every row names a
        table that does not exist)."""
        if not self.failures:
            unknown = sorted(self.unknown.items())
            detail = "; ".join(f"row {row}: {why}" for row, why in unknown[:10])
            error = OperationalError(
                f"{len(unknown)} of {self.rows} batched statements have an unknown outcome and the "
                f"others were applied: {detail}"
            )
            return report_partial(error, list(self.counts), [], list(self.unknown))
        failures = sorted(self.failures.items())
        _, (code, message) = failures[0]
        detail = "; ".join(f"row {row}: {c}: {m}" for row, (c, m) in failures[:10])
        more = f" (and {len(failures) - 10} more)" if len(failures) > 10 else ""
        if all(c in MISSING_TABLE_CODES for _, (c, _) in failures):
            detail, more = missing_table, ""
        applied = self.rows - len(failures)
        others = (
            "none was applied"
            if not applied
            else f"the other {applied} {'was' if applied == 1 else 'were'} applied (a batch is not a transaction)"
        )
        error = batch_error_class(code, message)(
            f"{len(failures)} of {self.rows} batched statements failed and {others}: {detail}{more}",
            code=code,
        )
        return report_partial(error, list(self.counts), list(self.failures), list(self.unknown))


def chunks_of(writes: list[Write | None]) -> list[list[int]]:
    """Rows in calls of at most 25, a new call wherever a row writes an item the call already
    writes: DynamoDB refuses a call that names one key twice (and DynamoDB Local applies its
    writes before refusing), while one after the other they apply in order."""
    chunks: list[list[int]] = []
    current: list[int] = []
    keys: set[tuple[str, str]] = set()
    for row, write in enumerate(writes):
        identity = write.identity if write is not None else None
        if len(current) == BATCH_SIZE or identity in keys:
            chunks.append(current)
            current, keys = [], set()
        current.append(row)
        if identity is not None:
            keys.add(identity)
    return [*chunks, current] if current else chunks


def execute(
    transport: Transport, kind: str, bodies: list[dict[str, Any]], writes: list[Write | None]
) -> tuple[int, Error | None]:
    """Send INSERT/UPDATE/DELETE requests (``writes``: each one's canonical write, if any) in
    batches; the rowcount of the rows applied, and the error to raise when not all were: it
    says what became of every row."""
    outcome = Outcome(len(bodies))
    chunks = chunks_of(writes)
    error = None
    # Every batch is sent even after a row failed, so that the error can say truthfully that
    # all the other statements were applied.
    for number, chunk in enumerate(chunks):
        try:
            _batch(transport, kind, bodies, writes, chunk, outcome)
        except Error as cut_off:
            error = outcome.cut_off(cut_off, chunks, number)
            break
    if error is None and (outcome.failures or outcome.unknown):
        error = outcome.failed(missing_table(stmt.tables({"Statements": bodies}), transport.where))
    return total_rowcount(list(outcome.counts.values())), error


def _batch(
    transport: Transport,
    kind: str,
    bodies: list[dict[str, Any]],
    writes: list[Write | None],
    rows: list[int],
    outcome: Outcome,
) -> None:
    """Send one call's rows, retrying throttled statements, and record each row's outcome. An
    INSERT that reports a duplicate key after a resend succeeded if its item is stored as sent;
    an UPDATE or DELETE that matches nothing after a lost answer is resolved by lost_answers.py."""
    for again, answers, unseen in _answered(transport, bodies, rows):
        duplicates: dict[int, str] = {}
        unmatched: list[int] = []
        for row, answer in answers:
            if "Error" not in answer:
                count = _batch_rowcount(kind, bodies[row]["Statement"], answer)
                if count == 0 and row in unseen:  # a DELETE ... RETURNING found no item
                    unmatched.append(row)
                else:
                    outcome.counts[row] = count
                continue
            code, message = answer["Error"].get("Code", ""), answer["Error"].get("Message", "")
            if code == "ConditionalCheckFailed" and kind in ("UPDATE", "DELETE"):
                if row in unseen:
                    unmatched.append(row)
                else:
                    outcome.counts[row] = 0  # SQL: the WHERE matched no row
            elif code in DUPLICATE_CODES and kind == "INSERT" and again and writes[row] is not None:
                duplicates[row] = message
            else:
                outcome.failures[row] = (code, message)
        outcome.resolving = {*duplicates, *unmatched}
        if duplicates:
            ours = stored_as_sent(transport, [writes[row] for row in duplicates])
            for (row, message), written in zip(duplicates.items(), ours, strict=True):
                if written:
                    outcome.counts[row] = 1
                else:
                    outcome.failures[row] = ("DuplicateItem", f"{message} {NOT_OURS}")
        if unmatched:
            _resolve_unmatched(transport, kind, writes, unmatched, outcome)
        outcome.resolving = set()


def _resolve_unmatched(
    transport: Transport, kind: str, writes: list[Write | None], rows: list[int], outcome: Outcome
) -> None:
    """Rows that matched nothing when sent again after a lost answer: an UPDATE whose item
    holds what it sets counts 1, any other is of unknown outcome."""
    checked = [row for row in rows if kind == "UPDATE" and writes[row] is not None]
    items = dict(zip(checked, stored(transport, [writes[row] for row in checked]), strict=True))
    for row in rows:
        write = writes[row]
        if row in items and write is not None and lost_answers.holds_what_it_sets(items[row], write):
            outcome.counts[row] = 1
        else:
            outcome.unknown[row] = lost_answers.unmatched_after_resend(kind)


def _answered(
    transport: Transport, bodies: list[dict[str, Any]], rows: list[int]
) -> Iterator[tuple[bool, list[tuple[int, dict[str, Any]]], set[int]]]:
    """Send the statements of ``rows`` in one BatchExecuteStatement and yield, per attempt,
    whether it may repeat an earlier one, each row's answer, and the rows that were in a request
    whose answer was lost (DynamoDB may have applied them unseen); throttled statements are
    resent with backoff and answered by a later attempt (the last one answers them all)."""
    pending = rows
    unseen: set[int] = set()
    for attempt in range(_BATCH_ATTEMPTS):
        if attempt:
            _pause(transport, attempt)
        response = transport.send(
            "BatchExecuteStatement", capacity.asking({"Statements": [bodies[i] for i in pending]})
        )
        # botocore resends a request whose answer was lost (a reset, a 500) and so do we for
        # throttled statements: an unseen attempt may have applied a statement.
        again = attempt > 0 or resent(response)
        if lost_answers.lost_before(response):
            unseen.update(pending)
        answers, throttled = [], []
        for row, answer in zip(pending, response.get("Responses", []), strict=True):
            code = answer.get("Error", {}).get("Code")
            if code in _RETRYABLE_BATCH_CODES and attempt + 1 < _BATCH_ATTEMPTS:
                throttled.append(row)
            else:
                answers.append((row, answer))
        yield again, answers, unseen
        pending = throttled
        if not pending:
            return


def read(
    transport: Transport, statement: str, parameters: list[Any], consistent: bool
) -> tuple[list[dict[str, Any]], int]:
    """The single-item SELECT ``statement`` (a table's whole key, ``"k" = ?`` each) for every
    key ``parameters`` lists (flattened, in the WHERE's order), sent as BatchGetItem, 100 keys a
    request, what DynamoDB leaves unprocessed resent: the items found, in the order of their
    keys, and the number of calls made. BatchGetItem takes four times the keys of a
    BatchExecuteStatement of SELECTs, and DynamoDB Local answered it several times sooner."""
    found, names = stmt.source(statement), stmt.equalities(statement)
    if found is None or found[1] is not None or not names:
        raise ProgrammingError('a batch of key reads takes SELECT ... FROM "table" WHERE "key" = ? AND ...')
    table, width = found[0], len(names)
    keys: dict[tuple, dict[str, Any]] = {}  # each key once: BatchGetItem refuses a key named twice
    for start in range(0, len(parameters), width):
        key = dict(zip(names, parameters[start : start + width], strict=True))
        keys.setdefault(key_of(key, names), key)
    request: dict[str, Any] = {"ConsistentRead": True} if consistent else {}
    projected = stmt.projection(statement)
    if projected is not None:  # the key too, to put the items in the keys' order
        aliases = {f"#a{i}": name for i, name in enumerate(dict.fromkeys([*projected, *names]))}
        request |= {"ProjectionExpression": ", ".join(aliases), "ExpressionAttributeNames": aliases}
    log.info("BatchGetItem of %d keys of %r for: %s", len(keys), table, statement)
    got, calls = _got(transport, {table: list(keys.values())}, request)
    items = [item for _, item in got]
    order = {identity: n for n, identity in enumerate(keys)}
    return sorted(items, key=lambda item: order[key_of(item, names)]), calls


def stored_as_sent(transport: Transport, writes: list[Write]) -> list[bool]:
    """For INSERTs that reported a duplicate key on a resent request: whether each one's item is
    stored exactly as it writes it.

    Without an idempotency token (BatchExecuteStatement and ExecuteStatement take none) only
    the stored item can tell whether an earlier attempt wrote it: if it holds exactly this row's
    attributes, the INSERT counts as done (an identical item written by someone else in that
    window cannot be told apart, and leaves the same table). Anything else stays a duplicate."""
    written = [
        item == deserialize_item(write.values)
        for item, write in zip(stored(transport, writes), writes, strict=True)
    ]
    if any(written):
        log.info(
            "%d of %d INSERTs that reported a duplicate key after a resend found their item stored "
            "as sent: an earlier attempt wrote them, counted as written",
            sum(written),
            len(writes),
        )
    return written


def stored(transport: Transport, writes: list[Write]) -> list[dict[str, Any] | None]:
    """The item of each write as stored now (Python values; None where there is none), read
    strongly consistently."""
    keys: dict[str, list[dict[str, Any]]] = {}
    for write in writes:
        keys.setdefault(write.table, []).append(dict(write.key))
    found: dict[tuple[str, tuple], dict[str, Any]] = {}
    for table, items in read_tables(transport, keys).items():
        names = list(keys[table][0])
        for item in items:
            found[table, key_of(item, names)] = deserialize_item(item)
    return [found.get((write.table, key_of(dict(write.key), [n for n, _ in write.key]))) for write in writes]


def read_items(transport: Transport, table: str, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items stored under ``keys`` (AttributeValues; missing ones are left out), read strongly
    consistently with BatchGetItem, 100 keys per call, what DynamoDB leaves unprocessed resent."""
    return read_tables(transport, {table: keys})[table]


def read_tables(
    transport: Transport, keys: dict[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """``read_items`` of several tables at once: one BatchGetItem carries up to 100 keys of any
    of them. The items found, by table."""
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in keys}
    for table, items in _got(transport, keys, {"ConsistentRead": True})[0]:
        found[table].append(items)
    return found


def _got(
    transport: Transport, keys: dict[str, list[dict[str, Any]]], request: dict[str, Any]
) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """BatchGetItem of ``keys`` (each once), by table, 100 a call, ``request`` the rest of each
    table's request: (table, item) of the items found, in DynamoDB's order, and the calls made."""
    flat = [(table, key) for table, table_keys in keys.items() for key in table_keys]
    items: list[tuple[str, dict[str, Any]]] = []
    calls = 0
    for start in range(0, len(flat), MAX_GET_KEYS):
        requests: dict[str, Any] = {}
        for table, key in flat[start : start + MAX_GET_KEYS]:
            requests.setdefault(table, {"Keys": [], **request})["Keys"].append(key)
        responses, leftover = until_processed(transport, "BatchGetItem", requests, "UnprocessedKeys")
        if leftover:
            table, unread = next(iter(leftover.items()))
            raise OperationalError(
                f"DynamoDB left {len(unread['Keys'])} keys of {table!r} unread after "
                f"{_BATCH_ATTEMPTS} attempts; retry later or raise the table's read capacity"
            )
        calls += len(responses)
        items += [
            (table, item)
            for response in responses
            for table, got in response.get("Responses", {}).items()
            for item in got
        ]
    return items, calls


def put(transport: Transport, tables: Tables, bodies: list[dict[str, Any]]) -> int:
    """``PUT INTO "t" VALUE {...}``, this driver's overwrite write (PartiQL has none): every item
    is checked, then they go out with BatchWriteItem, 25 per call, unprocessed ones resent with
    backoff. Returns the number of items written; a failure says what became of every row."""
    writes = []
    for row, body in enumerate(bodies):
        with in_row(row, len(bodies)):
            writes.append(tables.checked(body["Statement"], body))
    if None in writes:
        raise ProgrammingError("PUT takes the form PUT INTO \"table\" VALUE {'attribute': ?, ...}")
    for write in writes:
        if write is not None and tables.unique(write.table):
            raise NotSupportedError(
                f"PUT overwrites an item of {write.table!r}, whose unique constraints are kept by guard "
                "items that only a transaction can move: INSERT the row, or UPDATE the one stored"
            )
    outcome = Outcome(len(bodies))
    chunks = chunks_of(writes)
    for number, chunk in enumerate(chunks):
        try:
            _put(transport, tables, [writes[row] for row in chunk], chunk, outcome)
        except Error as error:
            raise outcome.cut_off(error, chunks, number) from None
    if outcome.failures:
        error = OperationalError(
            f"{len(outcome.failures)} items stayed unprocessed after {_BATCH_ATTEMPTS} attempts and "
            "were not written; retry them later or raise the table's capacity"
        )
        raise report_partial(error, list(outcome.counts), list(outcome.failures), [])
    return len(bodies)


def _put(
    transport: Transport, tables: Tables, writes: list[Write], rows: list[int], outcome: Outcome
) -> None:
    requests: dict[str, list] = {}
    for write in writes:
        requests.setdefault(write.table, []).append({"PutRequest": {"Item": write.values}})
    _, leftover = until_processed(transport, "BatchWriteItem", requests, "UnprocessedItems")
    unprocessed = {
        (table, repr(_key_of(request["PutRequest"]["Item"], tables.key_names(table))))
        for table, table_requests in leftover.items()
        for request in table_requests
    }
    for row, write in zip(rows, writes, strict=True):
        if unprocessed and write.identity in unprocessed:
            outcome.failures[row] = ("UnprocessedItems", "unprocessed")
        else:
            outcome.counts[row] = 1


def _key_of(item: dict[str, Any], names: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    return tuple((name, item[name]) for name in names)


def until_processed(
    transport: Transport, operation: str, requests: dict[str, Any], leftover: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Call BatchWriteItem or BatchGetItem and resend, with backoff, what DynamoDB returns
    under ``leftover`` (left unprocessed for lack of capacity); the responses and whatever
    was still unprocessed after the last attempt."""
    responses = []
    for attempt in range(_BATCH_ATTEMPTS):
        if attempt:
            _pause(transport, attempt)
        response = transport.send(operation, capacity.asking({"RequestItems": requests}))
        responses.append(response)
        requests = response.get(leftover) or {}
        if not requests:
            break
    return responses, requests


def _pause(transport: Transport, attempt: int) -> None:
    """Back off before resending what DynamoDB throttled or left unprocessed."""
    transport.pause(min(0.05 * 2**attempt, 2.0))


def _batch_rowcount(kind: str, operation: str, answer: dict[str, Any]) -> int:
    # A DELETE of a missing item succeeds; only its RETURNING ALL OLD * item tells it deleted one.
    if kind == "DELETE":
        return (1 if "Item" in answer else 0) if stmt.has_returning(operation) else -1
    return 1
