"""Alembic's version table on DynamoDB.

Alembic moves the current revision with ``UPDATE alembic_version SET version_num = 'new' WHERE
version_num = 'old'``. ``version_num`` is the table's partition key and DynamoDB cannot update a
key, so the move becomes a DELETE of the old row (conditional on the row being there) and an
INSERT of the new one (which fails if it exists). Both are buffered by the dialect's default
transaction and commit with the step's other writes as ONE ExecuteTransaction: a crash leaves
the old revision or the new one, never none and never two, and two concurrent ``alembic
upgrade`` runs cannot both move it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, func
from sqlalchemy.sql import Delete, Executable, Insert, Update, visitors
from sqlalchemy.sql.elements import ColumnClause


def is_version_write(construct: Any, version_table: Table | None) -> bool:
    """Whether Alembic is writing its version table with this statement."""
    return isinstance(construct, (Insert, Update, Delete)) and construct.table is version_table


def _revision(clause: Any, skip: Any = None) -> str:
    """The revision in Alembic's ``literal_column("'<rev>'")`` inside ``clause`` (and not in
    ``skip``: an UPDATE holds the new revision in its SET and the old one in its WHERE)."""
    skipped = {id(e) for e in visitors.iterate(skip)} if skip is not None else set()
    literal = next(
        e
        for e in visitors.iterate(clause)
        if isinstance(e, ColumnClause) and e.is_literal and id(e) not in skipped
    )
    return literal.name.strip("'")


def replacement(construct: Insert | Update | Delete, table: Table) -> list[Executable]:
    """What Alembic's version statement means, as statements DynamoDB can run: the old row
    deleted if Alembic removes or moves one, the new row inserted if it adds or moves one."""
    if isinstance(construct, Insert):
        old, new = None, _revision(construct)
    elif isinstance(construct, Delete):
        old, new = _revision(construct.whereclause), None
    else:
        old, new = _revision(construct.whereclause), _revision(construct, skip=construct.whereclause)
    column = table.c.version_num
    statements: list[Executable] = []
    if old is not None:
        # attribute_exists() makes the DELETE a conditional write: if the old revision is gone
        # (another run moved it), the whole transaction fails instead of leaving two rows.
        statements.append(table.delete().where(column == old, func.attribute_exists(column)))
    if new is not None:
        statements.append(table.insert().values(version_num=new))
    return statements
