"""Foreign keys' ON DELETE actions, carried out as SQLite does with ``PRAGMA foreign_keys=ON``.

A DELETE of a table that a ``ForeignKey(..., ondelete=...)`` references reads the rows it deletes
(keyed_writes.py), and for each the children are found by their foreign key, which must be the
partition key of the child table or of one of its global indexes (a Query, never a scan), and
changed in the same transaction: CASCADE deletes them (their own children in turn), SET NULL and
SET DEFAULT null the foreign key (NOT NULL holds: IntegrityError), RESTRICT and NO ACTION refuse
the delete while children exist. The whole statement is one: in a transaction it is undone if any
part fails, in AUTOCOMMIT it is one ExecuteTransaction. ``onupdate`` needs nothing: it references
the parent's key, which DynamoDB never changes (an UPDATE of a key is refused), and any other
``onupdate`` is refused. An FK without ``ondelete`` is not checked, as in SQLite by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, delete, select, update
from sqlalchemy.exc import CompileError, NoReferencedTableError
from sqlalchemy.sql.schema import Column, ForeignKeyConstraint, Table

from ...dbapi.errors import IntegrityError
from ..key_schema import key_schema

ACTIONS = ("CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT", "NO ACTION")
_PARENT = "sa_dynamo_parent_{}"
_SET = "sa_dynamo_set_{}"


def _described(fk: ForeignKeyConstraint) -> str:
    child = ", ".join(f"{fk.table.name}.{c.name}" for c in fk.columns)
    parent = ", ".join(e.target_fullname for e in fk.elements)
    return f"ForeignKey {child} -> {parent}"


def _refuse(fk: ForeignKeyConstraint, what: str, advice: str) -> None:
    raise CompileError(f"{_described(fk)} has {what}; {advice}")


def _parent_columns(fk: ForeignKeyConstraint) -> tuple[Column, ...] | None:
    """The parent's columns the FK references; None while the parent Table is not declared."""
    try:
        return tuple(element.column for element in fk.elements)
    except NoReferencedTableError:
        return None


def check(fk: ForeignKeyConstraint, dialect: Any) -> None:
    """Refuse an FK action sa_dynamo cannot carry out exactly (a CompileError at create_all and
    at the parent's DELETE), never ignore it."""
    if fk.ondelete is None and fk.onupdate is None:
        return
    for option in ("ondelete", "onupdate"):
        given = getattr(fk, option)
        if given is not None and given.upper() not in ACTIONS:
            _refuse(fk, f"{option}={given!r}", f"use one of {', '.join(ACTIONS)}")
    parents = _parent_columns(fk)
    if parents is None:
        return  # SQLAlchemy refuses the FK itself once the parent is needed
    parent = parents[0].table
    if fk.onupdate is not None and set(parents) != set(key_schema(parent).columns):
        _refuse(
            fk,
            f"onupdate={fk.onupdate!r} on {parent.name}'s non-key columns",
            "sa_dynamo carries out ON UPDATE only for a reference to the parent's key, which never "
            "changes in DynamoDB: reference the key, or drop onupdate and update the children yourself",
        )
    if fk.ondelete is None:
        return
    if fk.ondelete.upper() == "SET DEFAULT" and any(c.default is not None for c in fk.columns):
        _refuse(
            fk,
            "ondelete='SET DEFAULT' and a default= on its column",
            "SQL's SET DEFAULT takes the server-side default, which DynamoDB has not (SQLite sets "
            "NULL here): use ondelete='SET NULL', or set the value with the ORM",
        )
    probe = select(*key_schema(fk.table).columns).where(*_by_parent(fk))
    plan = probe.compile(dialect=dialect).record.plan
    if plan is None or plan.operation not in ("GetItem", "Query"):
        _refuse(
            fk,
            f"ondelete={fk.ondelete!r}, but {fk.table.name}.{fk.columns[0].name} is not the partition "
            "key of the table or of a global index, so every delete of a parent would scan the children",
            f"declare {fk.columns[0].name} with index=True (a global secondary index), or drop ondelete "
            "and let the ORM delete the children (relationship(cascade='all, delete-orphan'))",
        )


