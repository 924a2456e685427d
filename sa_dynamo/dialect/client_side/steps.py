"""The statements a computation on the client sends (a join's reads, an UPDATE's read of keys
and its writes by key): each an ordinary statement of one table, run through the connection the
computed statement runs on, so that it is compiled, planned, guarded by the scan policy, laid
over the transaction's writes and shown by echo like any other. Its values are the computed
statement's own for this execution."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import and_, bindparam, not_, or_
from sqlalchemy.sql import elements, operators, visitors

from ...plan import Plan
from ...sqlalchemy_private import core_only, expanded_parameters
from ..compiler.normal_form import equals
from ..compiler.predicate import Values, values_of
from ..options import EXPLAIN, SCAN_FIX

_POSTCOMPILE = re.compile(r"__\[POSTCOMPILE_\S+?\]")
# the options a step takes from the computed statement's (dynamodb_index names one table's index)
_FORWARDED = (
    "dynamodb_scan",
    "dynamodb_consistent_read",
    "dynamodb_page_size",
    "dynamodb_client_sort",
    SCAN_FIX,
)


@dataclass(frozen=True)
class Step:
    """One statement a computation sends. ``binds``: the computed statement's bind parameters
    whose values it takes (by their keys); ``text``: its PartiQL, an IN list shown as ``?, ...``."""

    statement: Any
    binds: tuple[Any, ...]
    plan: Plan
    text: str

    @property
    def lists(self) -> bool:
        """Whether it holds an IN list, which an executemany cannot take (see written_out)."""
        return any(bind.expanding for bind in self.binds)


def step(compiler: Any, statement: Any, role: str, fresh: frozenset[str] = frozenset()) -> Step:
    """``statement`` as a step of what ``compiler`` compiles; ``role`` says what it is for (the
    plan's note); ``fresh`` names the parameters the computation gives it (keys read). Every
    other parameter is the computed statement's: the compiler registers it, so that each
    execution has its value."""
    statement = core_only(statement)
    compiled = statement.compile(dialect=compiler.dialect)
    binds = tuple(
        dict.fromkeys(
            b
            for b in visitors.iterate(statement)
            if isinstance(b, elements.BindParameter) and b.key not in fresh
        )
    )
    for bind in binds:
        if bind.key not in compiler.binds:
            compiler.process(bind)
    text = _POSTCOMPILE.sub("?, ...", compiled.string)
    plan = compiled.record.plan
    noted = "; ".join(filter(None, (role, plan.reason)))
    return Step(statement, binds, replace(plan.finished(text, lambda _: "?, ..."), reason=noted), text)


def run(
    context: Any, step: Step, row: int = 0, rows: list[dict[str, Any]] | None = None, **options: Any
) -> Any:
    """Execute ``step`` with the values of row ``row`` of the computed statement's execution
    (``rows``: an executemany, each with its own fresh values); its result."""
    values = values_of(
        context.compiled, context.compiled_parameters[row], expanded_parameters(context), False
    )
    # SQLAlchemy runs a list of one row's values as one execution, which takes IN lists
    statement, listing = step.statement, rows is not None and len(rows) > 1 and step.lists
    given = {bind.key: values(bind) for bind in step.binds if not (listing and bind.expanding)}
    if listing:
        statement, listed = written_out(statement, values)
        given.update(listed)
    parameters: Any = [{**given, **fresh} for fresh in rows] if rows is not None else given
    return context.root_connection.execute(
        statement, parameters, execution_options={**forwarded(context), **options}
    )


def forwarded(context: Any) -> dict[str, Any]:
    """The options a statement the computation sends takes from the computed statement's."""
    return {name: value for name, value in context.options_in_force.items() if name in _FORWARDED}


def written_out(statement: Any, values: Values) -> tuple[Any, dict[str, Any]]:
    """``statement`` with each IN list written out as this execution's values, ``x = ? OR x = ?``
    (NOT IN as its negation: the same in SQL's three-valued logic), for an executemany, which
    takes no IN list; and the values of the parameters the lists became."""
    given: dict[str, Any] = {}

    def replace_list(element: Any) -> Any:
        if isinstance(element, elements.BindParameter) and not element.expanding:
            # kept, not cloned: a clone of an anonymous parameter takes a new key, which the
            # values given by key would miss, and it would carry the value it was compiled with
            return element
        right = getattr(element, "right", None)
        right = right.element if isinstance(right, elements.Grouping) else right
        if not (
            isinstance(element, elements.BinaryExpression)
            and element.operator in (operators.in_op, operators.not_in_op)
            and isinstance(right, elements.BindParameter)
            and right.expanding
        ):
            return None
        tupled = isinstance(element.left, elements.Tuple)
        columns = list(element.left.clauses) if tupled else [element.left]
        types = right.type.types if tupled else [right.type]
        alternatives = []
        for value in values(right):
            parts = []
            for column, type_, part in zip(columns, types, value if tupled else (value,), strict=True):
                name = f"sa_dynamo_listed_{len(given)}"
                given[name] = part
                parts.append(equals(column, bindparam(name, type_=type_)))
            alternatives.append(and_(*parts))
        either = or_(*alternatives)
        return either if element.operator is operators.in_op else not_(either)

    return visitors.replacement_traverse(statement, {}, replace_list), given


def program_text(steps: list[Step]) -> str:
    """The text of a computed statement: its steps' PartiQL, one a line, in order."""
    return ";\n".join(s.text for s in steps)


def computed(cursor: Any, context: Any) -> bool:
    """Run the statement the execution computes on the client, if it is one: its steps through
    the connection, its result handed to the driver's ``cursor``. explain() runs none."""
    record = getattr(getattr(context, "compiled", None), "record", None)
    program = getattr(record, "program", None)
    if program is None:
        return False
    if context.execution_options.get(EXPLAIN) is not None:
        cursor.computed(getattr(program, "names", None), [], 0)
    else:
        program.run(context, cursor)
    return True
