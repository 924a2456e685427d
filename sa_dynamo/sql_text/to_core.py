"""A sqlglot tree -> the SQLAlchemy Core statement it means, against the live tables.

No rules of DynamoDB live here: every SQL construct becomes its Core counterpart, and the one
compiler decides what DynamoDB can do with it (key conditions, guards, limits, refusals). What
has no Core counterpart at all (a join's second table, a subquery) becomes a Core construct the
compiler refuses with its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from sqlalchemy import (
    MetaData,
    Table,
    bindparam,
    delete,
    insert,
    literal_column,
    select,
    table,
    true,
    type_coerce,
    union,
    update,
)
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.types import NullType
from sqlglot import exp

from ..constructs import use_index
from .expressions import Argument, Column, Expressions, refuse
from .parser import Parsed


class CoreStatement(NamedTuple):
    statement: Any  # a Core select/insert/update/delete
    arguments: dict[str, Argument]  # bind parameter name -> where its value comes from


_SELECT_CLAUSES = (
    "expressions",
    "from_",
    "where",
    "order",
    "limit",
    "offset",
    "group",
    "having",
    "distinct",
    "joins",
    "locks",
    "with_",
)
# Clauses sqlglot parses that no Core statement has, with the compiler's words for the nearest.
_CLAUSES = {
    "from": ("a multi-table UPDATE/DELETE", "update or delete each item by its key"),
    "using": ("a multi-table UPDATE/DELETE", "update or delete each item by its key"),
    "tables": ("a multi-table UPDATE/DELETE", "update or delete each item by its key"),
    "conflict": (
        "INSERT ... ON CONFLICT",
        "INSERT fails on an existing key; use sa_dynamo.upsert() to overwrite",
    ),
    "laterals": ("LATERAL", "query one table"),
}


def _check_clauses(node: exp.Expression, *handled: str) -> None:
    """Refuse a clause this module does not build: nothing the text says is dropped."""
    for key, value in node.args.items():
        if value and key not in handled:
            name = key.rstrip("_")
            what, instead = _CLAUSES.get(name, (f"the clause {name.upper()}", "remove it"))
            refuse(what, instead)


class Builder(Expressions):
    """Builds one statement. ``described(name)`` gives the Table the table's live key schema and
    indexes make; ``result_types`` the column types text().columns() gave the result."""

    def __init__(
        self,
        parsed: Parsed,
        described: Callable[[str], Table],
        binds: Mapping[str, BindParameter] | None = None,
        result_types: Mapping[str, Any] | None = None,
    ):
        super().__init__(parsed, binds)
        self._parsed = parsed
        self._described = described
        self._result_types = result_types or {}

    def build(self) -> CoreStatement:
        node = self._parsed.statement
        if isinstance(node, exp.Select):
            statement = self._select(node)
        elif isinstance(node, exp.SetOperation):
            statement = union(self._select(node.this), self._select(node.expression))
        elif isinstance(node, exp.Insert):
            statement = self._insert(node)
        elif isinstance(node, exp.Update):
            statement = self._update(node)
        elif isinstance(node, exp.Delete):
            statement = self._delete(node)
        else:
            refuse(f"the statement {node.sql()}", "send SELECT, INSERT, UPDATE or DELETE")
        return CoreStatement(statement, self.arguments)

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
        self._table = self._described(name).to_metadata(MetaData())
        for column in self._table.c:
            column.type = NullType()
        return index

    # -- statements ------------------------------------------------------------------------

    def _select(self, node: exp.Select) -> Any:
        if not isinstance(node, exp.Select):
            return self._subquery()
        _check_clauses(node, *_SELECT_CLAUSES)
        if node.args.get("with_"):
            refuse("a common table expression (WITH)", "run the inner query separately")
        source = node.args.get("from_")
        index = self._source(source.this if source is not None else None, writing=False)
        statement = select(*(self._selected(c) for c in node.expressions)).select_from(self._table)
        for join in node.args.get("joins") or ():
            statement = statement.join_from(self._table, table(join.this.name), true())
        if node.args.get("where"):
            statement = statement.where(self._condition(node.args["where"].this))
        if node.args.get("group"):
            statement = statement.group_by(*(self._value(g) for g in node.args["group"].expressions))
        if node.args.get("having"):
            statement = statement.having(self._condition(node.args["having"].this))
        if node.args.get("distinct"):
            statement = statement.distinct()
        if node.args.get("locks"):
            statement = statement.with_for_update()
        if node.args.get("order"):
            statement = statement.order_by(*(self._ordered(o) for o in node.args["order"].expressions))
        if node.args.get("limit"):
            statement = statement.limit(self._value(node.args["limit"].expression))
        if node.args.get("offset"):
            statement = statement.offset(self._value(node.args["offset"].expression))
        if index is not None:
            statement = statement.options(use_index(index))
        return statement

    def _selected(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Star):
            return literal_column("*")
        if isinstance(node, exp.Alias):
            value, name = self._value(node.this), node.alias
        else:
            value, name = self._value(node), self._result_name(node)
        declared = self._result_types.get(name) if name is not None else None
        if declared is not None:
            value = type_coerce(value, declared)
        if name is None or (isinstance(value, Column) and value.name == name):
            return value
        return value.label(name)

    def _result_name(self, node: exp.Expression) -> str | None:
        """The key DynamoDB gives a selected path: its last step (partiql-reference.md §4)."""
        if isinstance(node, exp.Column):
            return node.parts[-1].name
        if isinstance(node, exp.Dot):
            return node.expression.name
        if isinstance(node, exp.Bracket) and isinstance(node.expressions[0], exp.Literal):
            step = node.expressions[0]
            return step.this if step.is_string else f"{self._result_name(node.this)}[{step.this}]"
        return None

    def _ordered(self, node: exp.Ordered) -> Any:
        # NULLS FIRST/LAST is left out: DynamoDB orders by a sort key, which is never null.
        column = self._value(node.this)
        return (
            column.desc()
            if node.args.get("desc")
            else column.asc()
            if node.args.get("desc") is False
            else column
        )

    def _insert(self, node: exp.Insert) -> Any:
        _check_clauses(node, "this", "expression", "returning")
        target, names = node.this, None
        if isinstance(target, exp.Schema):
            target, names = target.this, [c.name for c in target.expressions]
        self._source(target, writing=True)
        source = node.expression
        if isinstance(source, (exp.Select, exp.SetOperation)):
            return insert(self._table).from_select([], self._select(source))
        if not isinstance(source, exp.Values) or len(source.expressions) != 1:
            refuse(
                "a multi-row VALUES clause" if isinstance(source, exp.Values) else "an INSERT without VALUES",
                "insert one row per statement and pass the rows to executemany()",
            )
        values = source.expressions[0].expressions
        if names is None:
            if len(values) != 1 or not isinstance(values[0], exp.Struct):
                refuse(
                    "an INSERT without a column list", "name the columns: INSERT INTO t (a, b) VALUES (?, ?)"
                )
            pairs = [
                (e.this.name, e.expression) for e in values[0].expressions if isinstance(e, exp.PropertyEQ)
            ]
            if len(pairs) != len(values[0].expressions):
                refuse("an item entry that is not 'name': value", "write {'name': value, ...}")
        elif len(names) != len(values):
            refuse(
                f"an INSERT of {len(values)} values into {len(names)} columns", "give one value per column"
            )
        else:
            pairs = list(zip(names, values, strict=True))
        statement = insert(self._table).values({self._column(n): self._written(n, v) for n, v in pairs})
        return self._returning(statement, node)

    def _returning(self, statement: Any, node: exp.Expression) -> Any:
        # Only the presence counts: the compiler refuses RETURNING on INSERT and UPDATE.
        return (
            statement.returning(*self._table.primary_key.columns) if node.args.get("returning") else statement
        )

    def _written(self, name: str, node: exp.Expression) -> Any:
        """A value written to an attribute; NULL is a parameter holding None (attribute absent)."""
        if isinstance(node, exp.Null):
            return bindparam(self._fresh("null"), None, type_=self._column(name).type)
        return self._value(node)

    def _update(self, node: exp.Update) -> Any:
        _check_clauses(node, "this", "expressions", "where", "returning")
        self._source(node.this, writing=True)
        values = {}
        for assignment in node.expressions:
            target = assignment.this
            if not (
                isinstance(assignment, exp.EQ) and isinstance(target, exp.Column) and len(target.parts) == 1
            ):
                refuse(
                    f"the assignment {assignment.sql()}", "write SET attribute = value for a whole attribute"
                )
            values[self._column(target.name)] = self._written(target.name, assignment.expression)
        statement = self._returning(update(self._table).values(values), node)
        where = node.args.get("where")
        return statement.where(self._condition(where.this)) if where is not None else statement

    def _delete(self, node: exp.Delete) -> Any:
        _check_clauses(node, "this", "where", "returning")
        returning = node.args.get("returning")
        if returning is not None and [e.name for e in returning.expressions] != ["ALL OLD *"]:
            refuse(f"{returning.sql()} on DELETE", "remove it; the dialect counts the deleted rows itself")
        self._source(node.this, writing=True)
        where = node.args.get("where")
        statement = delete(self._table)
        return statement.where(self._condition(where.this)) if where is not None else statement
