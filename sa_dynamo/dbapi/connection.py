"""PEP 249 Connection: a boto3 client plus a buffer of writes that COMMIT sends atomically.

Outside autocommit, INSERT/UPDATE/DELETE are held until ``commit()``, which sends them as one
ExecuteTransaction with a fresh ClientRequestToken (botocore's retries reuse it, so a commit
whose answer was lost is applied once); ``rollback()`` discards them. Reads run at once and see
committed data only. In autocommit every statement is sent when executed.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from . import control_plane, values, writes
from . import statement as stmt
from .cursor import Cursor
from .errors import Error, InterfaceError, NotSupportedError, ProgrammingError, translate
from .validate import check_write

log = logging.getLogger("sa_dynamo.dbapi")

MAX_TRANSACTION_ACTIONS = 100


class Connection:
    """A DBAPI connection over one boto3 DynamoDB client."""

    def __init__(self, client: Any, autocommit: bool = False, chunked_commit: bool = False):
        self.client = client
        self.autocommit = autocommit
        # More than 100 writes are committed as several transactions, each atomic on its own.
        self.chunked_commit = chunked_commit
        self.closed = False
        self._keys: dict[str, tuple[str, ...]] = {}
        self._discard()
        values.register_wire_items(client)

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
        actions = self._pending
        pending = [p.render() if isinstance(p, writes.Write) else p for p in actions]
        self._discard()
        if len(pending) > MAX_TRANSACTION_ACTIONS and not self.chunked_commit:
            raise ProgrammingError(
                f"this transaction holds {len(pending)} writes; DynamoDB commits at most "
                f"{MAX_TRANSACTION_ACTIONS} atomically. Nothing was written: commit in smaller "
                "transactions, opt into non-atomic chunks (dynamodb_chunked_commit=True), or use "
                "AUTOCOMMIT for bulk writes"
            )
        for start in range(0, len(pending), MAX_TRANSACTION_ACTIONS):
            end = start + MAX_TRANSACTION_ACTIONS
            self._commit_atomically(pending[start:end], actions[start:end])

    def _commit_atomically(self, statements: list[dict[str, Any]], actions: list[Any]) -> None:
        # One token per attempt at this commit: botocore's retries resend it, so a commit whose
        # answer was lost is applied once.
        token = uuid.uuid4().hex
        try:
            self._call("execute_transaction", {"TransactStatements": statements, "ClientRequestToken": token})
        except Error as error:
            error.statements = statements  # CancellationReasons are indexed like these
            failed = [
                f"{action.kind} of {action.key_text()} in {action.table!r}"
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
        self._pending: list[writes.Write | dict[str, Any]] = []
        self._writes: dict[tuple[str, str], writes.Write] = {}

    def _buffer(
        self, kind: str, operation: str, body: dict[str, Any], matches: Callable[[dict], bool] | None = None
    ) -> int:
        """Hold one write for commit, merged with an earlier write of the same item; return its
        rowcount: what a successful commit guarantees, or what the merge already decided.

        ``matches`` is the WHERE of an UPDATE/DELETE as a test of the item: the item is read
        (consistently) and tested first, so the rowcount is exact at once, and a write whose
        WHERE matches nothing is not held (SQL: zero rows, the transaction goes on)."""
        if kind == "DELETE":
            operation = stmt.without_returning_old(operation)
            body = dict(body, Statement=operation)
        elif stmt.has_returning(operation):
            raise NotSupportedError(
                "RETURNING cannot run inside a DynamoDB transaction: use isolation_level='AUTOCOMMIT' for this statement"
            )
        write = self._parse(operation, body)
        earlier = self._writes.get(write.identity) if write is not None else None
        if earlier is None:
            if matches is not None and write is not None and kind != "INSERT":
                item = self.read_item(write.table, write.key)
                if item is None or not matches(item):
                    return 0
            if write is not None:
                self._writes[write.identity] = write
            self._pending.append(write or body)
            # A failed UPDATE condition cancels the whole commit, so a committed UPDATE matched
            # one item. A DELETE of a missing item commits silently, so without the read its
            # count is unknown.
            return -1 if kind == "DELETE" and matches is None else 1
        merged, rowcount = writes.merge(earlier, write)
        position = next(i for i, pending in enumerate(self._pending) if pending is earlier)
        if merged is None:
            del self._pending[position]
            del self._writes[write.identity]
        else:
            self._pending[position] = self._writes[write.identity] = merged
        return rowcount

    def _parse(self, operation: str, body: dict[str, Any]) -> writes.Write | None:
        """The canonical write a statement performs (checked), or None for other statements."""
        write = writes.parse(operation, body.get("Parameters", []), self.key_names)
        if write is not None:
            check_write(write)
        return write

    def set_key_names(self, table: str, names: tuple[str, ...]) -> None:
        """Tell the connection a table's key attributes (HASH first), sparing it a DescribeTable."""
        self._keys[table] = tuple(names)

    def key_names(self, table: str) -> tuple[str, ...]:
        """The table's key attributes, HASH first (DescribeTable, once per table)."""
        if table not in self._keys:
            self._keys[table] = control_plane.table_key_names(self, table)
        return self._keys[table]

    def read_item(self, table: str, key: tuple[tuple[str, dict], ...]) -> dict[str, Any] | None:
        """The item as committed, read strongly consistently (one GetItem), or None."""
        where = " AND ".join(f"{writes.quote(name)} = ?" for name, _ in key)
        statement = f"SELECT * FROM {writes.quote(table)} WHERE {where}"
        log.info("%s -- read to count the rows of a write in this transaction", statement)
        body = {"Statement": statement, "Parameters": [value for _, value in key], "ConsistentRead": True}
        items = self._call("execute_statement", body).get("Items", [])
        return {name: values.deserialize(value) for name, value in items[0].items()} if items else None

    def _read(self, body: dict[str, Any]) -> dict[str, Any]:
        """One ExecuteStatement page of a SELECT. When the response carries ``values.WIRE_ITEMS``,
        its Items are DynamoDB's JSON (binary values as base64 text): read them with
        ``values.deserialize_wire``, else with ``values.deserialize``."""
        with values.wire_items():
            return self._call("execute_statement", body)

    def _call(self, method: str, body: dict[str, Any], translate_errors: bool = True) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return getattr(self.client, method)(**body)
        except Exception as exc:
            if not translate_errors:
                raise
            raise translate(exc) from exc
        finally:
            log.debug("%s took %.1f ms", method, (time.perf_counter() - started) * 1000)