def _by_parent(fk: ForeignKeyConstraint) -> list[Any]:
    """The children's test: each FK column equal to the parent's value."""
    return [column == bindparam(_PARENT.format(i), type_=column.type) for i, column in enumerate(fk.columns)]


@dataclass(frozen=True)
class Action:
    """One foreign key's ON DELETE action: the statement that carries it out for one parent, and
    the parent's columns whose values it takes (as stored)."""

    kind: str
    statement: Any
    parents: tuple[Column, ...]
    described: str
    values: dict[str, Any]

    def carry_out(self, context: Any, parent: dict[Column, Any], options: dict[str, Any]) -> None:
        """The action for the parent row ``parent``; for RESTRICT and NO ACTION, the test."""
        given = {_PARENT.format(i): parent[c] for i, c in enumerate(self.parents)}
        if any(value is None for value in given.values()):
            return  # a NULL references no row
        result = context.root_connection.execute(
            self.statement, {**given, **self.values}, execution_options=options
        )
        if self.kind in ("RESTRICT", "NO ACTION") and result.first() is not None:
            raise IntegrityError(
                f"FOREIGN KEY constraint failed: {self.described} is ON DELETE {self.kind} and "
                "the row deleted has children; nothing was written. Delete or move the children "
                "first, or declare ondelete='CASCADE' or 'SET NULL'"
            )


def referenced(child: Table) -> list[tuple[str, str]]:
    """The tables ``child``'s ForeignKeys with ondelete reference, each with the FK described."""
    return [
        (fk.elements[0].target_fullname.rpartition(".")[0], _described(fk))
        for fk in child.foreign_key_constraints
        if fk.ondelete is not None
    ]


def actions(table: Table, dialect: Any) -> tuple[Action, ...]:
    """The ON DELETE actions of every FK of the table's MetaData that references ``table``."""
    found: list[Action] = []
    metadata = getattr(table, "metadata", None)  # a lightweight table() has none
    for child in metadata.tables.values() if metadata is not None else ():
        for fk in child.foreign_key_constraints:
            parents = _parent_columns(fk) if fk.ondelete is not None else None
            if parents is None or parents[0].table is not table:
                continue
            check(fk, dialect)
            kind = fk.ondelete.upper()
            where = _by_parent(fk)
            if kind in ("RESTRICT", "NO ACTION"):
                statement = select(*key_schema(child).columns).where(*where).limit(1)
                values = {}
            elif kind == "CASCADE":
                statement, values = delete(child).where(*where), {}
            else:  # SET NULL, SET DEFAULT without a default (SQLite's NULL, as check() allows)
                names = [_SET.format(i) for i in range(len(fk.columns))]
                statement = (
                    update(child)
                    .where(and_(*where))
                    .values({c: bindparam(n, type_=c.type) for c, n in zip(fk.columns, names, strict=True)})
                )
                values = dict.fromkeys(names)
            found.append(Action(kind, statement, parents, _described(fk), values))
    unknown = dialect.ondelete_parents.get(table.name, set()) - {action.described for action in found}
    if unknown:
        raise CompileError(
            f"a DELETE of {table.name!r} through a Table that does not know {', '.join(sorted(unknown))}, "
            "declared with ondelete on this engine: its actions would be skipped. Delete through the "
            "Table of the models (delete(parent_table) in the MetaData that declares the ForeignKey), "
            "not SQL text or a reflected Table"
        )
    return tuple(found)


def carry_out(
    context: Any,
    actions: tuple[Action, ...],
    parents: list[dict[Column, Any]],
    options: dict[str, Any],
    done: bool,
) -> None:
    """The actions for each parent row: RESTRICT before the parents are deleted (``done``
    False), the others after, so that a row that is its own child is found gone."""
    for action in actions:
        if (action.kind == "RESTRICT") != done:
            for parent in parents:
                action.carry_out(context, parent, options)
