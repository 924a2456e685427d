"""A sqlglot tree -> the SQLAlchemy Core statement it means, against the live tables.

No rules of DynamoDB live here: every SQL construct becomes its Core counterpart, and the one
compiler decides what DynamoDB can do with it (key conditions, guards, limits, refusals). What
has no Core counterpart at all (a join's second table, a subquery) becomes a Core construct the
compiler refuses with its own words. Values are always parameters: a ``?`` or ``:name`` is a
bind parameter filled per execution, and a literal becomes a bind parameter holding its value.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Index,
    MetaData,
    Table,
    and_,
    bindparam,
    case,
    cast,
    delete,
    func,
    insert,
    literal_column,
    not_,
    null,
    or_,
    select,
    table,
    true,
    type_coerce,
    union,
    update,
)
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.types import NullType, String
from sqlglot import exp

from ..constructs import use_index
from ..exc import TranslationError
from .parser import PLACEHOLDER_START, Parsed


class Argument(NamedTuple):
    """Where a bind parameter's value comes from at execution: the ``?`` at ``key`` (an int) or
    the text's parameter ``key`` (a str), or, for an IN list, each of ``items`` (Arguments, or
    literal values written in the text)."""

    key: int | str | None = None
    items: tuple[Any, ...] = ()

    def value(self, row: Mapping[Any, Any]) -> Any:
        if self.key is not None:
            return row[self.key]
        return [item.value(row) if isinstance(item, Argument) else item for item in self.items]


class CoreStatement(NamedTuple):
    statement: Any  # a Core select/insert/update/delete
    arguments: dict[str, Argument]  # bind parameter name -> where its value comes from


def _refuse(what: str, instead: str) -> Any:
    raise TranslationError(f"DynamoDB PartiQL cannot express {what}: {instead}")


_COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    exp.EQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
}
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    exp.Add: operator.add,
    exp.Sub: operator.sub,
    exp.Mul: operator.mul,
    exp.Div: operator.truediv,
    exp.Mod: operator.mod,
    exp.DPipe: lambda a, b: a.concat(b),
}
_KEY_TYPES = {"HASH": "hash", "RANGE": "range"}


def _is_missing(node: exp.Expression) -> bool:
    """PartiQL's MISSING (unquoted), which sqlglot reads as a column."""
    return isinstance(node, exp.Column) and not node.table and not node.this.quoted and node.name == "MISSING"


def live_table(described: Mapping[str, Any]) -> Table:
    """A Table of DescribeTable's answer: the key attributes of the table and of its indexes, and
    the indexes with their projections, so the compiler plans SQL text as it plans models."""
    key_roles = {k["AttributeName"]: _KEY_TYPES[k["KeyType"]] for k in described["KeySchema"]}
    names = [a["AttributeName"] for a in described["AttributeDefinitions"]]
    columns = [
        Column(name, NullType(), primary_key=name in key_roles, dynamodb_key=key_roles.get(name))
        for name in names
    ]
    result = Table(described["TableName"], MetaData(), *columns)
    for local, kind in ((False, "GlobalSecondaryIndexes"), (True, "LocalSecondaryIndexes")):
        for entry in described.get(kind, []):
            projection = entry["Projection"]
            Index(
                entry["IndexName"],
                *(result.c[k["AttributeName"]] for k in entry["KeySchema"]),
                dynamodb_projection=projection["ProjectionType"],
                dynamodb_local=local,
                dynamodb_include=projection.get("NonKeyAttributes"),
            )
    return result


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
            _refuse(what, instead)


