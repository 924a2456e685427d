"""UPDATE and DELETE by any WHERE: a planned read of the keys of the items the WHERE matches
(under the scan policy, laid over the transaction's writes), then each item written by its key
with the statement's WHERE as its condition. A change between the read and the write fails the
condition: in a transaction the commit fails (StaleDataError), never a lost update; in
AUTOCOMMIT that item is not written and not counted, as if the statement had run after the
change. The writes are one executemany: a transaction holds them for its one ExecuteTransaction,
AUTOCOMMIT sends them 25 a BatchExecuteStatement with its report of what was applied."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, select, type_coerce, update
from sqlalchemy.sql import elements, operators, visitors
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.sqltypes import NullType

from ...plan import Plan
from ...sqlalchemy_private import where_criteria
from ..compiler.access_path import attribute_names
from ..compiler.normal_form import terms_of
from ..key_schema import key_schema
from ..options import MATCHED
from . import foreign_keys
from .semi_joins import without_semi_joins
from .steps import Step, forwarded, program_text, run, step

_KEY, _VALUE = "sa_dynamo_key_{}", "sa_dynamo_value_{}"


@dataclass(frozen=True)
class KeyedWrites:
    """The read of the matching keys, the write of one key, the names its key values take, and
    (an UPDATE's) the name each value takes with the name it has in the computed statement."""

    read: Step
    write: Step
    key_names: tuple[str, ...]
    values: tuple[tuple[str, str], ...]
    actions: tuple[foreign_keys.Action, ...] = ()
    referenced: tuple[Any, ...] = ()

    def run(self, context: Any, cursor: Any) -> None:
        """Every row of the execution (an executemany's too): its keys read, then written; with
        foreign keys' actions, the statement is one (a failure leaves nothing written)."""
        if not self.actions:
            cursor.computed(None, [], self._written(context))
            return
        with cursor.connection.all_or_nothing("a DELETE with its foreign keys' ON DELETE actions"):
            cursor.computed(None, [], self._written(context))

    def _written(self, context: Any) -> int:
        counts = []
        for row, parameters in enumerate(context.compiled_parameters):
            read = run(context, self.read, row).all()
            if read:
                width = len(self.key_names)
                parents = [dict(zip(self.referenced, found[width:], strict=True)) for found in read]
                options = forwarded(context)
                foreign_keys.carry_out(context, self.actions, parents, options, done=False)
                values = {fresh: parameters[given] for fresh, given in self.values}
                fresh = [
                    {**values, **dict(zip(self.key_names, found[:width], strict=True))} for found in read
                ]
                counts.append(run(context, self.write, row, fresh, **{MATCHED: True}).rowcount)
                foreign_keys.carry_out(context, self.actions, parents, options, done=True)
        return -1 if any(c < 0 for c in counts) else sum(counts)


def by_read_key(statement: Any) -> bool:
    """Whether ``statement`` is the write by key of an UPDATE/DELETE by a read: its foreign keys'
    actions are the computed statement's to carry out."""
    return (
        any(
            isinstance(bind, elements.BindParameter) and bind.key == _KEY.format(0)
            for bind in visitors.iterate(statement.whereclause)
        )
        if statement.whereclause is not None
        else False
    )


def keyed_writes(
    compiler: Any,
    statement: Any,
    table: Table,
    written: list[tuple[Any, str]],
    actions: tuple[foreign_keys.Action, ...] = (),
) -> tuple[str, Plan, KeyedWrites]:
    """The text, plan and program of an UPDATE or DELETE whose WHERE does not name one item by
    its whole key, or of a DELETE with foreign keys' ``actions``; ``written``: an UPDATE's
    columns, each with its value's parameter name."""
    kind = "UPDATE" if compiler.isupdate else "DELETE"
    keys = key_schema(table).columns
    referenced = tuple(dict.fromkeys(c for action in actions for c in action.parents))
    criteria = where_criteria(statement)
    names = tuple(_KEY.format(i) for i in range(len(keys)))
    value_names = tuple(_VALUE.format(i) for i in range(len(written)))
    # the keys as stored, sent back as they came (no type's processing either way)
    # and the columns foreign keys reference (a key too), typed: the children's tests take them
    read = select(*(type_coerce(column, NullType()) for column in keys), *referenced).where(*criteria)
    by_key = [
        elements.BinaryExpression(
            column, bindparam(name, type_=NullType()), operators.eq, negate=operators.ne
        )
        for column, name in zip(keys, names, strict=True)
    ]
    # a key never changes: what the WHERE says of the key alone, the read has decided for good
    key_names = {column.name for column in keys}
    condition = [
        term for term in terms_of(without_semi_joins(criteria)) if not attribute_names([term]) <= key_names
    ]
    if kind == "UPDATE":
        # each value processed by its column's type, as the statement's own would be
        values = {
            column: bindparam(name, type_=column.type)
            for (column, _), name in zip(written, value_names, strict=True)
        }
        write = update(table).where(*by_key, *condition).values(values)
    else:
        write = delete(table).where(*by_key, *condition)
    steps = [
        step(compiler, read, "the keys of the items the WHERE matches"),
        step(
            compiler,
            write,
            f"one {kind} for each key read, the WHERE its condition",
            frozenset((*names, *value_names)),
        ),
    ]
    client = "the rowcount: the items written (in a transaction, one action each in the commit)"
    if actions:
        client += "; then for each item deleted, ON DELETE " + ", ".join(
            f"{action.kind} of {action.described}" for action in actions
        )
    plan = Plan(
        "UpdateItem" if kind == "UPDATE" else "DeleteItem",
        table.name,
        steps=tuple(s.plan for s in steps),
        client=client,
    )
    given = tuple(zip(value_names, (name for _, name in written), strict=True))
    return program_text(steps), plan, KeyedWrites(*steps, names, given, actions, referenced)
