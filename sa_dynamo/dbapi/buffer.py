"""The transaction buffer: the writes a connection holds until COMMIT, one action per item.

A write of an item the transaction already wrote is merged with it (writes.merge), so COMMIT
sends one ExecuteTransaction action per item. An UPDATE/DELETE whose WHERE the dialect hands
over as a test is tested on the item first (read strongly consistently, once per transaction),
so its rowcount is exact at once and a write that matches nothing is not held. The items the
transaction wrote, as they will be once committed, are what its reads lay over what DynamoDB
returns (``written``, overlay.py).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import batch, capacity, overlay, unique, values, writes
from . import statement as stmt
from .errors import NotSupportedError, in_row
from .tables import Tables
from .transport import Transport
from .unique_view import Step, UniqueView, moves_values

log = logging.getLogger("sa_dynamo.dbapi")

Test = Callable[[dict], bool]  # an UPDATE/DELETE's WHERE as a test of the item's Python values


@dataclass(frozen=True)
class Pending:
    """A write held for commit, and the transaction's writes it stands for (their positions in
    the order executed: several when writes of one item were merged)."""

    action: writes.Write | unique.GuardWrite | dict[str, Any]
    rows: tuple[int, ...]


class Buffer:
    """The writes of one transaction, and the items as committed that it has read."""

    def __init__(
        self, transport: Transport, tables: Tables, hide_parameters: bool = False, checks_unique: bool = True
    ):
        self.transport = transport
        self.tables = tables
        self.hide_parameters = hide_parameters
        # Each statement's unique values checked as it is held (unique_view.py); off where a
        # commit of that statement alone follows, which the guards' own writes check atomically.
        self.checks_unique = checks_unique
        self.discard()

    def __len__(self) -> int:
        return len(self._pending)

    def discard(self) -> None:
        """Forget every write held and every item read: a new transaction."""
        self._pending: list[Pending] = []
        self._writes: dict[tuple[str, str], Pending] = {}
        self.merged_away: list[int] = []  # writes that cancelled out (an insert, then its delete)
        self._executed = 0  # writes executed in this transaction
        # items as committed, read in this transaction: (table, key) -> AttributeValues or None
        self._committed: dict[tuple[str, overlay.Key], overlay.Item | None] = {}
        # the keys of the versioned writes of the ORM's next flush, not read yet (announce())
        self._announced: dict[str, list[dict[str, Any]]] = {}
        self._versioned: set[tuple[str, overlay.Key]] = set()  # their items, read (or written)
        self.unique_view = UniqueView(self.transport, self.tables)

    def announce(self, table: str, names: tuple[str, ...], keys: list[dict[str, Any]]) -> None:
        """The items (keys as AttributeValues, the table's key attributes ``names`` HASH first)
        that the ORM's next flush writes with a version check: read all at once, strongly
        consistently, by its first versioned write, so that each one's rowcount is exact at the
        flush (SQLAlchemy raises StaleDataError there). The check stays the commit's condition."""
        self.tables.set_key_names(table, names)
        self._announced.setdefault(table, []).extend(keys)

    def take(self) -> tuple[list[Pending], list[int]]:
        """The writes to commit, each followed by the guard writes of its unique values
        (unique.py), and those merged away, leaving the buffer empty. Two rows of the
        transaction taking one unique value are an IntegrityError, and the buffer is emptied."""
        try:
            return self._guarded(self._pending), self.merged_away
        finally:
            self.discard()

    def _guarded(self, held: list[Pending]) -> list[Pending]:
        actions = [pending.action for pending in held]
        moving = [
            a
            for a in actions
            if isinstance(a, writes.Write) and a.kind in ("UPDATE", "DELETE") and self.tables.unique(a.table)
        ]
        self._read_committed(
            _keys_by_table(moving),
            "whose unique values this transaction moves or frees, to move their guards",
        )
        rows, guards = unique.guarded(
            [(p.action, p.rows) for p in held], self.tables.unique, self.committed_item, self.hide_parameters
        )
        if not guards and rows == actions:
            return held
        return [Pending(row, pending.rows) for row, pending in zip(rows, held, strict=True)] + [
            Pending(guard, ()) for guard in guards
        ]

    def hold(
        self,
        kind: str,
        statements: list[tuple[str, dict[str, Any]]],
        tests: Sequence[Test | None] | None = None,
        matched: bool = False,
        announced_only: bool = False,
    ) -> list[int]:
        """Hold writes for commit, each merged with an earlier write of the same item; their
        rowcounts: what a successful commit guarantees, or what the merge already decided. All
        or none: when one fails its checks, the buffer stays as it was.

        ``tests`` holds each UPDATE/DELETE's WHERE as a test of the item: the items are read
        (consistently, one BatchGetItem for the rows of an executemany) and tested first, so the
        rowcount is exact at once, and a write whose WHERE matches nothing is not held (SQL:
        zero rows, the transaction goes on).

        ``matched``: the caller read the items a moment ago in this transaction, and each matched
        its WHERE (an UPDATE/DELETE by any WHERE reads the keys it writes): an item this
        transaction has not written is held without reading it again, its WHERE the condition
        the commit checks, so a change in between fails the commit instead of being lost.

        ``announced_only``: the ORM's flush; a row is tested only when its item was announced
        (``announce()``), the announced items all read first."""
        rows = len(statements)
        held = []
        for row, (operation, body) in enumerate(statements):
            with in_row(row, rows):
                held.append(self._checked(kind, operation, body))
        tests = tests or [None] * rows
        if announced_only:
            self._read_announced()
            versioned = self._versioned  # none: a flush without version checks tests nothing
            tests = [
                t if versioned and w is not None and self._known(w) in versioned else None
                for (_, w), t in zip(held, tests, strict=True)
            ]
        guarded = [w for _, w in held if self._keeps_unique(w)]
        if rows == 1 and not guarded:  # checked: it fails before changing anything
            return [self._hold(kind, *held[0], tests[0], matched)]
        tested = [
            w
            for (_, w), test in zip(held, tests, strict=True)
            if test and w and w.identity not in self._writes and not matched
        ]
        self._read_committed(_keys_by_table(tested), f"this {kind} tests, to count the rows it matches")
        moving = [w for w in guarded if w.kind == "UPDATE" and moves_values(w, self.tables.unique(w.table))]
        self._read_committed(
            _keys_by_table(moving), f"whose unique values this {kind} may change, to check them"
        )
        counts = []
        with self.undone_on_error():
            steps = []
            for row, ((body, write), test) in enumerate(zip(held, tests, strict=True)):
                with in_row(row, rows):
                    step = self._before(write) if self._keeps_unique(write) else None
                    counts.append(self._hold(kind, body, write, test, matched))
                    if step is not None and counts[-1] != 0:
                        steps.append(self._after(row, step))
            if steps:
                self.unique_view.check(steps, rows, self.committed_item, self.hide_parameters)
        return counts

    def _keeps_unique(self, write: writes.Write | None) -> bool:
        """Whether ``write``'s statement is checked for the unique values it takes."""
        return write is not None and self.checks_unique and bool(self.tables.unique(write.table))

    def _before(self, write: writes.Write) -> tuple[writes.Write, overlay.Item | None, bool] | None:
        """The start of ``write``'s step (unique_view.Step): the write, its item as this
        transaction sees it, whether it is an INSERT of an item the transaction has not written.
        None for an UPDATE that leaves the unique columns alone; a DELETE takes no value, but
        frees its item's for later statements."""
        if write.kind == "DELETE":
            return write, None, False
        if not moves_values(write, self.tables.unique(write.table)):
            return None
        return write, self._seen(write), write.kind == "INSERT" and write.identity not in self._writes

    def _after(self, row: int, start: tuple[writes.Write, overlay.Item | None, bool]) -> Step:
        write, before, fresh = start
        return Step(row, write, before, None if write.kind == "DELETE" else self._seen(write), fresh)

    def _seen(self, write: writes.Write) -> overlay.Item | None:
        """The item of ``write`` as this transaction sees it now (its writes applied)."""
        pending = self._writes.get(write.identity)
        if pending is None:  # not written: as stored; an INSERT's item, unless stored, is new
            return None if write.kind == "INSERT" else self.committed_item(write.table, write.key)
        action = pending.action
        committed = self.committed_item(write.table, write.key) if action.kind == "UPDATE" else None
        return overlay.image(action, committed)

    @contextlib.contextmanager
    def undone_on_error(self) -> Iterator[None]:
        """The writes held within the block are let go if it fails: the buffer is left as it
        was; what was read of the committed items stays true."""
        saved = (list(self._pending), dict(self._writes), list(self.merged_away), self._executed)
        seen = self.unique_view.saved()
        try:
            yield
        except BaseException:
            self._pending, self._writes, self.merged_away, self._executed = saved
            self.unique_view.restore(seen)
            raise

    def _checked(
        self, kind: str, operation: str, body: dict[str, Any]
    ) -> tuple[dict[str, Any], writes.Write | None]:
        """The request a write is held as, and its canonical form once checked (Tables.checked)."""
        if kind == "DELETE":
            operation = stmt.without_returning_old(operation)
            body = dict(body, Statement=operation)
        elif stmt.has_returning(operation):
            raise NotSupportedError(
                "RETURNING cannot run inside a DynamoDB transaction: use isolation_level='AUTOCOMMIT' for this statement"
            )
        return body, self.tables.checked(operation, body)

    def _hold(
        self,
        kind: str,
        body: dict[str, Any],
        write: writes.Write | None,
        test: Test | None = None,
        matched: bool = False,
    ) -> int:
        row = self._executed
        earlier = self._writes.get(write.identity) if write is not None else None
        if matched and earlier is None and write is not None:
            if kind == "DELETE":  # the item was read: deleted meanwhile, it fails the commit
                write = writes.while_present(write)
        elif test is not None and write is not None and kind != "INSERT":
            before = earlier.action if earlier is not None else None
            needs_committed = before is None or before.kind == "UPDATE"
            committed = self.committed_item(write.table, write.key) if needs_committed else None
            current = committed if before is None else overlay.image(before, committed)
            if current is None or not test(values.deserialize_item(current)):
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
            return -1 if kind == "DELETE" and test is None and not matched else 1
        if write.kind == "INSERT" and earlier.action.kind == "DELETE":
            # deleted, then inserted anew: one action that leaves the item as the INSERT writes it
            committed = self.committed_item(write.table, write.key)
            merged, rowcount = writes.reinserted(earlier.action, write, committed), 1
        else:
            merged, rowcount = writes.merge(earlier.action, write, self.hide_parameters)
        if merged is None and self.committed_item(write.table, write.key) is not None:
            raise writes.stored_twice(write, self.hide_parameters)
        if merged is not None:  # e.g. an UPDATE that grows an inserted item past 400 KB
            self.tables.check(merged)
        position = next(i for i, pending in enumerate(self._pending) if pending is earlier)
        if merged is None:
            del self._pending[position]
            del self._writes[write.identity]
            self.merged_away += [*earlier.rows, row]
        else:
            self._pending[position] = self._writes[write.identity] = Pending(merged, (*earlier.rows, row))
        self._executed += 1
        return rowcount

    def committed_item(self, table: str, key: tuple[tuple[str, dict], ...]) -> overlay.Item | None:
        """The item as committed (AttributeValues) or None, read strongly consistently (one
        GetItem) the first time this transaction needs it."""
        known = (table, values.key_of(dict(key), (name for name, _ in key)))
        if known not in self._committed:
            where = " AND ".join(f"{writes.quote(name)} = ?" for name, _ in key)
            statement = f"SELECT * FROM {writes.quote(table)} WHERE {where}"
            log.info("%s -- the item as committed, read once for this transaction", statement)
            body = {"Statement": statement, "Parameters": [value for _, value in key], "ConsistentRead": True}
            items = self.transport.send("ExecuteStatement", capacity.asking(body)).get("Items", [])
            self._committed[known] = items[0] if items else None
        return self._committed[known]

    def _known(self, write: writes.Write) -> tuple[str, overlay.Key]:
        return (write.table, values.key_of(dict(write.key), self.tables.key_names(write.table)))

    def _read_announced(self) -> None:
        """Read the announced items at once (one BatchGetItem per 100 items, of any tables), but
        for those this transaction inserted or deleted: their writes are tested on the item as
        it left them."""
        announced, self._announced = self._announced, {}
        unread: dict[str, list[tuple[tuple[str, dict], ...]]] = {}
        for table, keys in announced.items():
            names = self.tables.key_names(table)
            known = [values.key_of(key, names) for key in keys]
            self._versioned.update((table, k) for k in known)
            settled = {
                self._known(p.action)[1]
                for p in self._pending
                if isinstance(p.action, writes.Write)
                and p.action.table == table
                and p.action.kind != "UPDATE"
            }
            unread[table] = [
                tuple(key.items()) for key, k in zip(keys, known, strict=True) if k not in settled
            ]
        self._read_committed(unread, "that the flush writes with a version check, read once for it")

    def _read_committed(self, keys: dict[str, list[tuple[tuple[str, dict], ...]]], why: str) -> None:
        """Read the items as committed under ``keys`` (by table) that this transaction has not
        read yet, strongly consistently, with one BatchGetItem per 100 (``why``: for the log)."""
        unread: dict[str, dict[overlay.Key, tuple[tuple[str, dict], ...]]] = {}
        for table, table_keys in keys.items():
            names = self.tables.key_names(table)
            for key in table_keys:
                known = values.key_of(dict(key), names)
                if (table, known) not in self._committed:
                    unread.setdefault(table, {})[known] = key
        if not unread:
            return
        log.info("BatchGetItem of %d items %s", sum(map(len, unread.values())), why)
        found = batch.read_tables(
            self.transport, {t: [dict(key) for key in k.values()] for t, k in unread.items()}
        )
        for table, items in found.items():
            names = self.tables.key_names(table)
            self._committed.update(((table, k), None) for k in unread[table])
            self._committed.update(((table, values.key_of(item, names)), item) for item in items)

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
        keyed = {values.key_of(dict(w.key), self.tables.key_names(table)): w for w in held}
        updated = [w.key for w in keyed.values() if w.kind == "UPDATE"]
        self._read_committed({table: updated}, "this transaction updates, to show its reads their new values")
        return {k: overlay.image(w, self._committed.get((table, k))) for k, w in keyed.items()}


def _keys_by_table(held: list[writes.Write]) -> dict[str, list[tuple[tuple[str, Any], ...]]]:
    keys: dict[str, list[tuple[tuple[str, Any], ...]]] = {}
    for write in held:
        keys.setdefault(write.table, []).append(write.key)
    return keys


def _table_of(action: writes.Write | dict[str, Any]) -> str | None:
    if isinstance(action, writes.Write):
        return action.table
    found = stmt.source(action["Statement"])
    return found[0] if found else None