class Builder:
    """Builds one statement. ``described(name)`` gives DescribeTable's Table of a table;
    ``binds`` are the bind parameters a text() declared (their types, expanding lists);
    ``result_types`` the column types text().columns() gave the result."""

    def __init__(
        self,
        parsed: Parsed,
        described: Callable[[str], Mapping[str, Any]],
        binds: Mapping[str, BindParameter] | None = None,
        result_types: Mapping[str, Any] | None = None,
    ):
        self._positions = parsed.positions
        self._parsed = parsed
        self._described = described
        self._binds = binds or {}
        self._result_types = result_types or {}
        self._table: Table | None = None
        self.arguments: dict[str, Argument] = {}
        # names the text gives its parameters: the ones made here must differ from them
        self._taken = {p.this for p in parsed.statement.find_all(exp.Placeholder) if p.this}

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
            _refuse(f"the statement {node.sql()}", "send SELECT, INSERT, UPDATE or DELETE")
        return CoreStatement(statement, self.arguments)

    # -- tables and attributes ---------------------------------------------------------------

    def _source(self, node: exp.Expression | None, writing: bool) -> str | None:
        """Make the statement's table current; the index a SELECT names (``"t"."gsi1"``)."""
        if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
            _refuse(
                "a SELECT without a table" if node is None else node.sql(), "select from exactly one table"
            )
        if node.alias:
            _refuse(f"an alias ({node.alias})", "PartiQL has no aliases; use the table's own name")
        if node.catalog:
            _refuse(f"the three-part name {node.sql()}", "name a table, or a table and one of its indexes")
        name, index = (node.db, node.name) if node.db else (node.name, None)
        if index is not None and writing:
            _refuse(f"a write to the index {name}.{index}", "write to the table itself")
        self._table = live_table(self._described(name))
        return index

    def _column(self, name: str, type_: Any = None) -> Column:
        """The current table's attribute ``name``; one no key names is added as it is met. The
        table is this statement's own, so an attribute first met untyped takes the type a later
        use needs (Boolean for a bare test, JSON for a path into it)."""
        assert self._table is not None
        if name not in self._table.c:
            self._table.append_column(Column(name, NullType()))
        column = self._table.c[name]
        if type_ is not None and isinstance(column.type, NullType):
            column.type = type_
        return column

    def _path(self, node: exp.Expression) -> ColumnElement:
        """An attribute, or a path into a document: ``a``, ``doc.a.b``, ``doc['a'][0]``."""
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            names = [part.name for part in node.parts]
            if len(names) > 1 and self._table is not None and names[0] == self._table.name:
                _refuse(
                    f"the qualified name {node.sql()}",
                    f"PartiQL has no qualifiers and reads it as a path inside an attribute {names[0]}; "
                    f"write {'.'.join(names[1:])}",
                )
            if len(names) == 1:
                return self._column(names[0])
            return self._steps(self._document(names[0]), names[1:])
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            return self._steps(self._path(node.this), [node.expression.name])
        if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
            step = node.expressions[0]
            if isinstance(step, exp.Literal):
                root = node.this
                single = isinstance(root, exp.Column) and len(root.parts) == 1
                parent = self._document(root.name) if single else self._path(root)
                return self._steps(parent, [step.this if step.is_string else int(step.this)])
        _refuse(f"the path {node.sql()}", "write each step as a literal name or number (not a parameter)")

    def _document(self, name: str) -> ColumnElement:
        """The attribute ``name`` read as a document, to take a path into it."""
        column = self._column(name, JSON())
        return column if isinstance(column.type, JSON) else type_coerce(column, JSON())

    @staticmethod
    def _steps(document: ColumnElement, steps: list[Any]) -> ColumnElement:
        for step in steps:
            document = document[step]
        return document

    # -- values ----------------------------------------------------------------------------

    def _fresh(self, prefix: str) -> str:
        """A name for a parameter made here, unlike any other of the statement."""
        number = len(self._taken)
        while f"_{prefix}{number}" in self._taken:
            number += 1
        self._taken.add(f"_{prefix}{number}")
        return f"_{prefix}{number}"

    def _parameter(self, node: exp.Placeholder) -> BindParameter:
        """A ``?`` (by its place in the text) or a ``:name``, as a bind parameter."""
        if node.this:
            declared = self._binds.get(node.this)
            name, argument = node.this, Argument(node.this)
            type_ = declared.type if declared is not None else None
            expanding = declared is not None and declared.expanding
        else:
            position = self._positions[node.meta[PLACEHOLDER_START]]
            name, argument, type_, expanding = self._fresh("p"), Argument(position), None, False
        self.arguments[name] = argument
        return bindparam(name, type_=type_, expanding=expanding)

    @staticmethod
    def _literal(node: exp.Expression) -> Any:
        """The Python value of a literal written in the text."""
        if isinstance(node, exp.Boolean):
            return bool(node.this)
        if isinstance(node, exp.Neg):
            return -Builder._literal(node.this)
        if node.is_string:
            return node.this
        number = Decimal(node.this)
        return int(number) if number == number.to_integral_value() and "." not in node.this else number

    @staticmethod
    def _is_literal(node: exp.Expression) -> bool:
        return isinstance(node, (exp.Literal, exp.Boolean)) or (
            isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string
        )

    def _value(self, node: exp.Expression) -> Any:
        """A value or an expression over attributes, as Core."""
        if isinstance(node, exp.Placeholder):
            return self._parameter(node)
        if self._is_literal(node):
            value = self._literal(node)
            return bindparam(
                self._fresh("literal"), value, type_=Boolean() if isinstance(value, bool) else None
            )
        if isinstance(node, exp.Null):
            return null()
        if isinstance(node, exp.Paren):
            return self._value(node.this)
        if isinstance(node, (exp.Column, exp.Dot, exp.Bracket)):
            return self._path(node)
        if type(node) in _ARITHMETIC:
            return _ARITHMETIC[type(node)](self._value(node.this), self._value(node.expression))
        if isinstance(node, exp.Case):
            whens = [(self._condition(w.this), self._value(w.args["true"])) for w in node.args["ifs"]]
            default = node.args.get("default")
            return case(*whens, else_=self._value(default) if default is not None else None)
        if isinstance(node, exp.Cast):
            return cast(self._value(node.this), String())
        if isinstance(node, (exp.Subquery, exp.Select, exp.Exists, exp.SetOperation)):
            return self._subquery()
        if isinstance(node, exp.Func) and not isinstance(node, exp.Window):
            return self._function(node)
        _refuse(node.sql(), "use comparisons, IN, BETWEEN, IS NULL, LIKE 'prefix%' or DynamoDB's functions")

    def _function(self, node: exp.Func) -> Any:
        """A function call as ``func.<name>(...)``: the compiler knows DynamoDB's and COUNT."""
        if isinstance(node, exp.Anonymous):
            name, arguments = node.name, node.expressions
        else:
            name = node.sql_name()
            arguments = [a for a in node.iter_expressions() if not isinstance(a, exp.Star)]
        return getattr(func, name.lower())(*(self._value(a) for a in arguments))

    @staticmethod
    def _subquery() -> Any:
        # Only its presence matters: the compiler refuses any nested SELECT.
        return select(literal_column("*")).select_from(table("subquery")).scalar_subquery()

    # -- conditions ------------------------------------------------------------------------

    def _condition(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Paren):
            return self._condition(node.this)
        if isinstance(node, exp.Not):
            return not_(self._condition(node.this))
        if isinstance(node, exp.And):
            return and_(self._condition(node.this), self._condition(node.expression))
        if isinstance(node, exp.Or):
            return or_(self._condition(node.this), self._condition(node.expression))
        if type(node) in _COMPARISONS:
            return _COMPARISONS[type(node)](self._operand(node.this), self._operand(node.expression))
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            return self._value(node.this).between(
                self._value(node.args["low"]), self._value(node.args["high"])
            )
        if isinstance(node, exp.Is):
            return self._is(node)
        if isinstance(node, (exp.Like, exp.Escape, exp.ILike)):
            return self._like(node)
        if (
            isinstance(node, exp.Anonymous)
            and node.name.lower() in ("begins_with", "contains")
            and len(node.expressions) == 2
        ):
            # DynamoDB's functions take the value literally, as startswith()/contains() do
            subject, value = (self._value(a) for a in node.expressions)
            return (
                subject.startswith(value) if node.name.lower() == "begins_with" else subject.contains(value)
            )
        if isinstance(node, (exp.Column, exp.Dot)) and not _is_missing(node):
            if isinstance(node, exp.Column) and len(node.parts) == 1:
                return self._column(node.name, Boolean())  # a bare boolean attribute
            return self._path(node)
        return self._value(node)

    def _operand(self, node: exp.Expression) -> Any:
        # `= NULL` reads as IS NULL, as SQLAlchemy reads `== None`.
        return None if isinstance(node, exp.Null) else self._value(node)

    def _in(self, node: exp.In) -> Any:
        subject = self._value(node.this)
        if node.args.get("query"):
            return subject.in_(self._subquery())
        field = node.args.get("field")
        if isinstance(field, exp.Placeholder):  # IN :ids, a text() parameter with expanding=True
            return subject.in_(self._parameter(field))
        values = node.expressions
        if not values:
            return subject.in_([])
        name = self._fresh("in")
        items = []
        for value in values:
            if isinstance(value, exp.Placeholder):
                items.append(self.arguments.pop(self._parameter(value).key))
            elif self._is_literal(value):
                items.append(self._literal(value))
            else:
                return subject.in_([self._value(v) for v in values])  # the compiler refuses it
        self.arguments[name] = Argument(items=tuple(items))
        return subject.in_(bindparam(name, expanding=True))

    def _is(self, node: exp.Is) -> Any:
        subject = self._value(node.this)
        if isinstance(node.expression, exp.Null):
            return subject.is_(None)
        if _is_missing(node.expression):
            # x IS MISSING is attribute_not_exists(x): the same test, as DynamoDB's function.
            return func.attribute_not_exists(subject)
        return subject.is_(self._value(node.expression))

    def _like(self, node: exp.Expression) -> Any:
        escape = None
        if isinstance(node, exp.Escape):
            escape = self._literal(node.expression)
            node = node.this
        subject, pattern = self._value(node.this), self._value(node.expression)
        if isinstance(node, exp.ILike):
            return subject.ilike(pattern, escape=escape)
        test = subject.like(pattern, escape=escape)
        return not_(test) if node.args.get("negate") else test

    # -- statements ------------------------------------------------------------------------

    def _select(self, node: exp.Select) -> Any:
        if not isinstance(node, exp.Select):
            return self._subquery()
        _check_clauses(node, *_SELECT_CLAUSES)
        if node.args.get("with_"):
            _refuse("a common table expression (WITH)", "run the inner query separately")
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
            _refuse(
                "a multi-row VALUES clause" if isinstance(source, exp.Values) else "an INSERT without VALUES",
                "insert one row per statement and pass the rows to executemany()",
            )
        values = source.expressions[0].expressions
        if names is None:
            if len(values) != 1 or not isinstance(values[0], exp.Struct):
                _refuse(
                    "an INSERT without a column list", "name the columns: INSERT INTO t (a, b) VALUES (?, ?)"
                )
            pairs = [
                (e.this.name, e.expression) for e in values[0].expressions if isinstance(e, exp.PropertyEQ)
            ]
            if len(pairs) != len(values[0].expressions):
                _refuse("an item entry that is not 'name': value", "write {'name': value, ...}")
        elif len(names) != len(values):
            _refuse(
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
                _refuse(
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
            _refuse(f"{returning.sql()} on DELETE", "remove it; the dialect counts the deleted rows itself")
        self._source(node.this, writing=True)
        where = node.args.get("where")
        statement = delete(self._table)
        return statement.where(self._condition(where.this)) if where is not None else statement
