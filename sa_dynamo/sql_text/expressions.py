"""SQL expressions of a sqlglot tree as Core, one table entry per kind of node: attributes and
document paths of the statement's table, values (always bind parameters), conditions. No rules
of DynamoDB: the compiler decides what each means there, and refuses what it cannot do."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from functools import reduce
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.types import NullType
from sqlglot import exp

from ..exc import TranslationError


class Argument(NamedTuple):
    """Where a bind parameter's value comes from at execution: the ``?`` at ``key`` (an int), the
    text's parameter ``key`` (a str), or, for an IN list, each of ``items`` (Arguments or literals)."""

    key: int | str | None = None
    items: tuple[Any, ...] = ()

    def value(self, row: Mapping[Any, Any]) -> Any:
        if self.key is not None:
            return row[self.key]
        return [item.value(row) if isinstance(item, Argument) else item for item in self.items]


def refuse(what: str, instead: str) -> Any:
    raise TranslationError(f"DynamoDB PartiQL cannot express {what}: {instead}")


def _not_a_value(_: Any, node: exp.Expression) -> Any:
    refuse(node.sql(), "use comparisons, IN, BETWEEN, IS NULL, LIKE 'prefix%' or DynamoDB's functions")


def _literal(node: exp.Expression) -> Any:
    """The Python value of a number, string, TRUE or FALSE written in the text; None for anything
    else (sqlglot's to_py() would take NULL too)."""
    return node.to_py() if node.is_string or node.is_number or isinstance(node, exp.Boolean) else None


def _is_missing(node: exp.Expression) -> bool:
    """PartiQL's MISSING (unquoted), which sqlglot reads as a column."""
    return isinstance(node, exp.Column) and not node.table and not node.this.quoted and node.name == "MISSING"


def _subquery(*_: Any) -> Any:
    # Only its presence matters: the compiler refuses any nested SELECT.
    return sa.select(sa.literal_column("*")).select_from(sa.table("subquery")).scalar_subquery()


class Expressions:
    """The expression half of a statement's translation; to_core.Builder adds the statements.
    ``binds`` are the bind parameters a text() declared (their types, expanding lists)."""

    def __init__(self, statement: exp.Expression, binds: Mapping[str, sa.BindParameter]):
        self._statement = statement
        self._binds = binds
        self._table: sa.Table | None = None
        self.arguments: dict[str, Argument] = {}
        placeholders = list(statement.find_all(exp.Placeholder))
        # names the text gives its parameters: the ones made here must differ from them
        self._taken = {p.this for p in placeholders if p.this}
        # where each ``?`` starts in the text: parameters are positional, and a tree has no order
        self._positions = sorted(p.meta["start"] for p in placeholders if not p.this)

    def _column(self, name: str, type_: Any = None) -> sa.Column:
        """The table's attribute ``name``, added when first met. The table is this statement's
        own, so one first met untyped takes the type a later use needs (Boolean for a bare test,
        JSON for a path into it)."""
        if name not in self._table.c:
            self._table.append_column(sa.Column(name, NullType()))
        column = self._table.c[name]
        if type_ is not None and isinstance(column.type, NullType):
            column.type = type_
        return column

    def _path(self, node: exp.Expression, document: bool = False) -> Any:
        """An attribute, or a path into a document: ``a``, ``doc.a.b``, ``doc['a'][0]``; with
        ``document``, the attribute read as a document, to take a path into it."""
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            root, *steps = [part.name for part in node.parts]
            if steps and root == self._table.name:
                refuse(
                    f"the qualified name {node.sql()}",
                    f"PartiQL has no qualifiers and reads it as a path inside an attribute {root}; "
                    f"write {'.'.join(steps)}",
                )
            if not (steps or document):
                return self._column(root)
            column = self._column(root, sa.JSON())
            if not isinstance(column.type, sa.JSON):
                column = sa.type_coerce(column, sa.JSON())
            return reduce(operator.getitem, steps, column)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            return self._path(node.this, document=True)[node.expression.name]
        if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
            step = node.expressions[0]
            if isinstance(step, exp.Literal):
                return self._path(node.this, document=True)[step.to_py()]
        refuse(f"the path {node.sql()}", "write each step as a literal name or number (not a parameter)")

    def _fresh(self, prefix: str) -> str:
        """A name for a parameter made here, unlike any other of the statement."""
        names = (f"_{prefix}{number}" for number in itertools.count(len(self._taken)))
        name = next(name for name in names if name not in self._taken)
        self._taken.add(name)
        return name

    def _parameter(self, node: exp.Placeholder) -> sa.BindParameter:
        """A ``:name``, or a ``?`` by its place in the text, as a bind parameter."""
        name = node.this or self._fresh("p")
        self.arguments[name] = Argument(node.this or self._positions.index(node.meta["start"]))
        declared = self._binds.get(name, sa.bindparam(name))
        return sa.bindparam(name, type_=declared.type, expanding=declared.expanding)

    def _literal_value(self, node: exp.Expression) -> Any:
        value = _literal(node)
        if value is None:  # a minus before anything but a number
            return _not_a_value(self, node)
        return sa.bindparam(
            self._fresh("literal"), value, type_=sa.Boolean() if isinstance(value, bool) else None
        )

    def _function(self, node: exp.Func) -> Any:
        """A call as ``func.<name>(...)``: the compiler knows DynamoDB's functions and COUNT."""
        if isinstance(node, exp.Anonymous):
            name, arguments = node.name, node.expressions
        else:
            name = node.sql_name()
            arguments = [a for a in node.iter_expressions() if not isinstance(a, exp.Star)]
        return getattr(sa.func, name.lower())(*map(self._value, arguments))

    def _value(self, node: exp.Expression) -> Any:
        """A value or an expression over attributes, as Core."""
        return _handler(_VALUES, node, _not_a_value)(self, node)

    def _condition(self, node: exp.Expression) -> Any:
        """A condition as Core; anything else is read as a value, which the compiler tests."""
        return _handler(_CONDITIONS, node, Expressions._value)(self, node)

    def _operand(self, node: exp.Expression) -> Any:
        # `= NULL` reads as IS NULL, as SQLAlchemy reads `== None`.
        return None if isinstance(node, exp.Null) else self._value(node)

    def _is(self, node: exp.Is) -> Any:
        subject = self._value(node.this)
        if _is_missing(node.expression):
            # x IS MISSING is attribute_not_exists(x): the same test, as DynamoDB's function
            return sa.func.attribute_not_exists(subject)
        return subject.is_(self._value(node.expression))

    def _in(self, node: exp.In) -> Any:
        subject, field = self._value(node.this), node.args.get("field")
        if node.args.get("query"):
            return subject.in_(_subquery())
        if isinstance(field, exp.Placeholder):  # IN :ids, a text() parameter with expanding=True
            return subject.in_(self._parameter(field))
        values = [self._value(value) for value in node.expressions]
        if not all(isinstance(value, sa.BindParameter) for value in values):
            return subject.in_(values)  # the compiler refuses a list of expressions
        # one list parameter, as in_() makes of a Python list, filled from the text's values
        name = self._fresh("in")
        self.arguments[name] = Argument(items=tuple(self.arguments.get(v.key, v.value) for v in values))
        return subject.in_(sa.bindparam(name, expanding=True))

    def _like(self, node: exp.Expression) -> Any:
        escape = None
        if isinstance(node, exp.Escape):
            escape = _literal(node.expression)
            if escape is None:
                refuse(f"the escape {node.expression.sql()}", "write the escape character as a literal")
            node = node.this
        subject, pattern = self._value(node.this), self._value(node.expression)
        test = (subject.ilike if isinstance(node, exp.ILike) else subject.like)(pattern, escape=escape)
        return sa.not_(test) if node.args.get("negate") else test

    def _call_condition(self, node: exp.Anonymous) -> Any:
        """begins_with and contains take the value literally, as startswith() and contains() do."""
        name = node.name.lower()
        if name not in ("begins_with", "contains") or len(node.expressions) != 2:
            return self._value(node)
        subject, value = map(self._value, node.expressions)
        return subject.startswith(value) if name == "begins_with" else subject.contains(value)

    def _attribute_condition(self, node: exp.Column) -> Any:
        if len(node.parts) == 1 and not _is_missing(node):
            return self._column(node.name, sa.Boolean())  # a bare boolean attribute
        return self._value(node)


