"""PEP 249 Cursor over ExecuteStatement / BatchExecuteStatement.

Rows are read lazily: one request per page, the next page only when the caller has consumed
the previous one. DynamoDB's ``Limit`` counts items evaluated, not rows returned, so the
number of rows is bounded by ``max_rows`` on the client instead.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from . import statement as stmt
from . import writes
from .errors import (
    CONDITION_FAILED,
    DUPLICATE_CODES,
    DataError,
    Error,
    InterfaceError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    batch_error_class,
    translate,
)
from .types import deserialize, deserialize_wire, serialize

if TYPE_CHECKING:
    from .connection import Connection

# Marks a response whose Items are DynamoDB's JSON, read before botocore's parser (Connection._read).
WIRE_ITEMS = "sa_dynamo:wire_items"

log = logging.getLogger("sa_dynamo.dbapi")

BATCH_SIZE = 25
_RETRYABLE_BATCH_CODES = frozenset(
    {"ProvisionedThroughputExceeded", "ThrottlingError", "RequestLimitExceeded", "InternalServerError"}
)
_BATCH_ATTEMPTS = 8


def check_statement_size(operation: str) -> None:
    if len(operation) * 4 <= stmt.MAX_STATEMENT_BYTES:
        return  # no character takes more than 4 bytes in UTF-8
    size = len(operation.encode("utf-8"))
    if size > stmt.MAX_STATEMENT_BYTES:
        raise ProgrammingError(
            f"statement is {size} bytes; DynamoDB accepts at most {stmt.MAX_STATEMENT_BYTES}: "
            "split the work into smaller statements (fewer IN values or conditions)"
        )


def request(operation: str, parameters: Sequence[Any] | None) -> dict[str, Any]:
    """The ExecuteStatement-shaped request for one statement (Parameters omitted when empty)."""
    check_statement_size(operation)
    body: dict[str, Any] = {"Statement": operation}
    if parameters:
        body["Parameters"] = [serialize(p) for p in parameters]
    return body


# The driver reads a statement's kind and projection from its text. SQLAlchemy sends the same
# text again and again (its statement cache), so each text is read once.
_kind = functools.lru_cache(maxsize=1024)(stmt.kind)


@functools.lru_cache(maxsize=1024)
def _projection(operation: str) -> tuple[str, ...] | None:
    names = stmt.projection(operation)
    return None if names is None else tuple(names)


_covering = functools.lru_cache(maxsize=1024)(stmt.covering)


def _at(item: dict[str, Any], path: tuple[stmt.Step, ...]) -> Any:
    """The AttributeValue at ``path`` in an item, or None where the path leads nowhere."""
    value = item.get(path[0])
    for step in path[1:]:
        if value is None:
            return None
        if isinstance(step, int):
            elements = value.get("L")
            value = elements[step] if elements is not None and step < len(elements) else None
        else:
            value = (value.get("M") or {}).get(step)
    return value


@functools.lru_cache(maxsize=1024)
def _description(names: tuple[str, ...]) -> tuple[tuple, ...]:
    return tuple((name, None, None, None, None, None, None) for name in names)


class Discriminator(NamedTuple):
    """What to do with items whose discriminator names no known kind (written by someone else).

    ``policy`` is "skip" (drop them, counted in ``Cursor.skipped`` and the log), "raise" (a
    DataError naming the value) or "base" (present them as ``base``, the loading class's kind).
    """

    attribute: str
    known: frozenset[str]
    policy: str
    base: str

    def sort_out(self, items: list[dict[str, Any]], cursor: Cursor) -> list[dict[str, Any]]:
        kept = []
        for item in items:
            value = item.get(self.attribute, {}).get("S")
            if value is None or value in self.known:
                kept.append(item)
            elif self.policy == "raise":
                raise DataError(
                    f"an item has {self.attribute} = {value!r}, which no mapped class uses (known: "
                    f"{', '.join(sorted(self.known))}); map a class for it, or load with "
                    "dynamodb_unknown_type='skip' or 'base'"
                )
            elif self.policy == "base":
                kept.append({**item, self.attribute: {"S": self.base}})
            else:
                cursor.skipped += 1
                log.info("skipped an item with unknown %s = %r", self.attribute, value)
        return kept


class Cursor:
    """PEP 249 cursor. Extensions: ``page_size`` (items DynamoDB evaluates per request),
    ``consistent_read``, ``max_rows`` (stop reading after that many rows), ``count_only`` (a
    RETURNING write sets rowcount but yields no rows), ``count`` ("rows"/"values": a SELECT
    yields one row, the COUNT), ``discriminator`` (see Discriminator), ``page_rows`` with
    ``start_token`` (read exactly one page of rows; ``resume_token`` continues after it),
    ``describe()`` (a dry run) and ``pages`` / ``skipped`` (requests made, items dropped).

    ``description`` is fixed when ``execute`` returns. A projection names the columns; for
    ``SELECT *`` they are the attributes of the first non-empty page, so an attribute that only
    later items carry is not in the rows: project the columns you need.
    """

    arraysize = 1

    def __init__(self, connection: Connection):
        self.connection = connection
        self.description: list[tuple] | None = None
        self.rowcount = -1
        self.lastrowid = None
        self.page_size: int | None = None
        self.consistent_read = False
        self.max_rows: int | None = None
        self.count_only = False
        self.discriminator: Discriminator | None = None
        self.count: str | None = None
        self.hidden_columns = 0  # trailing projected attributes that are read but not returned
        self.page_rows: int | None = None
        self.start_token: str | None = None
        self.resume_token: str | None = None  # survives close(): read after the rows are consumed
        self.pages = 0
        self.skipped = 0
        self._closed = False
        self._reset()

    # -- PEP 249 -------------------------------------------------------------------------

    def close(self) -> None:
        # rowcount outlives close(): SQLAlchemy may read it after closing an executemany cursor.
        rowcount = self.rowcount
        self._reset()
        self.rowcount = rowcount
        self._closed = True

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass

    def execute(self, operation: str, parameters: Sequence[Any] | None = None) -> Cursor:
        self._check_open()
        self._reset()
        body = request(operation, parameters)
        kind = _kind(operation)
        if kind == "SELECT":
            self._start_select(operation, body)
        elif kind in ("INSERT", "UPDATE", "DELETE"):
            if self.connection.autocommit:
                self._write_now(kind, operation, body)
            else:
                self.rowcount = self.connection._buffer(kind, operation, body)
        elif kind == "PUT":
            self._put(operation, [body])
        else:
            raise ProgrammingError(
                f"cannot run a {kind or 'blank'} statement: use SELECT, INSERT, UPDATE, DELETE or PUT"
            )
        return self

    def _put(self, operation: str, bodies: list[dict[str, Any]]) -> None:
        """``PUT INTO "t" VALUE {...}``, this driver's overwrite write (PartiQL has none): the items
        go out at once with BatchWriteItem, 25 per call, unprocessed ones resent with backoff."""
        if not self.connection.autocommit:
            raise NotSupportedError(
                "PUT (upsert) writes at once with BatchWriteItem and cannot join a transaction: "
                "run it on an AUTOCOMMIT connection"
            )
        puts = []
        for body in bodies:
            write = self.connection._parse(operation, body)
            if write is None:
                raise ProgrammingError("PUT takes the form PUT INTO \"table\" VALUE {'attribute': ?, ...}")
            puts.append((write.table, {"PutRequest": {"Item": write.values}}))
        for start in range(0, len(puts), BATCH_SIZE):
            pending: dict[str, list] = {}
            for table, put in puts[start : start + BATCH_SIZE]:
                pending.setdefault(table, []).append(put)
            _, pending = self._until_processed("batch_write_item", pending, "UnprocessedItems")
            if pending:
                raise OperationalError(
                    f"{sum(map(len, pending.values()))} items stayed unprocessed after {_BATCH_ATTEMPTS} "
                    "attempts and were not written; retry later or raise the table's capacity"
                )
        self.rowcount = len(puts)

    def describe(self, operation: str) -> Cursor:
        """Set ``description`` as ``execute`` would, with no rows, sending nothing (for a dry run
        such as ``sa_dynamo.explain``). ``SELECT *`` describes no columns."""
        self._check_open()
        self._reset()
        if _kind(operation) == "SELECT":
            self._set_result(_projection(operation) or (), [])
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Sequence[Any]]) -> Cursor:
        self._check_open()
        self._reset()
        kind = _kind(operation)
        if kind not in ("INSERT", "UPDATE", "DELETE", "PUT"):
            raise NotSupportedError(
                "executemany runs INSERT, UPDATE, DELETE or PUT; run a SELECT with execute()"
            )
        # Every row is serialized before anything is sent or buffered: a bad value writes nothing.
        bodies = [request(operation, params) for params in seq_of_parameters]
        if kind == "PUT":
            self._put(operation, bodies)
            return self
        if not self.connection.autocommit:
            self.rowcount = _total([self.connection._buffer(kind, operation, body) for body in bodies])
            return self
        counts: list[int] = []
        failures: list[tuple[int, str, str]] = []
        # Every chunk is sent even after a failure, so that the error can say truthfully that
        # all the other statements were applied.
        for start in range(0, len(bodies), BATCH_SIZE):
            counted, failed = self._batch(kind, bodies[start : start + BATCH_SIZE], start)
            counts += counted
            failures += failed
        self.rowcount = _total(counts)
        if failures:
            raise _batch_error(failures, len(bodies))
        return self

    def fetchone(self) -> tuple | None:
        self._check_open()
        if not self._fill():
            return None
        self._delivered += 1
        return self._rows.popleft()

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        size = self.arraysize if size is None else size
        self._check_open()
        out: list[tuple] = []
        while len(out) < size and self._fill():
            out += self._take(size - len(out))
        return out

    def fetchall(self) -> list[tuple]:
        self._check_open()
        out: list[tuple] = []
        while self._fill():
            out += self._take(len(self._rows))
        return out

    def __iter__(self) -> Iterator[tuple]:
        while True:
            row = self.fetchone()
            if row is None:
                return
            yield row

    # -- reading -------------------------------------------------------------------------

    def _take(self, size: int) -> list[tuple]:
        """Up to ``size`` of the rows ready (``_fill()`` said there are some), within max_rows."""
        rows = self._rows
        if self.max_rows is not None:
            size = min(size, self.max_rows - self._delivered)
        if size >= len(rows):
            taken = list(rows)
            rows.clear()
        else:
            taken = [rows.popleft() for _ in range(size)]
        self._delivered += len(taken)
        return taken

    def _reset(self) -> None:
        self.description = None
        self.rowcount = -1
        self.pages = 0
        self.skipped = 0
        self._items_read = 0
        self._capacity = 0.0
        self._started = time.perf_counter()
        self._rows: deque[tuple] = deque()
        self._names: Sequence[str] = ()
        self._request: dict[str, Any] | None = None  # set while more pages may follow
        self._next_token: str | None = None
        self._delivered = 0
        self._paths: list[tuple[stmt.Step, ...]] | None = None  # set for a covered projection
        self._wire = False  # whether the items last read are DynamoDB's JSON (see Connection._read)

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("cursor is closed")
        if self.connection.closed:
            raise InterfaceError("connection is closed")

    def _start_select(self, operation: str, body: dict[str, Any]) -> None:
        if self.page_size is not None:
            body["Limit"] = int(self.page_size)
        if self.consistent_read:
            body["ConsistentRead"] = True
        names = _projection(operation)
        covered = _covering(operation)
        if covered is not None:  # paths DynamoDB refuses side by side: read from their attributes
            body["Statement"], self._paths = covered[0], covered[1]
            log.info(
                "sent %s: its paths overlap or share a result key, so each is read from its attribute",
                covered[0],
            )
        if names is not None and self.hidden_columns:
            names = names[: -self.hidden_columns]
            self._paths = self._paths and self._paths[: -self.hidden_columns]
        if self.count is not None:
            self._count_items(body, names[0])
            return
        self.resume_token = None
        if self.page_rows is not None:
            self._read_rows_of_one_page(body, names)
            return
        items = self._read_page(body)
        if names is None:
            # SELECT * has no column list: the first non-empty page names the columns. Pages can
            # be empty yet have a successor, so read on until one has items.
            while not items and self._next_token:
                items = self._read_page(body)
            names = _keys_of(items)
        self._set_result(names, items)
        self._request = body if self._next_token else None

    def _read_rows_of_one_page(self, body: dict[str, Any], names: Sequence[str] | None) -> None:
        """``page_rows`` rows, resuming at ``start_token``, and ``resume_token`` to continue right
        after them: each request's Limit is the number of rows still missing, so DynamoDB never
        reads past the last row returned."""
        self._next_token = self.start_token
        self._names = names or ()
        while True:
            missing = self.page_rows - len(self._rows)
            items = self._read_page(dict(body, Limit=min(missing, body.get("Limit", missing))))
            if names is None and items and not self._names:
                self._names = _keys_of(items)
            self._queue(items)
            if len(self._rows) >= self.page_rows or not self._next_token:
                break
        self.resume_token = self._next_token
        self.description = list(_description(tuple(self._names)))
        self._log_read(len(self._rows))

    def _count_items(self, body: dict[str, Any], attribute: str) -> None:
        """COUNT: read every page and yield one row. "rows" counts items; "values" counts items
        whose attribute is present and not NULL (SQL's COUNT(column))."""
        total = 0
        while True:
            items = self._read_page(body)
            if self.count == "rows":
                total += len(items)
            else:
                total += sum(1 for item in items if attribute in item and "NULL" not in item[attribute])
            if not self._next_token:
                break
        self._names = ("count",)
        self.description = list(_description(self._names))
        self._rows.append((total,))
        self._log_read(1)

    def _set_result(self, names: Sequence[str], items: list[dict[str, Any]]) -> None:
        self._names = names
        self.description = list(_description(tuple(names)))
        self._queue(items)

    def _read_page(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if self._next_token:
            body = dict(body, NextToken=self._next_token)
        started = time.perf_counter()
        response = self.connection._read(dict(body, ReturnConsumedCapacity="TOTAL"))
        self.pages += 1
        self._wire = WIRE_ITEMS in response
        items = response.get("Items", [])
        self._next_token = response.get("NextToken")
        self._items_read += len(items)
        self._capacity += response.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0)
        log.debug(
            "ExecuteStatement page %d: %d items, more=%s, %.1f ms",
            self.pages,
            len(items),
            bool(self._next_token),
            (time.perf_counter() - started) * 1000,
        )
        return items

    def _log_read(self, rows: int) -> None:
        """One line per SELECT once it is read: pages, items, rows, capacity, time."""
        log.info(
            "ExecuteStatement read %d pages, %d items, %d rows%s, %.1f capacity units, %.1f ms",
            self.pages,
            self._items_read,
            rows,
            f" ({self.skipped} of unknown kinds skipped)" if self.skipped else "",
            self._capacity,
            (time.perf_counter() - self._started) * 1000,
        )

    def _queue(self, items: list[dict[str, Any]]) -> None:
        if self.discriminator is not None:
            items = self.discriminator.sort_out(items, self)
        names = self._names
        value = deserialize_wire if self._wire else deserialize
        append = self._rows.append
        if self._paths is not None:
            for item in items:
                append(tuple([None if (v := _at(item, p)) is None else value(v) for p in self._paths]))
            return
        for item in items:
            get = item.get  # an item holds no None: botocore and DynamoDB leave absent attributes out
            append(tuple([None if (v := get(n)) is None else value(v) for n in names]))

    def _fill(self) -> bool:
        """Make a row ready, reading pages only as needed; False when the result (or max_rows) is
        exhausted, at which point rowcount becomes the number of rows delivered."""
        if self.description is None:
            raise ProgrammingError("no result set: the last statement returned no rows")
        if self.max_rows is not None and self._delivered >= self.max_rows:
            self._rows.clear()
            self._request = None
        while not self._rows and self._request is not None:
            self._queue(self._read_page(self._request))
            if not self._next_token:
                self._request = None
        if not self._rows:
            if self.rowcount == -1:
                self.rowcount = self._delivered
                self._log_read(self._delivered)
            return False
        return True

    # -- writing -------------------------------------------------------------------------

    def _write_now(self, kind: str, operation: str, body: dict[str, Any]) -> None:
        self.connection._parse(stmt.without_returning_old(operation), body)
        try:
            response = self.connection._call("execute_statement", body, translate_errors=False)
        except Exception as exc:
            error = translate(exc)
            if error.code == CONDITION_FAILED and kind in ("UPDATE", "DELETE"):
                self.rowcount = 0  # SQL: the WHERE matched no row
                return
            raise error from exc
        items = response.get("Items", [])
        if stmt.has_returning(operation):
            self.rowcount = len(items)
            if not self.count_only:
                self._set_result(_keys_of(items), items)
        else:
            # A DELETE of a missing item succeeds too: without RETURNING its count is unknown.
            self.rowcount = 1 if kind != "DELETE" else -1

    def _batch(
        self, kind: str, bodies: list[dict[str, Any]], offset: int
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
            response = self.connection._call(
                "batch_execute_statement", {"Statements": [bodies[i] for i in pending]}
            )
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
                written = self._stored_as_sent(bodies, list(duplicates))
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

    def _stored_as_sent(self, bodies: list[dict[str, Any]], indexes: list[int]) -> set[int]:
        """Those of the INSERTs at ``indexes`` whose item is stored exactly as they write it.

        They reported a duplicate key on a resent request. BatchExecuteStatement takes no
        idempotency token, so only the stored item can tell whether an earlier attempt wrote it:
        if it holds exactly this row's attributes, the INSERT counts as done (an identical item
        written by someone else in that window cannot be told apart, and leaves the same table).
        Anything else stays a duplicate-key error."""
        inserts = {
            i: writes.parse(
                bodies[i]["Statement"], bodies[i].get("Parameters", []), self.connection._key_names
            )
            for i in indexes
        }
        keys: dict[str, list[dict[str, Any]]] = {}
        for write in filter(None, inserts.values()):
            keys.setdefault(write.table, []).append(dict(write.key))
        if not keys:
            return set()
        requests = {table: {"Keys": table_keys, "ConsistentRead": True} for table, table_keys in keys.items()}
        responses, _ = self._until_processed("batch_get_item", requests, "UnprocessedKeys")
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
        self, method: str, requests: dict[str, Any], leftover: str
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Call BatchWriteItem or BatchGetItem and resend, with backoff, what DynamoDB returns
        under ``leftover`` (left unprocessed for lack of capacity); the responses and whatever
        was still unprocessed after the last attempt."""
        responses = []
        for attempt in range(_BATCH_ATTEMPTS):
            if attempt:
                _pause(attempt)
            response = self.connection._call(method, {"RequestItems": requests})
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


def _keys_of(items: list[dict[str, Any]]) -> list[str]:
    """Attribute names of the items, in first-seen order."""
    names: dict[str, None] = {}
    for item in items:
        names.update(dict.fromkeys(item))
    return list(names)


def _total(counts: list[int]) -> int:
    """The rowcount of several statements: -1 (unknown) if any statement's count is unknown."""
    return -1 if any(c < 0 for c in counts) else sum(counts)


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
