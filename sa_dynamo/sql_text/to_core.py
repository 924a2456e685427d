"""A sqlglot tree -> the SQLAlchemy Core statement it means, against the live tables.

No rules of DynamoDB live here: every SQL construct becomes its Core counterpart (attributes and
document paths of the statement's table, values as bind parameters, conditions, clauses), and
the one compiler decides what DynamoDB can do with it (key conditions, guards, limits, refusals).
What has no Core counterpart at all (a join's second table, a subquery) becomes a Core construct
the compiler refuses with its own words. The values and conditions are expressions.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.types import NullType
from sqlglot import exp

from ..constructs import use_index
from ..dbapi.statement import result_key
from .expressions import Expressions, refuse


def _subquery(*_: Any) -> Any:
    # Only its presence matters: the compiler refuses a SELECT that is not a statement.
    return sa.select(sa.literal_column("*")).select_from(sa.table("subquery")).scalar_subquery()


# Clauses sqlglot parses that no Core statement has, with the compiler's words for the nearest.
_REFUSED = {
    **dict.fromkeys(
        ("from", "using", "tables"), ("a multi-table UPDATE/DELETE", "update or delete each item by its key")
    ),
    "conflict": (
        "INSERT ... ON CONFLICT",
        "INSERT fails on an existing key; use sa_dynamo.upsert() to overwrite",
    ),
    "laterals": ("LATERAL", "query one table"),
    "with": ("a common table expression (WITH)", "run the inner query separately"),
}
# Each clause built onto a statement, in this order: (Builder, statement, clause) -> statement.
_CLAUSES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "where": lambda self, statement, node: statement.where(self._condition(node.this)),
    "group": lambda self, statement, node: statement.group_by(*map(self._value, node.expressions)),
    "having": lambda self, statement, node: statement.having(self._condition(node.this)),
    "distinct": lambda self, statement, node: statement.distinct(),
    "locks": lambda self, statement, node: statement.with_for_update(),
    "order": lambda self, statement, node: statement.order_by(*map(self._ordered, node.expressions)),
    "limit": lambda self, statement, node: statement.limit(self._value(node.expression)),
    "offset": lambda self, statement, node: statement.offset(self._value(node.expression)),
    # Only its presence counts: the compiler refuses RETURNING on INSERT and UPDATE.
    "returning": lambda self, statement, node: statement.returning(*self._table.primary_key.columns),
}
_SELECT_CLAUSES = ("where", "group", "having", "distinct", "locks", "order", "limit", "offset")


def _check_clauses(node: exp.Expression, *handled: str) -> None:
    """Refuse a clause this module does not build: nothing the text says is dropped."""
    for key, value in node.args.items():
        if value and key not in handled:
            name = key.rstrip("_")
            refuse(*_REFUSED.get(name, (f"the clause {name.upper()}", "remove it")))


class ResultAttributes(NamedTuple):
    """The result columns of a SELECT that are attributes of its table as they are stored, by
    result name (``star``: every column of ``SELECT *``), so that the columns the engine knows
    the types of come back typed as declared; the table's columns are untyped here."""

    table: str
    attributes: dict[str, str]
    star: bool

    def attribute(self, column: str) -> str | None:
        """The attribute a result column holds, if it holds one whole."""
        return column if self.star and column not in self.attributes else self.attributes.get(column)


