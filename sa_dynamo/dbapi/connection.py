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
from typing import Any

from . import statement as stmt
from .cursor import Cursor
from .errors import InterfaceError, NotSupportedError, ProgrammingError, translate

log = logging.getLogger("sa_dynamo.dbapi")

MAX_TRANSACTION_ACTIONS = 100


class Connection:
    """A DBAPI connection over one boto3 DynamoDB client."""

    def __init__(self, client: Any, autocommit: bool = False):
        self.client = client
        self.autocommit = autocommit
        self.closed = False
        self._pending: list[dict[str, Any]] = []

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
        pending, self._pending = self._pending, []
        if not pending:
            return
        if len(pending) > MAX_TRANSACTION_ACTIONS:
            raise ProgrammingError(
                f"this transaction holds {len(pending)} writes; DynamoDB commits at most "
                f"{MAX_TRANSACTION_ACTIONS} atomically. Nothing was written: commit in smaller "
                "transactions, or use AUTOCOMMIT for non-atomic bulk writes"
            )
        token = uuid.uuid4().hex
        self._call("execute_transaction", {"TransactStatements": pending, "ClientRequestToken": token})
        log.debug("ExecuteTransaction committed %d statements (token %s)", len(pending), token)

    def rollback(self) -> None:
        if self.closed:
            raise InterfaceError("connection is closed")
        self._pending = []

    def close(self) -> None:
        self._pending = []
        self.closed = True

    def _buffer(self, kind: str, operation: str, body: dict[str, Any]) -> int:
        """Hold one write for commit; return the rowcount a successful commit guarantees."""
        if kind == "DELETE":
            body = dict(body, Statement=stmt.without_returning_old(operation))
        elif stmt.has_returning(operation):
            raise NotSupportedError(
                "RETURNING cannot run inside a DynamoDB transaction: use isolation_level='AUTOCOMMIT' for this statement"
            )
        self._pending.append(body)
        # A failed UPDATE condition cancels the whole commit, so a committed UPDATE matched one item.
        # A DELETE of a missing item commits silently, so its count is unknown.
        return -1 if kind == "DELETE" else 1

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
