"""``capacity()``: what the statements run on a Session or Connection cost, summed while a block
runs; ``consumed()``: what the statement of one result cost.

Each statement's figures are its DBAPI cursor's ``consumed`` (dbapi/capacity.py), collected
with SQLAlchemy's public events: ``after_cursor_execute`` hands over the cursor, ``commit``
the connection whose ``consumed`` holds what its commit cost once the commit is done. The
records are read when asked, so pages fetched after a statement ran are counted too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session

from .dbapi.capacity import Consumed
from .sqlalchemy_private import underlying_result


@dataclass
class Used:
    """The figures of the statements and commits run in a ``capacity()`` block, summed."""

    records: list[Consumed] = field(default_factory=list)

    @property
    def total(self) -> Consumed:
        """Every figure summed (``reported``: whether DynamoDB reported any capacity)."""
        return sum(self.records, Consumed())

    @property
    def statements(self) -> int:
        """Statements and commits that sent at least one request to DynamoDB."""
        return sum(1 for record in self.records if record.requests)

    @property
    def read_units(self) -> float:
        return self.total.read_units

    @property
    def write_units(self) -> float:
        return self.total.write_units


class _Watch:
    """The listeners of one ``capacity()`` block on each Connection it sees."""

    def __init__(self, used: Used):
        self.used = used
        self.watched: dict[int, Connection] = {}
        self.committing: dict[int, Any] = {}  # DBAPI connections whose last commit is not yet read

    def watch(self, connection: Connection) -> None:
        if id(connection) not in self.watched:
            self.watched[id(connection)] = connection
            event.listen(connection, "after_cursor_execute", self.executed)
            event.listen(connection, "commit", self.commit)

    def executed(self, conn: Connection, cursor: Any, *args: Any) -> None:
        self.read_commits()  # a statement after a commit: the commit is done
        consumed = getattr(cursor, "consumed", None)
        if isinstance(consumed, Consumed):
            self.used.records.append(consumed)

    def commit(self, conn: Connection) -> None:
        """Before a commit: the DBAPI connection's record is read after it (at its next commit
        or when the block ends), a commit of the same connection before having ended this one."""
        dbapi_connection = conn.connection.dbapi_connection
        self.committed(id(dbapi_connection))
        self.committing[id(dbapi_connection)] = dbapi_connection

    def committed(self, key: int) -> None:
        consumed = getattr(self.committing.pop(key, None), "consumed", None)
        if isinstance(consumed, Consumed):
            self.used.records.append(consumed)

    def read_commits(self, *args: Any) -> None:
        for key in list(self.committing):
            self.committed(key)

    def stop(self) -> None:
        self.read_commits()
        for connection in self.watched.values():
            event.remove(connection, "after_cursor_execute", self.executed)
            event.remove(connection, "commit", self.commit)


@contextlib.contextmanager
def capacity(session_or_connection: Session | Connection) -> Iterator[Used]:
    """Sum what the statements run on ``session_or_connection`` cost while the block runs::

        with sa_dynamo.capacity(session) as used:
            session.scalars(select(Order).where(Order.pk == "C#1")).all()
        print(used.read_units, used.write_units, used.statements)

    A Session is watched on each connection it begins meanwhile, and on the connection of its
    default bind when it is already in a transaction. For an AsyncSession pass its
    ``sync_session`` (an AsyncConnection: its ``sync_connection``)."""
    used = Used()
    watch = _Watch(used)
    if isinstance(session_or_connection, Session):
        session = session_or_connection

        def begun(session: Session, transaction: Any, connection: Connection) -> None:
            watch.watch(connection)

        if session.in_transaction():
            watch.watch(session.connection())
        event.listen(session, "after_begin", begun)
        event.listen(session, "after_commit", watch.read_commits)
        try:
            yield used
        finally:
            event.remove(session, "after_begin", begun)
            event.remove(session, "after_commit", watch.read_commits)
            watch.stop()
    else:
        watch.watch(session_or_connection)
        try:
            yield used
        finally:
            watch.stop()


def consumed(result: Any) -> Consumed:
    """What the statement of ``result`` cost: its DBAPI cursor's record (capacity units by table
    and index, requests, items DynamoDB returned, rows handed out, items skipped, time)::

        result = session.execute(select(Order).where(Order.pk == "C#1"))
        orders = result.scalars().all()
        print(sa_dynamo.consumed(result).read_units)

    Any result of ``execute()`` or ``stream()``, sync or async, ORM or Core, and the scalar or
    mapping views of one. The figures are complete once its rows are read (or it is closed);
    a statement computed on the client over several reads (a join, GROUP BY) sent nothing of
    its own: sum those with ``capacity()``."""
    context = getattr(underlying_result(result), "context", None)
    found = getattr(getattr(context, "cursor", None), "consumed", None)
    if not isinstance(found, Consumed):
        raise ArgumentError(
            f"{type(result).__name__} holds no sa_dynamo statement's figures: pass the result of "
            "execute() or stream() on a DynamoDB engine, or sum a block with sa_dynamo.capacity()"
        )
    return found
