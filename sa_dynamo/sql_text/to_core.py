"""A sqlglot tree -> the SQLAlchemy Core statement it means, against the live tables.

No rules of DynamoDB live here: every SQL construct becomes its Core counterpart (attributes and
document paths of the statement's table, values as bind parameters, conditions, clauses), and
the one compiler decides what DynamoDB can do with it (key conditions, guards, limits, refusals).
What has no Core counterpart at all (a join's second table, a subquery) becomes a Core construct
the compiler refuses with its own words.
"""

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
from ..constructs import use_index
from ..dbapi.statement import result_key
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


def _subquery(*_: Any) -> Any:
    # Only its presence matters: the compiler refuses a SELECT that is not a statement.
    return sa.select(sa.literal_column("*")).select_from(sa.table("subquery")).scalar_subquery()


def _nested(*_: Any) -> NoReturn:
    """A subquery in SQL text: the text names tables without their keys, which a semi-join
    needs to plan its reads."""
    refuse(
        "IN with a subquery, or EXISTS, in SQL text",
        "write the statement with SQLAlchemy's select(): col.in_(select(...)) and exists() are computed "
        "as semi-joins over the declared tables; or run the inner query on its own and pass its rows "
        "as parameters",
    )


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


class Builder:
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
            return sa.union(self._select(node.this), self._select(node.expression))
        if isinstance(node, (exp.Select, exp.Insert, exp.Update, exp.Delete)):
            return getattr(self, f"_{node.key}")(node)  # _select, _insert, _update or _delete
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
        statement = sa.select(*map(self._selected, node.expressions)).select_from(self._table)
        for join in node.args.get("joins") or ():
            statement = statement.join_from(self._table, sa.table(join.this.name), sa.true())
        statement = self._with(statement, node, *_SELECT_CLAUSES)
        return statement if index is None else statement.options(use_index(index))

    def _selected(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Star):
            return sa.literal_column("*")
        value, name = self._value(node.unalias()), node.alias or self._result_name(node)
        if name in self._result_types:
            value = sa.type_coerce(value, self._result_types[name])
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
        return _handler(_CONDITIONS, node, Builder._value)(self, node)

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


# sqlglot node class -> its Core form, as a function of the Builder and the node
_VALUES: dict[type, Callable[[Builder, Any], Any]] = {
    exp.Placeholder: Builder._parameter,
    **dict.fromkeys((exp.Literal, exp.Boolean, exp.Neg), Builder._literal_value),
    exp.Null: lambda self, node: sa.null(),
    exp.Paren: lambda self, node: self._value(node.this),
    **dict.fromkeys((exp.Column, exp.Dot, exp.Bracket), Builder._path),
    exp.Add: _binary(operator.add, Builder._value),
    exp.Sub: _binary(operator.sub, Builder._value),
    exp.Mul: _binary(operator.mul, Builder._value),
    exp.Div: _binary(operator.truediv, Builder._value),
    exp.Mod: _binary(operator.mod, Builder._value),
    exp.DPipe: _binary(lambda a, b: a.concat(b), Builder._value),
    # Only its presence matters, as for a subquery: the compiler refuses CASE and CAST.
    exp.Case: lambda self, node: sa.case((sa.true(), sa.null())),
    exp.Cast: lambda self, node: sa.cast(self._value(node.this), sa.String()),
    **dict.fromkeys((exp.Subquery, exp.Select, exp.Exists, exp.SetOperation), _nested),
    exp.Func: Builder._function,
}
_CONDITIONS: dict[type, Callable[[Builder, Any], Any]] = {
    exp.Paren: lambda self, node: self._condition(node.this),
    exp.Not: lambda self, node: sa.not_(self._condition(node.this)),
    exp.And: _binary(sa.and_, Builder._condition),
    exp.Or: _binary(sa.or_, Builder._condition),
    # x = y, x <> y, x < y ...: the operators written between two operands (operators.py)
    **{
        getattr(exp, name): _binary(definition.op, Builder._operand)
        for definition in OPERATORS.values()
        for name in definition.text
    },
    exp.In: Builder._in,
    exp.Between: lambda self, node: self._value(node.this).between(
        self._value(node.args["low"]), self._value(node.args["high"])
    ),
    exp.Is: Builder._is,
    **dict.fromkeys((exp.Like, exp.ILike, exp.Escape), Builder._like),
    exp.Anonymous: Builder._call_condition,
    exp.Column: Builder._attribute_condition,
}
