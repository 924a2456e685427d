"""Where each backfill got to: one row per backfill in a DynamoDB table next to the version
table, moved by the same transaction as the batch it records (backfill.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Integer,
    MetaData,
    String,
    Table,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.orm.exc import StaleDataError

Item = dict[str, Any]


@dataclass(frozen=True)
class Progress:
    """Where a backfill stands; one row of the checkpoint table."""

    name: str
    batches: int = 0
    scanned: int = 0
    written: int = 0
    # The key the next Scan starts after; None before the first batch and after the last.
    position: Item | None = None
    done: bool = False


def checkpoint_table(version_table: str) -> str:
    """The checkpoint table that goes with a version table."""
    return f"{version_table}_backfill"


class Checkpoints:
    """Where each running backfill got to, in a DynamoDB table next to the version table."""

    def __init__(self, table_name: str):
        self.table = Table(
            table_name,
            MetaData(),
            Column("id", String, primary_key=True),
            Column("batches", Integer),
            Column("scanned", Integer),
            Column("written", Integer),
            Column("position"),
            Column("done", Boolean),
        )

    def ensure(self, connection: Connection) -> None:
        self.table.create(connection, checkfirst=True)

    def load(self, connection: Connection, name: str) -> Progress | None:
        query = select(self.table).where(self.table.c.id == name)
        row = connection.execute(query.execution_options(dynamodb_consistent_read=True)).mappings().first()
        if row is None:
            return None
        state = {key: value for key, value in row.items() if key != "id"}
        return Progress(name, **state)

    def save(self, connection: Connection, before: Progress, after: Progress) -> None:
        """Buffer the move from ``before`` to ``after``: a StaleDataError, now or at commit, if
        another process moved the checkpoint meanwhile."""
        values = {
            "batches": after.batches,
            "scanned": after.scanned,
            "written": after.written,
            "position": after.position,
            "done": after.done,
        }
        table = self.table
        if before.batches == 0:
            connection.execute(insert(table).values(id=after.name, **values))
        else:
            moved = connection.execute(
                update(table)
                .where(table.c.id == after.name, table.c.batches == before.batches)
                .values(values)
            )
            if moved.rowcount == 0:
                raise StaleDataError(
                    f"the checkpoint of backfill {after.name!r} moved past batch {before.batches}"
                )

    def forget(self, connection: Connection, name: str) -> None:
        connection.execute(delete(self.table).where(self.table.c.id == name))
