"""The Python predicate of a WHERE: the same normal-form tree the compiler renders as PartiQL,
evaluated over an item (DynamoDB's attributes as the driver reads them: str, Decimal, bytes,
bool, None for a stored NULL, dict, list, set; a missing attribute is absent).

TRUE only where SQL says TRUE: a test of a missing or NULL attribute is unknown, so FALSE here,
exactly where the compiler's guards make DynamoDB skip the item; values of different types never
compare (DynamoDB's rule). Used where the driver must decide a WHERE without DynamoDB: the items
a transaction has written and not yet committed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from sqlalchemy.sql import elements, functions, operators

from ...dbapi.values import received
from ...sqlalchemy_private import bind_processors
from ..operators import (
    DOCUMENT_TESTS,
    MISSING,
    OPERATORS,
    contains,
    equal,
    kind,
    like_pattern,
    present,
    starts_with,
)
from .like import ForDynamoDB, unescaped
from .normal_form import attribute_first, is_document

Values = Callable[[Any], Any]  # a bind parameter -> its value as DynamoDB receives it
Test = Callable[[Any, Values], bool]  # an item (a mapping), or what a resolver reads
_ATTRIBUTE_TYPES = {str: "S", bytes: "B", bool: "BOOL", dict: "M", list: "L", type(None): "NULL"}


Resolve = Callable[[Any], Callable[[Any, Values], Any] | None]


def _read(item: Any, path: tuple[Any, ...] | list[Any]) -> Any:
    value: Any = item
    for step in path:
        if (isinstance(value, dict) and isinstance(step, str) and step in value) or (
            isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)
        ):
            value = value[step]
        else:
            return MISSING
    return value


def operand_of(clause: Any, resolve: Resolve | None) -> Callable[[Any, Values], Any]:
    """What a test reads: an attribute, a path into a document, or size() of either; or what
    ``resolve`` reads for it (a column of one table of a join, an aggregate of a group)."""
    found = resolve(clause) if resolve is not None else None
    if found is not None:
        return found
    if isinstance(clause, functions.FunctionElement) and clause.name.lower() == "size":
        inner = operand_of(next(iter(clause.clauses)), resolve)

        def size(item: Any, values: Values) -> Any:
            value = inner(item, values)
            return len(value) if isinstance(value, (str, bytes, dict, list, set, frozenset)) else MISSING

        return size
    path: list[Any] = []
    while isinstance(clause, elements.BinaryExpression) and clause.operator in (
        operators.json_getitem_op,
        operators.json_path_getitem_op,
    ):
        step = clause.right.value
        path[:0] = list(step) if isinstance(step, (tuple, list)) else [step]
        clause = clause.left
    while isinstance(clause, (elements.Label, elements.TypeCoerce)):
        clause = clause.element if isinstance(clause, elements.Label) else clause.clause
    if not isinstance(clause, elements.ColumnClause):
        raise NotImplementedError(f"no predicate reads {type(clause).__name__}")
    found = resolve(clause) if resolve is not None else None
    if found is not None:
        return lambda item, values: _read(found(item, values), path) if path else found(item, values)
    steps = (clause.name, *path)
    return lambda item, values: _read(item, steps)


def _bound(clause: Any, resolve: Resolve | None) -> Callable[[Any, Values], Any]:
    """The compared value: a parameter's, a constant, or (comparing two columns) an operand."""
    if isinstance(clause, elements.Grouping):
        clause = clause.element
    if isinstance(clause, (elements.True_, elements.False_)):
        constant = isinstance(clause, elements.True_)
        return lambda item, values: constant
    if isinstance(clause, elements.BindParameter):
        return lambda item, values: values(clause)
    return operand_of(clause, resolve)


def _binary(clause: elements.BinaryExpression, resolve: Resolve | None) -> Test:
    """The test of one comparison, by its operator's definition (operators.py)."""
    clause = attribute_first(clause)  # ? = pk below an OR, as relationship loaders write it
    op = clause.operator
    if isinstance(clause.left, elements.Tuple) and op is operators.in_op:
        return _tuple_in(clause, resolve)
    definition = OPERATORS.get(op)
    if definition is None:
        raise NotImplementedError(f"no predicate for the operator {op}")  # the compiler refused it already
    operand = operand_of(clause.left, resolve)
    holds = DOCUMENT_TESTS.get(op, definition.holds) if is_document(clause.left) else definition.holds
    if op in (operators.is_, operators.is_not):
        return lambda item, values: holds(operand(item, values), None)
    if op in (operators.between_op, operators.not_between_op):
        low, high = (_bound(bound, resolve) for bound in clause.right.clauses)
        return lambda item, values: holds(operand(item, values), (low(item, values), high(item, values)))
    value = _escaped(clause, _bound(clause.right, resolve))
    return lambda item, values: holds(operand(item, values), value(item, values))


def _escaped(
    clause: elements.BinaryExpression, value: Callable[[Any, Values], Any]
) -> Callable[[Any, Values], Any]:
    """A LIKE pattern as the test matches it (with its escape character), a startswith() or
    contains() value with its LIKE escapes removed; any other value as it is."""
    escape = clause.modifiers.get("escape")
    if clause.operator in (operators.like_op, operators.not_like_op):
        return lambda item, values: _pattern(value(item, values), escape)
    if escape is None:
        return value
    return lambda item, values: unescaped(value(item, values), escape)


def _pattern(pattern: Any, escape: str | None) -> Any:
    return like_pattern(pattern, escape) if isinstance(pattern, str) else pattern


