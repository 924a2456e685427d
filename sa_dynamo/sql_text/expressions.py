"""SQL expressions of a sqlglot tree as Core: attributes and document paths of the statement's
table, values (always bind parameters), conditions. No rules of DynamoDB: the compiler decides
what each means there, and refuses what it cannot do."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Table,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    not_,
    null,
    or_,
    select,
    table,
    type_coerce,
)
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.types import NullType, String
from sqlglot import exp

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


def refuse(what: str, instead: str) -> Any:
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


def _is_missing(node: exp.Expression) -> bool:
    """PartiQL's MISSING (unquoted), which sqlglot reads as a column."""
    return isinstance(node, exp.Column) and not node.table and not node.this.quoted and node.name == "MISSING"


class Expressions:
    """The expression half of a statement's translation; to_core.Builder adds the statements.
    ``binds`` are the bind parameters a text() declared (their types, expanding lists)."""

    def __init__(self, parsed: Parsed, binds: Mapping[str, BindParameter] | None = None):
        self._positions = parsed.positions
        self._binds = binds or {}
        self._table: Table | None = None
        self.arguments: dict[str, Argument] = {}
        # names the text gives its parameters: the ones made here must differ from them
        self._taken = {p.this for p in parsed.statement.find_all(exp.Placeholder) if p.this}

    # -- attributes --------------------------------------------------------------------------

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
                refuse(
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
        refuse(f"the path {node.sql()}", "write each step as a literal name or number (not a parameter)")

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
            return -Expressions._literal(node.this)
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
        refuse(node.sql(), "use comparisons, IN, BETWEEN, IS NULL, LIKE 'prefix%' or DynamoDB's functions")

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
