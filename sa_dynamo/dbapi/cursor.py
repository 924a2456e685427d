"""PEP 249 Cursor over ExecuteStatement / BatchExecuteStatement.

The cursor dispatches a statement by its kind and hands out rows; building the request is
request.py's job, reading pages paging.py's, sending writes cursor_writes.py's (AUTOCOMMIT ones
through batch.py), and writes inside a transaction are the connection's buffer.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import capacity, overlay
from .client_reads import ClientRead
from .cursor_writes import Owner, Writes
from .errors import (
    InterfaceError,
    ProgrammingError,
)
from .paging import Discriminator, ItemFilter, Pages, projection
from .request import kind_of, request, source_of


@functools.lru_cache(maxsize=1024)
def _description(names: tuple[str, ...]) -> tuple[tuple, ...]:
    return tuple((name, None, None, None, None, None, None) for name in names)


class Cursor(Writes):
    """PEP 249 cursor. Extensions: ``page_size`` (items DynamoDB evaluates per request),
    ``consistent_read``, ``max_rows`` (stop reading after that many rows), ``skip_rows`` (SQL's
    OFFSET: that many rows are read and dropped before the first is handed out), ``count_only`` (a
    RETURNING write sets rowcount but yields no rows), ``count`` ("rows"/"values"/"present":
    a SELECT yields one row, the COUNT: paging.counted), ``discriminator`` (see Discriminator), ``item_filter`` (a test
    of the items read, applied here in DynamoDB's place: see ItemFilter), ``page_rows`` with
    ``start_token`` (read exactly one page of rows; ``resume_token`` continues after it),
    ``client_read`` (a batch of key reads, or rows sorted on the client: see client_reads.py),
    ``describe()`` (a dry run), ``matched_nothing()`` (the answer to a WHERE known to match
    nothing), ``pages`` / ``skipped`` (requests made, items dropped), ``consumed`` (what
    the last statement cost: capacity.py; complete once its rows are fetched or it is closed)
    and ``finished`` (called with ``consumed`` once it is complete).

    ``description`` is fixed when ``execute`` returns. A projection names the columns; for
    ``SELECT *`` they are the attributes of the first non-empty page, so an attribute that only
    later items carry is not in the rows: project the columns you need.
    """

    arraysize = 1

    def __init__(self, connection: Owner):
        self.connection = connection
        self.description: list[tuple] | None = None
        self.rowcount = -1
        self.lastrowid = None
        self.page_size: int | None = None
        self.consistent_read = False
        self.max_rows: int | None = None
        self.skip_rows = 0
        self.count_only = False
        self.discriminator: Discriminator | None = None
        self.item_filter: ItemFilter | None = None
        self.count: str | None = None
        self.hidden_columns = 0  # trailing projected attributes that are read but not returned
        # SELECT * with fixed columns: (names, rest), where column ``rest`` holds every attribute
        # the other names do not, as a dict (an attribute bag)
        self.star_columns: tuple[tuple[str, ...], str] | None = None
        # SELECT *: the columns that come first, in this order (the table's declared ones)
        self.star_order: tuple[str, ...] = ()
        # an UPDATE/DELETE's WHERE as a test of the item, one per row (of an executemany): in a
        # transaction the item is read first, so the rowcount is exact and a write matching
        # nothing is not held (buffer.py)
        self.write_matches: Sequence[Callable[[dict], bool]] | None = None
        # the rows' items were read a moment ago in this transaction and matched their WHERE:
        # they are held without reading them again (buffer.py)
        self.matched_by_read = False
        # the ORM's flush: only the rows whose items it announced, versioned, are tested (buffer.py)
        self.announced_only = False
        # a SELECT's WHERE as a test of an item: in a transaction, the items it wrote are tested
        # with it and laid over what DynamoDB returns (overlay.py)
        self.read_matches: Callable[[dict], bool] | None = None
        self.client_read: ClientRead | None = None
        self.page_rows: int | None = None
        self.start_token: str | None = None
        self.resume_token: str | None = None  # survives close(): read after the rows are consumed
        self._closed = False
        self.consumed = capacity.Consumed()
        self.finished: Callable[[capacity.Consumed], None] | None = None
        self._unfinished = False  # a statement whose figures are not yet complete (rows to fetch)
        self._pages = self._new_pages()
        self._reset()

    @property
    def pages(self) -> int:
        """ExecuteStatement requests the last statement made."""
        return self._pages.pages

    @property
    def skipped(self) -> int:
        """Items of unknown kinds the last statement dropped (see Discriminator)."""
        return self._pages.skipped

    # -- PEP 249 -------------------------------------------------------------------------

    def close(self) -> None:
        # rowcount outlives close(): SQLAlchemy may read it after closing an executemany cursor.
        rowcount = self.rowcount
        self._finish()
        self._reset()
        self.rowcount = rowcount
        self._closed = True

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass

    def execute(self, operation: str, parameters: Sequence[Any] | None = None) -> Cursor:
        self._check_open()
        self._start(operation)
        with self.connection.recording(self.consumed):
            self._execute(operation, parameters)
        if self.description is None:
            self._finish()
        return self

    def _execute(self, operation: str, parameters: Sequence[Any] | None) -> None:
        body = request(operation, parameters, self.connection.hide_parameters)
        kind = kind_of(operation)
        if kind == "SELECT":
            self._start_select(operation, body)
        elif kind in ("INSERT", "UPDATE", "DELETE"):
            if self.connection.autocommit:
                self._write_now(kind, operation, body)
            else:
                (self.rowcount,) = self.connection.buffer.hold(
                    kind, [(operation, body)], self.write_matches, self.matched_by_read, self.announced_only
                )
        elif kind == "PUT":
            self.rowcount = self._put([body])
        else:
            raise ProgrammingError(
                f"cannot run a {kind or 'blank'} statement: use SELECT, INSERT, UPDATE, DELETE or PUT"
            )

    def describe(self, operation: str) -> Cursor:
        """Set ``description`` as ``execute`` would, with no rows, sending nothing (for a dry run
        such as ``sa_dynamo.explain``). ``SELECT *`` describes no columns."""
        self._check_open()
        self._start(operation, sends=False)
        if kind_of(operation) == "SELECT":
            names = projection(operation)
            hidden = self.client_read.hidden if self.client_read is not None else self.hidden_columns
            if names is not None and hidden:
                names = names[:-hidden]
            if names is None and self.star_columns is not None:
                names = self.star_columns[0]
            self._set_result(names or (), [])
        return self

    def computed(self, names: Sequence[str] | None, rows: list[tuple], rowcount: int = -1) -> Cursor:
        """The result of a statement its caller computed on the client over the reads and writes
        it made through other cursors of this connection (a join, GROUP BY, an UPDATE by any
        WHERE): the rows of ``names`` (None: a write, no rows), or ``rowcount``; nothing is sent
        (what the other cursors sent is in their ``consumed``)."""
        self._check_open()
        self._start("", sends=False)
        if names is not None:
            self._set_result(names, rows)
        else:
            self.rowcount = rowcount
        return self

    def matched_nothing(self, operation: str) -> Cursor:
        """The result of a statement whose WHERE the caller knows matches no item (SQL that
        says so: ``x IS NULL`` of a key, a reversed BETWEEN), sending nothing: a SELECT returns
        no rows, or its COUNT's one row, 0; an UPDATE or DELETE counts 0 rows."""
        self.describe(operation)
        kind = kind_of(operation)
        if kind == "SELECT" and self.count is not None:
            self._set_result(("count",), [(0,)])
        elif kind in ("UPDATE", "DELETE"):
            self.rowcount = 0
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Sequence[Any]]) -> Cursor:
        return self._execute_rows(kind_of(operation), [(operation, params) for params in seq_of_parameters])

    def executemany_statements(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> Cursor:
        """``executemany`` where each row has its own statement text, all of one kind (the
        dialect leaves a row's None attributes out of its INSERT)."""
        kinds = {kind_of(operation) for operation, _ in statements}
        return self._execute_rows(kinds.pop() if len(kinds) == 1 else "mixed", statements)

    def _execute_rows(self, kind: str, statements: Sequence[tuple[str, Sequence[Any]]]) -> Cursor:
        """Every row is checked before anything is sent or buffered, so a bad row writes nothing;
        in AUTOCOMMIT a failure after that raises an error whose ``applied``, ``unapplied`` and
        ``unknown`` are row indexes."""
        self._check_open()
        self._start(statements[0][0] if statements else "")
        with self.connection.recording(self.consumed):
            self._execute_batch(kind, statements)
        self._finish()
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

    # -- results -------------------------------------------------------------------------

    def _start(self, operation: str, sends: bool = True) -> None:
        """A new statement: the last one's figures completed, a fresh record for this one's
        (logged when complete unless the statement ``sends`` nothing)."""
        self._finish()
        self._reset()
        self._pages = self._new_pages()
        found = source_of(operation) if operation else None
        self.consumed = capacity.Consumed(source="/".join(filter(None, found)) if found else "")
        if sends:
            self.connection.carried_into(self.consumed)
        self._unfinished = sends

    def _finish(self) -> None:
        """The statement's figures are complete: its rows counted, its INFO line logged."""
        if not self._unfinished:
            return
        self._unfinished = False
        self.consumed.rows = self._delivered
        self.consumed.skipped = self._pages.skipped
        self.consumed.filtered = self._pages.filtered
        if not self.connection.hide_parameters:  # the kinds are values
            self.consumed.unknown_kinds = tuple(self._pages.unknown)
        capacity.report(self.consumed)
        if self.finished is not None:
            self.finished(self.consumed)

    def _reset(self) -> None:
        """No result; the last statement's pages stay, for ``pages`` and ``skipped``."""
        self.description = None
        self.rowcount = -1
        self._rows: deque[tuple] = deque()
        self._delivered = 0
        self._skipped = 0  # rows dropped for skip_rows so far

    def _new_pages(self) -> Pages:
        return Pages(self.connection.transport, self.discriminator, self.star_order, self.item_filter)

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("cursor is closed")
        if self.connection.closed:
            raise InterfaceError("connection is closed")

    def _start_select(self, operation: str, body: dict[str, Any]) -> None:
        if not self.connection.autocommit and len(self.connection.buffer):
            found = source_of(operation)
            images = self.connection.buffer.written(found[0]) if found is not None else None
            if images:
                source = self.connection.tables.read_source(*found)
                self._set_result(*overlay.read(self, self._pages, source, operation, body, images))
                return
        pages = self._pages
        names = pages.prepare(operation, body, self.page_size, self.consistent_read, self.hidden_columns)
        if names is None and self.star_columns is not None:
            names, pages.rest = self.star_columns
        if self.count is not None:
            self._set_result(("count",), [(pages.count(body, self.count, names[0]),)])
            return
        self.resume_token = None
        if self.page_rows is not None:
            rows = pages.one_page(body, names, self.page_rows, self.start_token)
            self.resume_token = pages.next_token
            self._set_result(pages.names, rows)
            return
        if self.client_read is not None:  # filtered or sorted here: every row is held first
            self._set_result(*self.client_read.rows(pages, body, names))
            return
        rows = pages.first_rows(body, names)
        self._set_result(pages.names, rows)

    def _set_result(self, names: Sequence[str], rows: list[tuple]) -> None:
        self.description = list(_description(tuple(names)))
        self._rows.extend(rows)

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

    def _fill(self) -> bool:
        """Make a row ready, reading pages only as needed; False when the result (or max_rows) is
        exhausted, at which point rowcount becomes the number of rows delivered."""
        if self.description is None:
            raise ProgrammingError("no result set: the last statement returned no rows")
        if self.max_rows is not None and self._delivered >= self.max_rows:
            self._rows.clear()
            self._pages.request = None
        while True:
            if not self._rows and self._pages.request is not None:
                with self.connection.recording(self.consumed):
                    while not self._rows and self._pages.request is not None:
                        self._rows.extend(self._pages.next_rows())
            if self._skipped >= self.skip_rows or not self._rows:
                break
            dropped = min(self.skip_rows - self._skipped, len(self._rows))
            for _ in range(dropped):  # read, counted in the cost, and not handed out
                self._rows.popleft()
            self._skipped += dropped
        if not self._rows:
            if self.rowcount == -1:
                self.rowcount = self._delivered
                self._finish()
            return False
        return True
