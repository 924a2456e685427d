"""The write half of a cursor (cursor.py's ``Cursor`` is made of it): an executemany's rows
held or sent, and the writes sent at once in AUTOCOMMIT: one by batch.py, a PUT, and those to a
table with unique constraints, each row a transaction with its guards."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from . import batch, capacity
from . import statement as stmt
from .errors import NotSupportedError, in_row
from .request import request

if TYPE_CHECKING:
    from .buffer import Buffer
    from .paging import Pages
    from .tables import Tables
    from .transport import Transport


class Owner(Protocol):
    """What a cursor uses of its connection (connection.py)."""

    autocommit: bool
    hide_parameters: bool
    closed: bool
    transport: Transport
    tables: Tables
    buffer: Buffer

    def recording(self, consumed: capacity.Consumed) -> AbstractContextManager[None]: ...

    def carried_into(self, consumed: capacity.Consumed) -> None: ...

    def commit_each_row(
        self, kind: str, statements: list[tuple[str, dict[str, Any]]], tests: Any, matched: bool
    ) -> list[int]: ...


class Writes:
    """Mixed into ``Cursor``, whose state these methods read and set (and whose ``_set_result``
    a RETURNING write's rows go to)."""

    connection: Owner
    rowcount: int
    count_only: bool
    write_matches: Sequence[Callable[[dict], bool]] | None
    matched_by_read: bool
    announced_only: bool
    _pages: Pages

    def _execute_batch(self, kind: str, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        if kind not in ("INSERT", "UPDATE", "DELETE", "PUT"):
            raise NotSupportedError(
                "executemany runs INSERT, UPDATE, DELETE or PUT, one kind at a time; run a SELECT with execute()"
            )
        if not statements:
            self.rowcount = 0
            return
        hidden, rows = self.connection.hide_parameters, len(statements)
        bodies = []
        for row, (operation, parameters) in enumerate(statements):
            with in_row(row, rows):
                bodies.append(request(operation, parameters, hidden))
        tables = self.connection.tables
        if kind == "PUT":
            self.rowcount = self._put(bodies)
        elif not self.connection.autocommit:
            counts = self.connection.buffer.hold(
                kind,
                [(b["Statement"], b) for b in bodies],
                self.write_matches,
                self.matched_by_read,
                self.announced_only,
            )
            self.rowcount = batch.total_rowcount(counts)
        else:
            checked = []
            for row, body in enumerate(bodies):
                with in_row(row, rows):
                    checked.append(tables.checked(stmt.without_returning_old(body["Statement"]), body))
            if any(write is not None and tables.unique(write.table) for write in checked):
                self.rowcount = self._write_guarded(kind, [(b["Statement"], b) for b in bodies])
                return
            self.rowcount, error = batch.execute(self.connection.transport, kind, bodies, checked)
            if error is not None:
                raise error

    # -- writing -------------------------------------------------------------------------

    def _put(self, bodies: list[dict[str, Any]]) -> int:
        if not self.connection.autocommit:
            raise NotSupportedError(
                "PUT (upsert) writes at once with BatchWriteItem and cannot join a transaction: "
                "run it on an AUTOCOMMIT connection"
            )
        return batch.put(self.connection.transport, self.connection.tables, bodies)

    def _write_guarded(self, kind: str, statements: list[tuple[str, dict[str, Any]]]) -> int:
        """AUTOCOMMIT writes to a table with unique constraints, each row a transaction with
        the guards of its unique values (Connection.commit_each_row)."""
        if any(stmt.has_returning(operation) for operation, _ in statements) and not (
            kind == "DELETE" and self.count_only
        ):
            raise NotSupportedError(
                "RETURNING cannot run on a table with unique constraints: its writes commit with "
                "their guard items in a transaction, which returns no rows; read the rows back instead"
            )
        counts = self.connection.commit_each_row(kind, statements, self.write_matches, self.matched_by_read)
        return batch.total_rowcount(counts)

    def _write_now(self, kind: str, operation: str, body: dict[str, Any]) -> None:
        connection = self.connection
        write = connection.tables.checked(stmt.without_returning_old(operation), body)
        if write is not None and connection.tables.unique(write.table):
            self.rowcount = self._write_guarded(kind, [(operation, body)])
            return
        response = batch.write_now(connection.transport, kind, body, write, connection.hide_parameters)
        if isinstance(response, int):  # the rowcount an error decided
            self.rowcount = response
            return
        items = response.get("Items", [])
        if stmt.has_returning(operation):
            self.rowcount = len(items)
            if not self.count_only:
                rows = self._pages.returned(items)
                self._set_result(self._pages.names, rows)
        else:
            # A DELETE of a missing item succeeds too: without RETURNING its count is unknown.
            self.rowcount = 1 if kind != "DELETE" else -1