class Builder(Expressions):
    """Builds one statement, one table entry per kind of node. ``described(name)`` gives the Table
    the table's live key schema and indexes make; ``binds`` are the bind parameters a text()
    declared (their types, expanding lists); ``result_types`` the column types text().columns()
    gave the result."""

    def __init__(self, statement: exp.Expression, described: Callable, binds: Mapping, result_types: Mapping):
        self._statement = statement
        self._described = described
        self._binds = binds
        self._result_types = result_types
        self._table: sa.Table | None = None
        self._aliases: dict[str, exp.Expression] = {}  # a SELECT's select-list names
        self.lists: dict[str, tuple[str, ...]] = {}  # an IN list's parameter -> its items' parameters
        self.literals: dict[str, Any] = {}  # a literal's parameter -> the value the text wrote
        self.results: ResultAttributes | None = None  # what a SELECT's result columns are
        placeholders = list(statement.find_all(exp.Placeholder))
        # names the text gives its parameters: the ones made here must differ from them
        self._taken = {p.this for p in placeholders if p.this}
        # where each ``?`` starts in the text: parameters are positional, and a tree has no order
        self._positions = sorted(p.meta["start"] for p in placeholders if not p.this)

    def build(self) -> Any:
        """The Core statement; ``lists`` and ``literals`` then hold what its parameters' values
        are made of besides the text's own (see Translated)."""
        node = self._statement
        if isinstance(node, exp.SetOperation):
            union = sa.union(self._select(node.this), self._select(node.expression))
            self.results = None  # its columns are two tables' (and the types of two)
            return union
        if isinstance(node, (exp.Select, exp.Insert, exp.Update, exp.Delete)):
            statement = getattr(self, f"_{node.key}")(node)  # _select, _insert, _update or _delete
            if not isinstance(node, exp.Select):
                self.results = None
            return statement
        refuse(f"the statement {node.sql()}", "send SELECT, INSERT, UPDATE or DELETE")

    def _with(self, statement: Any, node: exp.Expression, *clauses: str) -> Any:
        """``statement`` with those of ``clauses`` that ``node`` has built on."""
        for key, build in _CLAUSES.items():
            if key in clauses and node.args.get(key):
                statement = build(self, statement, node.args[key])
        return statement

    def _source(self, node: exp.Expression | None, writing: bool) -> str | None:
        """Make the statement's table current; the index a SELECT names (``"t"."gsi1"``)."""
        if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
            refuse(
                "a SELECT without a table" if node is None else node.sql(), "select from exactly one table"
            )
        if node.alias:
            refuse(f"an alias ({node.alias})", "PartiQL has no aliases; use the table's own name")
        if node.catalog:
            refuse(f"the three-part name {node.sql()}", "name a table, or a table and one of its indexes")
        name, index = (node.db, node.name) if node.db else (node.name, None)
        if index is not None and writing:
            refuse(f"a write to the index {name}.{index}", "write to the table itself")
        # a copy of its own, which the statement's other attributes join; untyped, so that values
        # go to the driver as given, as with exec_driver_sql before (begins_with takes % literally)
        self._table = self._described(name).to_metadata(sa.MetaData())
        for column in self._table.c:
            column.type = NullType()
        return index

    def _select(self, node: exp.Expression) -> Any:
        if not isinstance(node, exp.Select):
            return _subquery()
        _check_clauses(node, "expressions", "from_", "joins", *_SELECT_CLAUSES)
        source = node.args.get("from_")
        index = self._source(source.this if source is not None else None, writing=False)
        # ORDER BY a name the select list gives (SQL's first meaning of the name): what it names
        self._aliases = {e.alias: e.unalias() for e in node.expressions if isinstance(e, exp.Alias)}
        self.results = ResultAttributes(self._table.name, {}, False)
        statement = sa.select(*map(self._selected, node.expressions)).select_from(self._table)
        for join in node.args.get("joins") or ():
            statement = statement.join_from(self._table, sa.table(join.this.name), sa.true())
        statement = self._with(statement, node, *_SELECT_CLAUSES)
        return statement if index is None else statement.options(use_index(index))

    def _selected(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Star):
            self.results = self.results._replace(star=True)
            return sa.literal_column("*")
        value, name = self._value(node.unalias()), node.alias or self._result_name(node)
        if name in self._result_types:
            value = sa.type_coerce(value, self._result_types[name])
        elif isinstance(value, sa.Column) and value.table is self._table:
            self.results.attributes[name or value.name] = value.name
        if name is None or (isinstance(value, sa.Column) and value.name == name):
            return value
        return value.label(name)

    def _result_name(self, node: exp.Expression) -> str | None:
        """The key DynamoDB gives a selected path (partiql-reference.md §4), as the driver names
        it (dbapi/statement.py)."""
        return result_key(node.sql()) if isinstance(node, (exp.Column, exp.Dot, exp.Bracket)) else None

    def _ordered(self, node: exp.Ordered) -> Any:
        named = node.this
        if isinstance(named, exp.Column) and len(named.parts) == 1 and named.name in self._aliases:
            named = self._aliases[named.name]
        column, descending = self._value(named), node.args.get("desc")
        ordered = column if descending is None else column.desc() if descending else column.asc()
        # sqlglot gives every term its place of NULL, SQL's default (first ascending) unless
        # NULLS FIRST or LAST says otherwise: only a place that differs is written
        nulls_first = node.args.get("nulls_first")
        if nulls_first is None or nulls_first is not bool(descending):
            return ordered
        return ordered.nulls_first() if nulls_first else ordered.nulls_last()

    def _values(self, pairs: list[tuple[str, exp.Expression]]) -> dict[sa.Column, Any]:
        """Values written to attributes; NULL is a parameter holding None (attribute absent)."""
        return {
            self._column(name): sa.bindparam(self._fresh("null"), None, type_=self._column(name).type)
            if isinstance(node, exp.Null)
            else self._value(node)
            for name, node in pairs
        }

    def _insert(self, node: exp.Insert) -> Any:
        _check_clauses(node, "this", "expression", "returning")
        target, source = node.this, node.expression
        self._source(target.this if isinstance(target, exp.Schema) else target, writing=True)
        if isinstance(source, (exp.Select, exp.SetOperation)):
            return sa.insert(self._table).from_select([], self._select(source))
        if not isinstance(source, exp.Values) or len(source.expressions) != 1:
            refuse(
                "a multi-row VALUES clause" if isinstance(source, exp.Values) else "an INSERT without VALUES",
                "insert one row per statement and pass the rows to executemany()",
            )
        values = source.expressions[0].expressions
        if isinstance(target, exp.Schema):  # INSERT INTO t (a, b) VALUES (1, 2)
            names = [column.name for column in target.expressions]
            if len(names) != len(values):
                refuse(
                    f"an INSERT of {len(values)} values into {len(names)} columns",
                    "give one value per column",
                )
            pairs = list(zip(names, values, strict=True))
        elif len(values) == 1 and isinstance(values[0], exp.Struct):  # an item: {'a': 1, 'b': 2}
            pairs = [
                (e.this.name, e.expression) for e in values[0].expressions if isinstance(e, exp.PropertyEQ)
            ]
            if len(pairs) != len(values[0].expressions):
                refuse("an item entry that is not 'name': value", "write {'name': value, ...}")
        else:
            refuse("an INSERT without a column list", "name the columns: INSERT INTO t (a, b) VALUES (?, ?)")
        return self._with(sa.insert(self._table).values(self._values(pairs)), node, "returning")

    def _update(self, node: exp.Update) -> Any:
        _check_clauses(node, "this", "expressions", "where", "returning")
        self._source(node.this, writing=True)
        for assignment in node.expressions:
            target = assignment.this
            if not (
                isinstance(assignment, exp.EQ) and isinstance(target, exp.Column) and len(target.parts) == 1
            ):
                refuse(
                    f"the assignment {assignment.sql()}", "write SET attribute = value for a whole attribute"
                )
        values = self._values([(a.this.name, a.expression) for a in node.expressions])
        return self._with(sa.update(self._table).values(values), node, "where", "returning")

    def _delete(self, node: exp.Delete) -> Any:
        _check_clauses(node, "this", "where", "returning")
        returning = node.args.get("returning")
        if returning is not None and [e.name for e in returning.expressions] != ["ALL OLD *"]:
            refuse(f"{returning.sql()} on DELETE", "remove it; the dialect counts the deleted rows itself")
        self._source(node.this, writing=True)
        return self._with(sa.delete(self._table), node, "where")
