"""PEP 249 Connection: a boto3 client plus a buffer of writes that COMMIT sends atomically.

Outside autocommit, INSERT/UPDATE/DELETE are held until ``commit()``, which sends them as one
ExecuteTransaction with a fresh ClientRequestToken (botocore's retries reuse it, so a commit
whose answer was lost is applied once); ``rollback()`` discards them. Reads run at once and see
the committed items with the transaction's own writes laid over them (overlay.py). In
autocommit every statement is sent when executed. Every write is checked (validate.py) when it
is executed, so a commit sends only writes that passed.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import batch, control_plane, overlay, values, wire, writes
from . import statement as stmt
from .cursor import Cursor
from .errors import (
    MISSING_TABLE_CODES,
    Error,
    InterfaceError,
    NotSupportedError,
    ProgrammingError,
    in_row,
    missing_table,
    report_partial,
    translate,
)
from .validate import TableRules, check_write

log = logging.getLogger("sa_dynamo.dbapi")

MAX_TRANSACTION_ACTIONS = 100


@dataclass(frozen=True)
class Pending:
    """A write held for commit, and the transaction's writes it stands for (their positions in
    the order executed: several when writes of one item were merged)."""

    action: writes.Write | dict[str, Any]
    rows: tuple[int, ...]


class Connection:
    """A DBAPI connection over one boto3 DynamoDB client.

    ``hide_parameters``: no parameter value appears in the driver's messages (SQLAlchemy's
    ``create_engine(hide_parameters=True)`` sets it)."""

    def __init__(
        self,
        client: Any,
        autocommit: bool = False,
        chunked_commit: bool = False,
        hide_parameters: bool = False,
        pause: Callable[[float], None] = time.sleep,
        encode_bodies: bool = False,
        first_request: Callable[[], None] | None = None,
    ):
        self.client = client
        # The client does not validate parameters, so that the driver may encode the bodies of
        # its statements and items itself (wire.encoded): only a client connect() made so.
        self.encode_bodies = encode_bodies
        # How the driver waits (a batch's backoff, a table change's polls), supplied by the I/O
        # side like the client: an event loop's driver must not block its loop while it waits.
        self.pause = pause
        # Run before the first request (connect.listening_check), then dropped.
        self._first_request = first_request
        self.autocommit = autocommit
        # More than 100 writes are committed as several transactions, each atomic on its own.
        self.chunked_commit = chunked_commit
        self.hide_parameters = hide_parameters
        self.closed = False
        # Whether the server returns the pages of a read ordered by its sort key descending in
        # that order (DynamoDB does, DynamoDB Local does not): None until a read tells (paging.py).
        self.descending_pages: bool | None = None
        self._tables: dict[str, TableRules] = {}
        self._discard()
        wire.register(client)

    def cursor(self) -> Cursor:
        if self.closed:
            raise InterfaceError("connection is closed")
        return Cursor(self)

    @property
    def pending(self) -> int:
        """How many writes wait for ``commit()``."""
        return len(self._pending)

    def commit(self) -> None:
        if self.closed:
            raise InterfaceError("connection is closed")
        held, merged_away = self._pending, self._merged_away
        self._discard()
        if len(held) > MAX_TRANSACTION_ACTIONS and not self.chunked_commit:
            raise ProgrammingError(
                f"this transaction holds {len(held)} writes; DynamoDB commits at most "
                f"{MAX_TRANSACTION_ACTIONS} atomically. Nothing was written: commit in smaller "
                "transactions, opt into non-atomic chunks (dynamodb_chunked_commit=True), or use "
                "AUTOCOMMIT for bulk writes"
            )
        chunks = [held[i : i + MAX_TRANSACTION_ACTIONS] for i in range(0, len(held), MAX_TRANSACTION_ACTIONS)]
        for number, chunk in enumerate(chunks):
            try:
                self._commit_atomically(chunk)
            except Error as error:
                if len(chunks) == 1:
                    raise
                raise self._chunk_failed(error, chunks, number, merged_away) from error.__cause__

    @staticmethod
    def _chunk_failed(
        error: Error, chunks: list[list[Pending]], failed: int, merged_away: list[int]
    ) -> Error:
        """The error of one chunk of a chunked commit, saying what became of every write: the
        chunks before it are committed, the chunks after it were not sent."""
        rows = [[row for pending in chunk for row in pending.rows] for chunk in chunks]
        done = [row for chunk in rows[:failed] for row in chunk] + merged_away
        later = [row for chunk in rows[failed + 1 :] for row in chunk]
        error.args = (
            f"chunk {failed + 1} of {len(chunks)} of a chunked commit (dynamodb_chunked_commit=True, each "
            f"chunk atomic on its own) failed: {error.args[0]}. Writes are numbered in the order "
            "they were executed in the transaction",
        )
        if error.outcome_unknown:
            return report_partial(error, done, later, rows[failed], noun="write")
        return report_partial(error, done, rows[failed] + later, [], noun="write")

    def _commit_atomically(self, chunk: list[Pending]) -> None:
        actions = [pending.action for pending in chunk]
        statements = [a.render() if isinstance(a, writes.Write) else a for a in actions]
        # One token per attempt at this commit: botocore's retries resend it, so a commit whose
        # answer was lost is applied once.
        token = uuid.uuid4().hex
        try:
            self._call("execute_transaction", {"TransactStatements": statements, "ClientRequestToken": token})
        except Error as error:
            error.statements = statements  # CancellationReasons are indexed like these
            failed = [
                f"{action.kind} of {action.key_text(self.hide_parameters)} in {action.table!r}"
                for action, reason in zip(
                    actions, error.response.get("CancellationReasons") or [], strict=False
                )
                if isinstance(action, writes.Write) and reason.get("Code") not in (None, "None")
            ]
            if failed:
                error.args = (f"{error.args[0]} (failed: {'; '.join(failed)})",)
            elif error.unanswered:
                error.outcome_unknown = True
                error.args = (
                    f"{error.args[0]}. The commit's outcome is unknown: DynamoDB may have applied "
                    f"all {len(statements)} writes or none. Read the items back before writing them "
                    f"again (the commit's ClientRequestToken was {token})",
                )
            raise
        log.debug("ExecuteTransaction committed %d statements (token %s)", len(statements), token)

    def rollback(self) -> None:
        if self.closed:
            raise InterfaceError("connection is closed")
        self._discard()

    def close(self) -> None:
        self._discard()
        self.closed = True

    def _discard(self) -> None:
        self._pending: list[Pending] = []
        self._writes: dict[tuple[str, str], Pending] = {}
        self._merged_away: list[int] = []  # writes that cancelled out (an insert, then its delete)
        self._executed = 0  # writes executed in this transaction
        # items as committed, read in this transaction: (table, key) -> AttributeValues or None
        self._committed: dict[tuple[str, overlay.Key], overlay.Item | None] = {}

    def _buffer(
        self,
        kind: str,
        statements: list[tuple[str, dict[str, Any]]],
        matches: Sequence[Callable[[dict], bool]] | None = None,
    ) -> list[int]:
        """Hold writes for commit, each merged with an earlier write of the same item; their
        rowcounts: what a successful commit guarantees, or what the merge already decided. All
        or none: when one fails its checks, the buffer stays as it was.

        ``matches`` holds each UPDATE/DELETE's WHERE as a test of the item: the items are read
        (consistently, one BatchGetItem for the rows of an executemany) and tested first, so the
        rowcount is exact at once, and a write whose WHERE matches nothing is not held (SQL:
        zero rows, the transaction goes on)."""
        rows = len(statements)
        held = []
        for row, (operation, body) in enumerate(statements):
            with in_row(row, rows):
                held.append(self._held(kind, operation, body))
        tests = matches or [None] * rows
        if rows == 1:
            return [self._hold(kind, *held[0], tests[0])]  # checked: it fails before changing anything
        tested = [
            w
            for (_, w), test in zip(held, tests, strict=True)
            if test and w and w.identity not in self._writes
        ]
        for table in {w.table for w in tested}:
            keys = [w.key for w in tested if w.table == table]
            self._read_committed(table, keys, f"this {kind} tests, to count the rows it matches")
        saved = (list(self._pending), dict(self._writes), list(self._merged_away), self._executed)
        # a failed row leaves the buffer as it was; what was read of the committed items stays true
        counts = []
        try:
            for row, ((body, write), test) in enumerate(zip(held, tests, strict=True)):
                with in_row(row, rows):
                    counts.append(self._hold(kind, body, write, test))
            return counts
        except Exception:
            self._pending, self._writes, self._merged_away, self._executed = saved
            raise

    def _held(
        self, kind: str, operation: str, body: dict[str, Any]
    ) -> tuple[dict[str, Any], writes.Write | None]:
        """The request a write is held as, and its canonical form once checked (see _checked)."""
        if kind == "DELETE":
            operation = stmt.without_returning_old(operation)
            body = dict(body, Statement=operation)
        elif stmt.has_returning(operation):
            raise NotSupportedError(
                "RETURNING cannot run inside a DynamoDB transaction: use isolation_level='AUTOCOMMIT' for this statement"
            )
        return body, self._checked(operation, body)

    def _hold(
        self,
        kind: str,
        body: dict[str, Any],
        write: writes.Write | None,
        matches: Callable[[dict], bool] | None = None,
    ) -> int:
        row = self._executed
        earlier = self._writes.get(write.identity) if write is not None else None
        if matches is not None and write is not None and kind != "INSERT":
            before = earlier.action if earlier is not None else None
            needs_committed = before is None or before.kind == "UPDATE"
            committed = self._committed_item(write.table, write.key) if needs_committed else None
            current = committed if before is None else overlay.image(before, committed)
            if current is None or not matches(values.deserialize_item(current)):
                self._executed += 1
                return 0
            if earlier is not None:  # its WHERE held for the item as this transaction left it
                write = writes.settled(write, earlier.action)
            elif kind == "DELETE":  # an item deleted by someone else meanwhile makes the commit fail
                write = writes.while_present(write)
        if earlier is None:
            held = Pending(write or body, (row,))
            if write is not None:
                self._writes[write.identity] = held
            self._pending.append(held)
            self._executed += 1
            # A failed UPDATE condition cancels the whole commit, so a committed UPDATE matched
            # one item. A DELETE of a missing item commits silently, so without the read its
            # count is unknown.
            return -1 if kind == "DELETE" and matches is None else 1
        if write.kind == "INSERT" and earlier.action.kind == "DELETE":
            # deleted, then inserted anew: one action that leaves the item as the INSERT writes it
            committed = self._committed_item(write.table, write.key)
            merged, rowcount = writes.reinserted(earlier.action, write, committed), 1
        else:
            merged, rowcount = writes.merge(earlier.action, write, self.hide_parameters)
        if merged is None and self._committed_item(write.table, write.key) is not None:
            raise writes.stored_twice(write, self.hide_parameters)
        if merged is not None:  # e.g. an UPDATE that grows an inserted item past 400 KB
            check_write(merged, self.table_rules(merged.table), self.hide_parameters)
        position = next(i for i, pending in enumerate(self._pending) if pending is earlier)
        if merged is None:
            del self._pending[position]
            del self._writes[write.identity]
            self._merged_away += [*earlier.rows, row]
        else:
            self._pending[position] = self._writes[write.identity] = Pending(merged, (*earlier.rows, row))
        self._executed += 1
        return rowcount

    def _checked(self, operation: str, body: dict[str, Any]) -> writes.Write | None:
        """The canonical write a statement performs, checked against every rule of validate.py
        (None for other statements, which DynamoDB alone judges)."""
        write = writes.parse(operation, body.get("Parameters", []), self.key_names)
        if write is not None:
            check_write(write, self.table_rules(write.table), self.hide_parameters)
        return write

    def set_key_names(self, table: str, names: tuple[str, ...]) -> None:
        """Tell the connection a table's key attributes (HASH first), sparing it a DescribeTable."""
        known = self._tables.get(table)
        if known is None or known.key != tuple(names):
            self._tables[table] = TableRules(table, tuple(names))

    def set_table_rules(self, rules: TableRules) -> None:
        """Tell the connection all it should check a table's writes against (see TableRules)."""
        self._tables[rules.table] = rules

    def table_rules(self, table: str, key_types: bool = False) -> TableRules:
        """What the connection checks writes to ``table`` against: DescribeTable's, once per
        table, when nobody told it (or told it the key names only, and ``key_types`` asks for
        the types of the table's and its indexes' keys)."""
        known = self._tables.get(table)
        if known is None or (key_types and not known.key_attributes):
            self._tables[table] = known = control_plane.table_rules(self, table)
        return known

    def read_source(self, table: str, index: str | None) -> overlay.Source:
        """What a SELECT of ``table`` (or of its ``index``) reads, for laying writes over it."""
        rules = self.table_rules(table, key_types=index is not None)
        if index is None:
            return overlay.Source(rules.key, (), rules.key[1] if len(rules.key) > 1 else None)
        if not any(k.index == index for k in rules.key_attributes):  # an index created since
            self._tables[table] = rules = control_plane.table_rules(self, table)
        keys = sorted((k for k in rules.key_attributes if k.index == index), key=lambda k: k.role != "HASH")
        names = tuple(k.name for k in keys)
        return overlay.Source(rules.key, names, names[1] if len(names) > 1 else None)

    def key_names(self, table: str) -> tuple[str, ...]:
        """The table's key attributes, HASH first."""
        return self.table_rules(table).key

    def _committed_item(self, table: str, key: tuple[tuple[str, dict], ...]) -> overlay.Item | None:
        """The item as committed (AttributeValues) or None, read strongly consistently (one
        GetItem) the first time this transaction needs it."""
        known = (table, overlay.key_of(dict(key), (name for name, _ in key)))
        if known not in self._committed:
            where = " AND ".join(f"{writes.quote(name)} = ?" for name, _ in key)
            statement = f"SELECT * FROM {writes.quote(table)} WHERE {where}"
            log.info("%s -- the item as committed, read once for this transaction", statement)
            body = {"Statement": statement, "Parameters": [value for _, value in key], "ConsistentRead": True}
            items = self._call("execute_statement", body).get("Items", [])
            self._committed[known] = items[0] if items else None
        return self._committed[known]

    def _read_committed(self, table: str, keys: list[tuple[tuple[str, dict], ...]], why: str) -> None:
        """Read the items as committed under ``keys`` that this transaction has not read yet,
        strongly consistently, with one BatchGetItem per 100 (``why``: for the log)."""
        names = self.key_names(table)
        unread = {}
        for key in keys:
            known = overlay.key_of(dict(key), names)
            if (table, known) not in self._committed:
                unread[known] = key
        if not unread:
            return
        log.info("BatchGetItem of %d items %s", len(unread), why)
        found = batch.read_items(self, table, [dict(key) for key in unread.values()])
        self._committed.update(((table, k), None) for k in unread)
        self._committed.update(((table, overlay.key_of(item, names)), item) for item in found)

    def written(self, table: str) -> dict[overlay.Key, overlay.Item | None] | None:
        """The items of ``table`` this transaction wrote, by key, as they will be once committed
        (None: deleted); None when it wrote none. The committed items that UPDATEs change are
        read first, strongly consistently, with one BatchGetItem per 100."""
        held = [p.action for p in self._pending if _table_of(p.action) == table]
        if not held:
            return None
        if not all(isinstance(action, writes.Write) for action in held):
            raise NotSupportedError(
                f"this transaction holds a write to {table!r} in a form the driver cannot lay over "
                "its reads, so a read of that table cannot see it: commit before reading, or write "
                "with the canonical INSERT/UPDATE/DELETE forms the dialect emits"
            )
        keyed = {overlay.key_of(dict(w.key), self.key_names(table)): w for w in held}
        updated = [w.key for w in keyed.values() if w.kind == "UPDATE"]
        self._read_committed(table, updated, "this transaction updates, to show its reads their new values")
        return {k: overlay.image(w, self._committed.get((table, k))) for k, w in keyed.items()}

    def _read(self, body: dict[str, Any]) -> dict[str, Any]:
        """One ExecuteStatement page of a SELECT. When the response carries ``wire.WIRE_ITEMS``,
        its Items are DynamoDB's JSON (binary values as base64 text): read them with
        ``values.deserialize_wire``, else with ``values.deserialize``."""
        with wire.wire_items():
            return self._call("execute_statement", body)

    def _call(self, method: str, body: dict[str, Any], translate_errors: bool = True) -> dict[str, Any]:
        if self._first_request is not None:
            check, self._first_request = self._first_request, None
            check()
        started = time.perf_counter()
        try:
            if not self.encode_bodies:
                return getattr(self.client, method)(**body)
            with wire.encoded(self.client, method, body) as params:
                return getattr(self.client, method)(**params)
        except Exception as exc:
            if not translate_errors:
                raise
            raise self.translate(exc, body) from None  # DynamoDB's code and message are in it
        finally:
            log.debug("%s took %.1f ms", method, (time.perf_counter() - started) * 1000)

    @property
    def where(self) -> str:
        """Where the client sends its requests, as a message says it."""
        meta = getattr(self.client, "meta", None)
        return f"in region {meta.region_name} at {meta.endpoint_url}" if meta is not None else "in DynamoDB"

    def translate(self, exc: Exception, body: dict[str, Any]) -> Error:
        """The PEP 249 error for what a request to DynamoDB raised, naming the tables it is about."""
        error = translate(exc)
        tables = stmt.tables(body)
        if error.code in MISSING_TABLE_CODES and tables:
            error.args = (missing_table(tables, self.where),)
        return error


def _table_of(action: writes.Write | dict[str, Any]) -> str | None:
    if isinstance(action, writes.Write):
        return action.table
    found = stmt.source(action["Statement"])
    return found[0] if found else None
