"""A SELECT computed on the client over planned reads: joins (join_plan.py, fetches.py), the
WHERE across tables, GROUP BY with the aggregates and HAVING (aggregates.py), DISTINCT, and the
ORDER BY, OFFSET and LIMIT over the result. Every test is the operators' own (operators.py,
through the predicate of compiler/predicate.py); every order is SQL's (dbapi/ordering.py).

The rows are held while they are joined and grouped: ``dynamodb_client_sort``, when given,
caps how many (more is an error, never a shorter result)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import CompileError
from sqlalchemy.sql import elements, visitors

from ...dbapi.errors import OperationalError
from ...dbapi.ordering import sort_rows
from ...exc import cannot_express, refuse
from ...plan import Plan
from ...sqlalchemy_private import (
    distinct_on,
    expanded_parameters,
    group_by_clauses,
    having_criteria,
    is_distinct,
    label_reference,
    order_by_clauses,
    selected_elements,
    where_criteria,
)
from ..compiler.normal_form import terms_of
from ..compiler.predicate import Resolve, Test, operand_of, values_of
from ..key_schema import key_schema
from ..operators import MISSING, canonical
from .aggregates import Operand, aggregate_of, groups_of, is_aggregate
from .caps import rows_held
from .fetches import Fetch, Read
from .join_plan import Planner, test_of
from .semi_joins import SemiDriver, SemiJoin, semi_join, semi_term, split
from .sides import Reader, sides_of
from .single_read import named, order_entry
from .steps import program_text


@dataclass(frozen=True)
class SelectProgram:
    """What the client runs: the driving read, the fetches, and the work over the rows.

    ``columns``: the select list's operands, then those of ORDER BY entries it lacks;
    ``order``: (column, descending, nulls first) as dbapi/ordering.py takes it."""

    names: tuple[str, ...]
    sides: int
    driver: Read
    fetches: tuple[Fetch, ...]
    after: Test | None
    grouping: tuple[Operand, ...] | None
    having: Test | None
    columns: tuple[Operand, ...]
    distinct: bool
    order: tuple[tuple[int, bool, bool | None], ...]
    limit: str | None
    offset: str | None
    semis: tuple[SemiJoin, ...] = ()

    def run(self, context: Any, cursor: Any) -> None:
        parameters = context.compiled_parameters[0]
        values = values_of(context.compiled, parameters, expanded_parameters(context))
        found = [semi.values(context) for semi in self.semis]  # each subquery read once, first
        driving = self.driver.side
        if isinstance(self.driver, SemiDriver):
            items = self.driver.items(context, found[self.driver.semi][0], values)
        else:
            items = self.driver.items(context)
        rows: list[Any] = [[item if n == driving else {} for n in range(self.sides)] for item in items]
        for fetch in self.fetches:
            rows = fetch.join(context, rows, values)
        for semi, its in zip(self.semis, found, strict=True):
            test = semi.test(its)
            rows = [row for row in rows if test(row, values)]
        if self.after is not None:
            rows = [row for row in rows if self.after(row, values)]
        most = rows_held(context.options_in_force)
        if most is not None and len(rows) > most:
            raise OperationalError(
                f"the rows joined on the client are more than dynamodb_client_sort={most} allows: raise "
                "the limit or narrow the WHERE"
            )
        if self.grouping is not None:
            rows = groups_of(rows, list(self.grouping), values, whole=not self.grouping)
            if self.having is not None:
                rows = [group for group in rows if self.having(group, values)]
        out = [tuple(_plain(column(row, values)) for column in self.columns) for row in rows]
        width = len(self.names)
        if self.distinct:
            seen: dict[tuple, tuple] = {}
            for row in out:
                seen.setdefault(tuple(canonical(v) for v in row[:width]), row)
            out = list(seen.values())
        out = sort_rows(out, self.order)
        start = max(int(parameters[self.offset]), 0) if self.offset is not None else 0
        limit = int(parameters[self.limit]) if self.limit is not None else -1
        out = out[start : start + limit if limit >= 0 else None]
        cursor.computed(self.names, [row[:width] for row in out])


def _plain(value: Any) -> Any:
    return None if value is MISSING else value


def select_program(
    compiler: Any, select: Any, compile_state: Any, froms: list[Any], limit: str | None, offset: str | None
) -> tuple[str, Plan, SelectProgram]:
    """The text, plan and program of a SELECT the client computes."""
    if distinct_on(select):
        refuse("DISTINCT ON", "select DISTINCT over the whole select list, or group by the columns")
    reader = Reader(sides_of(froms))
    selected = selected_elements(compile_state)
    semi_found, rest = split(where_criteria(select))
    semi_terms = [semi_term(kind, left, inner, reader) for kind, left, inner in semi_found]
    where = terms_of(_outer_keys_nullable(rest, reader))
    group_by = [named(label_reference(c), selected) for c in group_by_clauses(select)]
    having = terms_of(having_criteria(select))
    orders = [order_entry(clause, selected) for clause in order_by_clauses(select)]
    clauses = [*selected, *where, *group_by, *having, *(element for element, _, _ in orders)]
    clauses += [term for side in reader.sides for term in side.on]
    for bind in (b for c in clauses for b in visitors.iterate(c) if isinstance(b, elements.BindParameter)):
        if bind.key not in compiler.binds:  # its value, each execution's, is in the parameters
            compiler.process(bind)
    reader.columns(clauses)  # every column of a table in the FROM, or refused
    # what the client reads of each side (the terms it tests are added by the planner)
    needed: dict[int, list[str]] = defaultdict(list)
    outer = [clause for term in semi_terms for clause in term.outer]
    for side, name in reader.columns([*selected, *group_by, *having, *(e for e, _, _ in orders), *outer]):
        if name not in needed[side.number]:
            needed[side.number].append(name)
    by_row = _row_resolver(reader)
    semis = tuple(
        semi_join(compiler, term, tuple(_operand(c, by_row, "this IN's left side") for c in term.outer), n)
        for n, term in enumerate(semi_terms)
    )
    join = Planner(compiler, reader, needed, where, by_row, _keyed_semis(semi_terms, reader)).plan()
    aggregated = bool(group_by) or any(
        _aggregates(c) for c in [*selected, *having, *(e for e, _, _ in orders)]
    )
    resolve = _group_resolver(reader, group_by, by_row) if aggregated else by_row
    columns = [_operand(c, resolve, "this select list entry") for c in selected]
    order = []
    for element, descending, nulls_first in orders:
        position = next((i for i, c in enumerate(selected) if _same(element, c)), None)
        if position is None:
            if is_distinct(select):
                refuse("ORDER BY a column not selected beside DISTINCT", "select the columns you order by")
            position = len(columns)
            columns.append(_operand(element, resolve, "this ORDER BY entry"))
        order.append((position, descending, nulls_first))
    program = SelectProgram(
        names=tuple(getattr(c, "name", None) or f"column_{i}" for i, c in enumerate(selected)),
        sides=len(reader.sides),
        driver=join.driver,
        fetches=join.fetches,
        after=test_of(join.after, by_row, "this WHERE across tables"),
        grouping=tuple(_operand(c, by_row, "this GROUP BY entry") for c in group_by) if aggregated else None,
        having=test_of(having, resolve, "this HAVING"),
        columns=tuple(columns),
        distinct=is_distinct(select),
        order=tuple(order),
        limit=limit,
        offset=offset,
        semis=semis,
    )
    steps = [*(s.read for s in semis), join.driver.step, *(f.read.step for f in join.fetches)]
    plan = Plan(
        "Client",
        reader.sides[join.driver.side].table.name,
        steps=tuple(s.plan for s in steps),
        client=_described(program, reader, bool(group_by), aggregated),
    )
    return program_text(steps), plan, program


def _keyed_semis(terms: list[Any], reader: Reader) -> dict[int, list[tuple[int, dict[str, tuple[int, str]]]]]:
    """For each side, the IN and EXISTS semi-joins that compare only its plain columns: each
    (its number, the columns with the place of their value in the row of its values) that may
    fetch the side by key (fetches.fetch_of) when its own read would be a scan."""
    found: dict[int, list[tuple[int, dict[str, tuple[int, str]]]]] = defaultdict(list)
    pseudo = len(reader.sides)  # the values stand as one more side of the row
    for number, term in enumerate(terms):
        sides = {reader.side_of(c) for c in term.outer}
        plain_columns = all(isinstance(c, elements.ColumnClause) and not c.is_literal for c in term.outer)
        if term.kind in ("in", "exists") and len(sides) == 1 and None not in sides and plain_columns:
            by = {c.name: (pseudo, str(i)) for i, c in enumerate(term.outer)}
            found[next(iter(sides)).number].append((number, by))
    return found


def _outer_keys_nullable(criteria: Any, reader: Reader) -> list[Any]:
    """The WHERE with each key column of a LEFT OUTER JOIN's right side as a plain column: its
    NULL is the join's (no item matched), so ``key IS NULL`` is a test of the joined row, not
    the condition that matches no item it is of a table read alone (normal_form.condition)."""

    def unpinned(element: Any) -> Any:
        if isinstance(element, elements.ColumnClause) and getattr(element, "primary_key", False):
            side = reader.side_of(element)
            if side is not None and side.join == "left":
                return elements.ColumnClause(element.name, element.type, _selectable=element.table)
        return None

    return [visitors.replacement_traverse(c, {}, unpinned) for c in criteria]


def _same(element: Any, selected: Any) -> bool:
    inner = selected.element if isinstance(selected, elements.Label) else selected
    return element is selected or element.compare(inner)


def _aggregates(clause: Any) -> bool:
    return any(is_aggregate(e) for e in visitors.iterate(clause))


def _operand(clause: Any, resolve: Resolve, what: str) -> Operand:
    try:
        return operand_of(clause, resolve)
    except NotImplementedError:
        raise CompileError(
            cannot_express(
                what, "select columns of the joined tables and the aggregates count, sum, min, max, avg"
            )
        ) from None


def _row_resolver(reader: Reader) -> Resolve:
    """A joined row's operands: each column read from its side's item."""

    def resolve(clause: Any) -> Any:
        if not isinstance(clause, elements.ColumnClause):
            return None
        _not_literal(clause)
        side = reader.side_of(clause)
        if side is None:
            return None
        number, name = side.number, clause.name
        return lambda row, values: row[number].get(name, MISSING)

    return resolve


def _not_literal(column: Any) -> None:
    """A literal column (``*``, a name written as text) is no attribute of a table: the client
    could only read it as missing, so it is refused."""
    if column.is_literal:
        refuse(
            f"the literal column {column.name} in a SELECT computed on the client",
            "name the columns of the tables (select(table) lists them all)",
        )


def _group_resolver(reader: Reader, group_by: list[Any], by_row: Resolve) -> Resolve:
    """A group's operands: a GROUP BY expression's value, an aggregate over the group's rows, or
    a column of a table whose whole key is grouped (one value in the group, as PostgreSQL
    allows); any other column is refused."""
    grouped = {
        side.number
        for side in reader.sides
        if all(any(_same(side_column, g) for g in group_by) for side_column in _key_columns(side))
    }

    def resolve(clause: Any) -> Any:
        while isinstance(clause, elements.Label):
            clause = clause.element
        for position, entry in enumerate(group_by):
            if _same(clause, entry):
                return lambda group, values: group.key[position]
        if is_aggregate(clause):
            aggregate = aggregate_of(clause, lambda argument: operand_of(argument, by_row))
            return lambda group, values: group.value(aggregate, values)
        if isinstance(clause, elements.ColumnClause):
            _not_literal(clause)
            side = reader.side_of(clause)
            if side is None or side.number not in grouped:
                refuse(
                    f"the column {clause.name} neither grouped nor aggregated",
                    f"add it to GROUP BY, or aggregate it (min({clause.name}), count({clause.name}))",
                )
            number, name = side.number, clause.name
            return lambda group, values: group.rows[0][number].get(name, MISSING) if group.rows else MISSING
        return None

    return resolve


def _key_columns(side: Any) -> list[Any]:
    """The columns of ``side``'s key as the statement names them (an alias's own)."""
    names = [c.name for c in key_schema(side.table).columns]
    source = side.source
    return [next(c for c in source.columns if c.name == name) for name in names]


def _described(program: SelectProgram, reader: Reader, grouped: bool, aggregated: bool) -> str:
    """What the client computes, for explain() and the log."""
    kinds = {"inner": "JOIN", "left": "LEFT OUTER JOIN"}
    parts = [f"{semi.kind.upper()} (the subquery's rows)" for semi in program.semis]
    parts += [f"{kinds[fetch.kind]} {reader.sides[fetch.read.side].name}" for fetch in program.fetches]
    if program.after is not None:
        parts.append("the WHERE across tables")
    if grouped:
        parts.append("GROUP BY")
    elif aggregated:
        parts.append("the aggregates over every row")
    if program.having is not None:
        parts.append("HAVING")
    if program.distinct:
        parts.append("DISTINCT")
    if program.order:
        parts.append("ORDER BY")
    if program.offset is not None:
        parts.append("OFFSET")
    if program.limit is not None:
        parts.append("LIMIT")
    held = "the rows the reads return are held (dynamodb_client_sort caps them when given)"
    return "; ".join([*parts, held])