def _tuple_in(clause: elements.BinaryExpression, resolve: Resolve | None) -> Test:
    """``tuple_(pk, sk).in_(keys)``: some key equals the attributes, one by one."""
    operands = [operand_of(element, resolve) for element in clause.left.clauses]
    listed = _bound(clause.right, resolve)

    def member(item: Any, values: Values) -> bool:
        stored = [operand(item, values) for operand in operands]
        return any(
            all(present(s) and equal(s, v) for s, v in zip(stored, key, strict=True))
            for key in listed(item, values)
        )

    return member


def _function(clause: functions.FunctionElement, resolve: Resolve | None) -> Test:
    name = clause.name.lower()
    arguments = list(clause.clauses)
    operand = operand_of(arguments[0], resolve)
    if name == "attribute_exists":
        return lambda item, values: operand(item, values) is not MISSING
    if name == "attribute_not_exists":
        return lambda item, values: operand(item, values) is MISSING
    if name in ("begins_with", "contains"):
        value = _bound(arguments[1], resolve)
        test = starts_with if name == "begins_with" else contains
        return lambda item, values: test(operand(item, values), value(item, values))
    if name == "attribute_type":
        wanted = _bound(arguments[1], resolve)

        def typed(item: Any, values: Values) -> bool:
            stored, kind_wanted = operand(item, values), wanted(item, values)
            if kind(stored) is Decimal:
                return kind_wanted == "N"
            if isinstance(stored, (set, frozenset)):
                kinds = {kind(member) for member in stored}
                return (
                    kind_wanted == {str: "SS", Decimal: "NS", bytes: "BS"}.get(kinds.pop())
                    if kinds
                    else False
                )
            return _ATTRIBUTE_TYPES.get(type(stored)) == kind_wanted

        return typed
    raise NotImplementedError(f"no predicate for {name}()")


def predicate_of(terms: list[Any], resolve: Resolve | None = None) -> Test | None:
    """The predicate of a WHERE's normalised AND terms (normal_form.terms_of); None for a
    WHERE this module cannot evaluate (then nothing relies on it). ``resolve`` reads the
    operands it knows (a joined row's columns, a group's aggregates), None for the others,
    which are read from the item by name."""
    try:
        tests = [_test(term, resolve) for term in terms]
    except NotImplementedError:
        return None
    return lambda item, values: all(test(item, values) for test in tests)


def _test(clause: Any, resolve: Resolve | None) -> Test:
    if isinstance(clause, elements.Grouping):
        return _test(clause.element, resolve)
    if isinstance(clause, elements.BooleanClauseList):
        parts = [_test(part, resolve) for part in clause.clauses]
        if clause.operator is operators.and_:
            return lambda item, values: all(part(item, values) for part in parts)
        return lambda item, values: any(part(item, values) for part in parts)
    if isinstance(clause, (elements.True_, elements.False_)):
        constant = isinstance(clause, elements.True_)
        return lambda item, values: constant
    if isinstance(clause, elements.BinaryExpression):
        return _binary(clause, resolve)
    if isinstance(clause, functions.FunctionElement):
        return _function(clause, resolve)
    raise NotImplementedError(f"no predicate for {type(clause).__name__}")


def values_of(
    compiled: Any,
    parameters: Mapping[str, Any],
    expanded: Mapping[str, list[str]] | None = None,
    processed: bool = True,
) -> Values:
    """The value each bind parameter of ``compiled`` has as DynamoDB receives it, given one
    execution's parameters by name; ``expanded`` names the parameters an IN list became at
    execution (its values each processed as its own). ``processed=False``: the values as the
    execution was given them (a statement the client runs for this one takes them so).

    As received: the column type's bind processor, then the driver's AttributeValue, read back
    as an item's attributes are. So the float 0.7 a Float column sends is the number 0.7, equal
    to the stored Decimal("0.7") as DynamoDB says, not the binary fraction nearest to it."""
    processors = None
    if processed:  # a LIKE pattern as SQL takes it, not as begins_with is sent it
        processors = {
            name: process
            for name, process in bind_processors(compiled).items()
            if not isinstance(compiled.binds[name].type, ForDynamoDB)
        }
    names = compiled.bind_names
    by_key = {bind.key: name for bind, name in names.items()}
    known: dict[str, Any] = {}

    def value(bind: Any) -> Any:
        name = names.get(bind) or by_key[bind.key]
        if name not in known:
            raw = _raw(bind, name, parameters, expanded)
            known[name] = raw if processors is None else _processed(bind, raw, processors.get(name))
        return known[name]

    return value


def _raw(
    bind: Any, name: str, parameters: Mapping[str, Any], expanded: Mapping[str, list[str]] | None
) -> Any:
    if bind.expanding and name not in parameters:
        return _expanded(bind, parameters, expanded[name])
    return parameters[name]


def _processed(bind: Any, raw: Any, process: Any) -> Any:
    if bind.expanding:
        if isinstance(process, (tuple, list)):  # a tuple IN: one processor per element
            return [tuple(received(p(e) if p else e) for p, e in zip(process, v, strict=True)) for v in raw]
        return [received(process(v) if process else v) for v in raw]
    return received(process(raw) if process else raw)


def _expanded(bind: Any, parameters: Mapping[str, Any], names: list[str]) -> list[Any]:
    """An IN list's values from the parameters it was expanded into (a tuple's elements each
    became one, in order)."""
    flat = [parameters[n] for n in names]
    width = len(bind.type.types) if getattr(bind.type, "_is_tuple_type", False) else 0
    return [tuple(flat[i : i + width]) for i in range(0, len(flat), width)] if width else flat