def _handler(handlers: Mapping[type, Callable], node: exp.Expression, otherwise: Callable) -> Callable:
    """The entry for ``node``'s class or its nearest base class (a Func, a SetOperation)."""
    return next((handlers[kind] for kind in type(node).__mro__ if kind in handlers), otherwise)


def _binary(combine: Callable[[Any, Any], Any], operand: Callable) -> Callable:
    """The entry of an operator whose two operands ``operand`` translates."""
    return lambda self, node: combine(operand(self, node.this), operand(self, node.expression))


# sqlglot node class -> its Core form, as a function of the Expressions and the node
_VALUES: dict[type, Callable[[Expressions, Any], Any]] = {
    exp.Placeholder: Expressions._parameter,
    **dict.fromkeys((exp.Literal, exp.Boolean, exp.Neg), Expressions._literal_value),
    exp.Null: lambda self, node: sa.null(),
    exp.Paren: lambda self, node: self._value(node.this),
    **dict.fromkeys((exp.Column, exp.Dot, exp.Bracket), Expressions._path),
    exp.Add: _binary(operator.add, Expressions._value),
    exp.Sub: _binary(operator.sub, Expressions._value),
    exp.Mul: _binary(operator.mul, Expressions._value),
    exp.Div: _binary(operator.truediv, Expressions._value),
    exp.Mod: _binary(operator.mod, Expressions._value),
    exp.DPipe: _binary(lambda a, b: a.concat(b), Expressions._value),
    # Only its presence matters, as for a subquery: the compiler refuses CASE and CAST.
    exp.Case: lambda self, node: sa.case((sa.true(), sa.null())),
    exp.Cast: lambda self, node: sa.cast(self._value(node.this), sa.String()),
    **dict.fromkeys((exp.Subquery, exp.Select, exp.Exists, exp.SetOperation), _subquery),
    exp.Func: Expressions._function,
}
_CONDITIONS: dict[type, Callable[[Expressions, Any], Any]] = {
    exp.Paren: lambda self, node: self._condition(node.this),
    exp.Not: lambda self, node: sa.not_(self._condition(node.this)),
    exp.And: _binary(sa.and_, Expressions._condition),
    exp.Or: _binary(sa.or_, Expressions._condition),
    exp.EQ: _binary(operator.eq, Expressions._operand),
    exp.NEQ: _binary(operator.ne, Expressions._operand),
    exp.LT: _binary(operator.lt, Expressions._operand),
    exp.LTE: _binary(operator.le, Expressions._operand),
    exp.GT: _binary(operator.gt, Expressions._operand),
    exp.GTE: _binary(operator.ge, Expressions._operand),
    exp.In: Expressions._in,
    exp.Between: lambda self, node: self._value(node.this).between(
        self._value(node.args["low"]), self._value(node.args["high"])
    ),
    exp.Is: Expressions._is,
    **dict.fromkeys((exp.Like, exp.ILike, exp.Escape), Expressions._like),
    exp.Anonymous: Expressions._call_condition,
    exp.Column: Expressions._attribute_condition,
}
