"""The values and conditions of a statement's text as Core (to_core.py's ``Builder`` is made of
``Expressions``): attributes and document paths of the statement's table, values as bind
parameters, operators and DynamoDB's functions, one table entry per kind of sqlglot node."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from functools import reduce
from typing import Any, NoReturn

import sqlalchemy as sa
from sqlalchemy.types import NullType
from sqlglot import exp

from .. import exc
from ..dialect.operators import OPERATORS
from ..exc import TranslationError


def refuse(what: str, instead: str) -> NoReturn:
    """The compiler's refusal (exc.refuse), raised as the translation's."""
    exc.refuse(what, instead, TranslationError)


def _not_a_value(_: Any, node: exp.Expression) -> Any:
    refuse(node.sql(), "use comparisons, IN, BETWEEN, IS NULL, LIKE 'prefix%' or DynamoDB's functions")


def _literal(node: exp.Expression) -> Any:
    """The Python value of a number, string, TRUE or FALSE written in the text; None for anything
    else (sqlglot's to_py() would take NULL too)."""
    return node.to_py() if node.is_string or node.is_number or isinstance(node, exp.Boolean) else None


def _is_missing(node: exp.Expression) -> bool:
    """PartiQL's MISSING (unquoted), which sqlglot reads as a column."""
    return isinstance(node, exp.Column) and not node.table and not node.this.quoted and node.name == "MISSING"


def _nested(*_: Any) -> NoReturn:
    """A subquery in SQL text: the text names tables without their keys, which a semi-join
    needs to plan its reads."""
    refuse(
        "IN with a subquery, or EXISTS, in SQL text",
        "write the statement with SQLAlchemy's select(): col.in_(select(...)) and exists() are computed "
        "as semi-joins over the declared tables; or run the inner query on its own and pass its rows "
        "as parameters",
    )


class Expressions:
    """Mixed into ``Builder``, whose statement's table (``_table``, made current by its
    ``_source``), the text's parameters and the ``lists`` and ``literals`` it fills are these
    methods' state."""

    _table: sa.Table
    _binds: Mapping
    _taken: set[str]
    _positions: list[int]
    lists: dict[str, tuple[str, ...]]
    literals: dict[str, Any]

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
        """A ``:name``, or a ``?`` named after its place in the text ("0", "1", ...), as a bind
        parameter of that name."""
        name = node.this or str(self._positions.index(node.meta["start"]))
        declared = self._binds.get(name, sa.bindparam(name))
        return sa.bindparam(name, type_=declared.type, expanding=declared.expanding)

    def _literal_value(self, node: exp.Expression) -> Any:
        value = _literal(node)
        if value is None:  # a minus before anything but a number
            return _not_a_value(self, node)
        name = self._fresh("literal")
        self.literals[name] = value
        return sa.bindparam(name, value, type_=sa.Boolean() if isinstance(value, bool) else None)

    def _null(self) -> sa.BindParameter:
        name = self._fresh("literal")
        self.literals[name] = None
        return sa.bindparam(name, None)

    def _function(self, node: exp.Func) -> Any:
        """A call as ``func.<name>(...)``: the compiler knows DynamoDB's functions and COUNT."""
        if isinstance(node, exp.Anonymous):
            return getattr(sa.func, node.name.lower())(*map(self._value, node.expressions))
        arguments = [a for a in node.iter_expressions() if not isinstance(a, exp.Star)]  # COUNT(*)
        values = [self._distinct(a) if isinstance(a, exp.Distinct) else self._value(a) for a in arguments]
        return getattr(sa.func, node.sql_name().lower())(*values)

    def _distinct(self, node: exp.Distinct) -> Any:
        """COUNT(DISTINCT n), SUM(DISTINCT n) ...: the distinct values of one attribute."""
        if len(node.expressions) != 1:
            refuse(f"{node.sql()} of several attributes", "aggregate the distinct values of one attribute")
        return sa.distinct(self._value(node.expressions[0]))

    def _value(self, node: exp.Expression) -> Any:
        """A value or an expression over attributes, as Core."""
        return _handler(_VALUES, node, _not_a_value)(self, node)

    def _condition(self, node: exp.Expression) -> Any:
        """A condition as Core; anything else is read as a value, which the compiler tests."""
        return _handler(_CONDITIONS, node, Expressions._value)(self, node)

    def _operand(self, node: exp.Expression) -> Any:
        # `= NULL` is SQL's: never TRUE (the compiler answers no rows), not SQLAlchemy's IS NULL.
        return self._null() if isinstance(node, exp.Null) else self._value(node)

    def _is(self, node: exp.Is) -> Any:
        subject = self._value(node.this)
        if _is_missing(node.expression):
            # x IS MISSING is attribute_not_exists(x): the same test, as DynamoDB's function
            return sa.func.attribute_not_exists(subject)
        return subject.is_(self._value(node.expression))

    def _in(self, node: exp.In) -> Any:
        subject, field = self._value(node.this), node.args.get("field")
        if node.args.get("query"):
            _nested()
        if isinstance(field, exp.Placeholder):  # IN :ids, a text() parameter with expanding=True
            return subject.in_(self._parameter(field))
        if field is not None:  # IN doc.tags: PartiQL's membership in a collection attribute
            refuse(f"IN {field.sql()} (a list read from an item)", "list the values, as IN (?, ?)")
        # NULL in the list is the value None, as in_([..., None]) has it
        values = [self._null() if isinstance(v, exp.Null) else self._value(v) for v in node.expressions]
        if not all(isinstance(value, sa.BindParameter) for value in values):
            return subject.in_(values)  # the compiler refuses a list of expressions
        # one list parameter, as in_() makes of a Python list, filled from its items' parameters
        name = self._fresh("in")
        self.lists[name] = tuple(value.key for value in values)
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
    **dict.fromkeys((exp.Subquery, exp.Select, exp.Exists, exp.SetOperation), _nested),
    exp.Func: Expressions._function,
}
_CONDITIONS: dict[type, Callable[[Expressions, Any], Any]] = {
    exp.Paren: lambda self, node: self._condition(node.this),
    exp.Not: lambda self, node: sa.not_(self._condition(node.this)),
    exp.And: _binary(sa.and_, Expressions._condition),
    exp.Or: _binary(sa.or_, Expressions._condition),
    # x = y, x <> y, x < y ...: the operators written between two operands (operators.py)
    **{
        getattr(exp, name): _binary(definition.op, Expressions._operand)
        for definition in OPERATORS.values()
        for name in definition.text
    },
    exp.In: Expressions._in,
    exp.Between: lambda self, node: self._value(node.this).between(
        self._value(node.args["low"]), self._value(node.args["high"])
    ),
    exp.Is: Expressions._is,
    **dict.fromkeys((exp.Like, exp.ILike, exp.Escape), Expressions._like),
    exp.Anonymous: Expressions._call_condition,
    exp.Column: Expressions._attribute_condition,
}
