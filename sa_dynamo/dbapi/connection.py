"""PEP 249 Connection: a transport to DynamoDB plus a buffer of writes that COMMIT sends atomically.

Outside autocommit, INSERT/UPDATE/DELETE are held until ``commit()`` (buffer.py), which sends
them as one ExecuteTransaction with a fresh ClientRequestToken (retries reuse it, so a commit
whose answer was lost is applied once); ``rollback()`` discards them. Reads run at once and see
the committed items with the transaction's own writes laid over them (overlay.py). In
autocommit every statement is sent when executed. Every write is checked (tables.py,
validate.py) when it is executed, so a commit sends only writes that passed.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

from . import capacity, unique, writes
from .buffer import Buffer, Pending
from .cursor import Cursor
from .errors import DUPLICATE_CODES, Error, InterfaceError, ProgrammingError, report_partial
from .limits import MAX_TRANSACTION_ACTIONS
from .tables import Tables
from .transport import Transport

log = logging.getLogger("sa_dynamo.dbapi")


class Connection:
    """A DBAPI connection over one transport (transport/).

    ``hide_parameters``: no parameter value appears in the driver's messages (SQLAlchemy's
    ``create_engine(hide_parameters=True)`` sets it)."""

    def __init__(
        self,
        transport: Transport,
        autocommit: bool = False,
        chunked_commit: bool = False,
        hide_parameters: bool = False,
    ):
        self.transport = transport
        self.autocommit = autocommit
        # More than 100 writes are committed as several transactions, each atomic on its own.
        self.chunked_commit = chunked_commit
        self.closed = False
        self.tables = Tables(transport, hide_parameters)
        self.buffer = Buffer(transport, self.tables, hide_parameters)
        self._recording: capacity.Consumed | None = None
        # Requests sent outside any record (an autoincrement block reserved while SQLAlchemy
        # prepares an INSERT): counted in the next statement's (``carried_into``).
        self._carried: capacity.Consumed | None = None
        # What the last commit cost (an extension, as ``Cursor.consumed``): its ExecuteTransactions.
        self.consumed = capacity.Consumed()
        transport.observers.append(self._observe)

    def _observe(self, operation: str, body: dict[str, Any], answer: Any) -> None:
        if operation not in capacity.DATA_PLANE:
            return
        if self._recording is None:
            self._carried = self._carried or capacity.Consumed()
            self._carried.add(operation, body, answer)
        else:
            self._recording.add(operation, body, answer)

    def carried_into(self, consumed: capacity.Consumed) -> None:
        """Count in ``consumed`` (a statement's record, as it starts) the requests sent since the
        last record for none: those made to prepare this statement."""
        carried, self._carried = self._carried, None
        if carried is not None:
            consumed.include(carried)

    def recording(self, consumed: capacity.Consumed) -> _Recording:
        """Every data-plane request sent meanwhile is added to ``consumed`` (a cursor's record
        of its statement; a page read later, while fetching, is recorded again this way), and
        the time spent meanwhile to its ``milliseconds``."""
        return _Recording(self, consumed)

    @property
    def hide_parameters(self) -> bool:
        """No parameter value appears in the driver's messages."""
        return self.tables.hide_parameters

    @hide_parameters.setter
    def hide_parameters(self, hidden: bool) -> None:  # SQLAlchemy's engine sets it on connect
        self.tables.hide_parameters = self.buffer.hide_parameters = hidden

    @property
    def client(self) -> Any:
        """The botocore client requests go through (an extension: for botocore's events), with
        ``transport="botocore"``; None on the driver's own HTTP transport."""
        return getattr(self.transport, "client", None)

    def cursor(self) -> Cursor:
        if self.closed:
            raise InterfaceError("connection is closed")
        return Cursor(self)

    @property
    def pending(self) -> int:
        """How many writes wait for ``commit()``."""
        return len(self.buffer)

    def commit(self) -> None:
        if self.closed:
            raise InterfaceError("connection is closed")
        self.consumed = capacity.Consumed()
        with self.recording(self.consumed):  # take() may read the items whose guards move
            held, merged_away = self.buffer.take()
        self.carried_into(self.consumed)
        if held:  # the line of a commit is its ExecuteTransaction's, reads before it included
            self.consumed.operation = "ExecuteTransaction"
        guards = sum(1 for pending in held if isinstance(pending.action, unique.GuardWrite))
        if len(held) > MAX_TRANSACTION_ACTIONS and (guards or not self.chunked_commit):
            counted = f" ({guards} of them guards of unique values)" if guards else ""
            raise ProgrammingError(
                f"this transaction holds {len(held)} writes{counted}; DynamoDB commits at most "
                f"{MAX_TRANSACTION_ACTIONS} atomically. Nothing was written: commit in smaller "
                "transactions"
                + (
                    ", opt into non-atomic chunks (dynamodb_chunked_commit=True), or use "
                    "AUTOCOMMIT for bulk writes"
                    if not guards
                    else " (a row and the guards of its unique values commit together, never in chunks)"
                )
            )
        chunks = [held[i : i + MAX_TRANSACTION_ACTIONS] for i in range(0, len(held), MAX_TRANSACTION_ACTIONS)]
        with self.recording(self.consumed):
            for number, chunk in enumerate(chunks):
                try:
                    self._commit_atomically(chunk)
                except Error as error:
                    if len(chunks) == 1:
                        raise
                    raise self._chunk_failed(error, chunks, number, merged_away) from None
        capacity.report(self.consumed)

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

    def _commit_atomically(self, chunk: list[Pending], refused: str = unique.NOTHING_WRITTEN) -> None:
        """Send ``chunk`` as one ExecuteTransaction (``refused``: what the error of a unique
        value taken already says became of the writes)."""
        actions = [pending.action for pending in chunk]
        statements = [a.render() if isinstance(a, (writes.Write, unique.GuardWrite)) else a for a in actions]
        # One token per attempt at this commit: botocore's retries resend it, so a commit whose
        # answer was lost is applied once.
        token = uuid.uuid4().hex
        try:
            self.transport.send(
                "ExecuteTransaction",
                capacity.asking({"TransactStatements": statements, "ClientRequestToken": token}),
            )
        except Error as error:
            error.statements = statements  # CancellationReasons are indexed like these
            reasons = error.response.get("CancellationReasons") or []
            cancelled = [
                (a, r) for a, r in zip(actions, reasons, strict=False) if r.get("Code") not in (None, "None")
            ]
            # a row's own failure (its key taken, its condition) is told as it is; a guard's alone
            # is the unique constraint's
            if cancelled and all(isinstance(a, unique.GuardWrite) for a, _ in cancelled):
                guard, reason = cancelled[0]
                if guard.kind == "INSERT" and _duplicate(reason):
                    taken = guard.violated(self.hide_parameters, refused)
                    taken.code, taken.response, taken.statements = error.code, error.response, statements
                    raise taken from None
            failed = [
                f"{action.kind} of {action.key_text(self.hide_parameters)} in {action.table!r}"
                for action, _ in cancelled
                if isinstance(action, writes.Write)
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

    def commit_each_row(
        self, kind: str, statements: list[tuple[str, dict[str, Any]]], tests: Any, matched: bool
    ) -> list[int]:
        """One statement's rows (an executemany's) to a table with unique constraints, in
        AUTOCOMMIT: each row committed apart, as one transaction with the guards of its unique
        values; their rowcounts. An UPDATE or DELETE whose condition fails counts 0, as its own
        statement would. Rows after a failed one are not sent, and the error says which were
        applied. The rows of one UPDATE by any WHERE (``matched``) are one SQL statement, which
        SQL refuses whole: their unique values are all checked before the first is sent.
        (all_or_nothing is the other way round: several statements' writes as one.)"""
        if matched and kind == "UPDATE" and len(statements) > 1:
            Buffer(self.transport, self.tables, self.hide_parameters).hold(kind, statements, tests, matched)
        refused = "so this row was not written" if len(statements) > 1 else unique.NOTHING_WRITTEN
        counts: list[int] = []
        for row, statement in enumerate(statements):
            alone = Buffer(self.transport, self.tables, self.hide_parameters, checks_unique=False)
            try:
                (count,) = alone.hold(kind, [statement], tests[row : row + 1] if tests else None, matched)
                held, _ = alone.take()
                if held:
                    self._commit_atomically(held, refused)
            except Error as error:
                if kind in ("UPDATE", "DELETE") and _row_condition_failed(error):
                    count = 0
                elif len(statements) > 1:
                    # A commit none of whose answers arrived may have applied its row.
                    unknown = [row] if error.outcome_unknown else []
                    later = list(range(row + len(unknown), len(statements)))
                    raise report_partial(error, list(range(row)), later, unknown) from None
                else:
                    raise
            counts.append(count)
        return counts

    @contextlib.contextmanager
    def all_or_nothing(self, what: str) -> Iterator[None]:
        """The writes of the statements run in the block, which make one SQL statement
        (``what``: a DELETE with its ON DELETE actions), applied together or not at all: in a
        transaction, let go if the block fails; in AUTOCOMMIT, held and committed as one
        ExecuteTransaction at its end. (commit_each_row is the other way round: one statement's
        rows committed apart.)"""
        if not self.autocommit:
            with self.buffer.undone_on_error():
                yield
            return
        self.autocommit = False
        try:
            yield
            if len(self.buffer) > MAX_TRANSACTION_ACTIONS:
                raise ProgrammingError(
                    f"{what} writes {len(self.buffer)} items; DynamoDB writes at most "
                    f"{MAX_TRANSACTION_ACTIONS} atomically. Nothing was written: delete fewer rows "
                    "at a time"
                )
            self.commit()
        finally:
            self.buffer.discard()
            self.autocommit = True

    def rollback(self) -> None:
        if self.closed:
            raise InterfaceError("connection is closed")
        self.buffer.discard()

    def close(self) -> None:
        self.buffer.discard()
        self.closed = True
        self.transport.close()


def _duplicate(reason: dict[str, Any]) -> bool:
    """A transaction's reason for an INSERT of a key already stored (Local: a ValidationError)."""
    return (
        reason.get("Code") in DUPLICATE_CODES
        or "duplicate primary key" in (reason.get("Message") or "").lower()
    )


def _row_condition_failed(error: Error) -> bool:
    """A single-row transaction cancelled by its row's own condition (the first statement)."""
    reasons = error.response.get("CancellationReasons") or []
    return bool(reasons) and reasons[0].get("Code") == "ConditionalCheckFailed"


class _Recording:
    """``Connection.recording()``'s block; a class, not a generator: it runs in every read."""

    __slots__ = ("_connection", "_consumed", "_outer", "_started")

    def __init__(self, connection: Connection, consumed: capacity.Consumed) -> None:
        self._connection, self._consumed = connection, consumed

    def __enter__(self) -> None:
        self._outer, self._connection._recording = self._connection._recording, self._consumed
        self._started = time.perf_counter()

    def __exit__(self, *exc_info: Any) -> None:
        self._connection._recording = self._outer
        self._consumed.milliseconds += (time.perf_counter() - self._started) * 1000
