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
from .normal_form import _attribute_first

_MISSING = object()
Values = Callable[[Any], Any]  # a bind parameter -> its value as DynamoDB receives it
Test = Callable[[Mapping[str, Any], Values], bool]

_ORDERED = {
    operators.eq: lambda a, b: a == b,
    operators.ne: lambda a, b: a != b,
    operators.lt: lambda a, b: a < b,
    operators.le: lambda a, b: a <= b,
    operators.gt: lambda a, b: a > b,
    operators.ge: lambda a, b: a >= b,
}
_NUMBERS = (int, float, Decimal)
_DOCUMENTS = (dict, list, set, frozenset)
_ATTRIBUTE_TYPES = {str: "S", bytes: "B", bool: "BOOL", dict: "M", list: "L", type(None): "NULL"}


def _kind(value: Any) -> type | None:
    """The DynamoDB type a value has, as a Python class; None for a value DynamoDB cannot compare."""
    if isinstance(value, bool):
        return bool
    if isinstance(value, _NUMBERS):
        return Decimal
    return type(value) if isinstance(value, (str, bytes)) else None


def _compare(op: Any, stored: Any, value: Any) -> bool:
    if stored is _MISSING or stored is None or value is None:
        return False
    if op is operators.eq and isinstance(stored, _DOCUMENTS):
        return _equal(stored, value)
    kind = _kind(stored)
    if kind is None or kind is not _kind(value) or (kind is bool and op not in (operators.eq, operators.ne)):
        return False
    return _ORDERED[op](stored, value)


def _equal(stored: Any, value: Any) -> bool:
    """DynamoDB's = of a map, list or set with a value: the same type throughout and equal
    values (a NULL inside equals NULL, a number inside never equals true)."""
    if isinstance(stored, dict):
        return (
            isinstance(value, dict)
            and stored.keys() == value.keys()
            and all(_equal(stored[k], value[k]) for k in stored)
        )
    if isinstance(stored, list):
        return isinstance(value, list) and len(stored) == len(value) and all(map(_equal, stored, value))
    if isinstance(stored, (set, frozenset)):
        return isinstance(value, (set, frozenset)) and stored == value
    if stored is None or value is None:
        return stored is value
    return _kind(stored) is not None and _kind(stored) is _kind(value) and stored == value


def _read(item: Mapping[str, Any], path: tuple[Any, ...]) -> Any:
    value: Any = item
    for step in path:
        if (isinstance(value, dict) and isinstance(step, str) and step in value) or (
            isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)
        ):
            value = value[step]
        else:
            return _MISSING
    return value


def _operand(clause: Any) -> Callable[[Mapping[str, Any], Values], Any]:
    """What a test reads: an attribute, a path into a document, or size() of either."""
    if isinstance(clause, functions.FunctionElement) and clause.name.lower() == "size":
        inner = _operand(next(iter(clause.clauses)))

        def size(item: Mapping[str, Any], values: Values) -> Any:
            value = inner(item, values)
            return len(value) if isinstance(value, (str, bytes, dict, list, set, frozenset)) else _MISSING

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
    name = clause.name
    steps = (name, *path)
    return lambda item, values: _read(item, steps)


def _bound(clause: Any) -> Callable[[Values], Any]:
    if isinstance(clause, elements.Grouping):
        clause = clause.element
    if isinstance(clause, (elements.True_, elements.False_)):
        constant = isinstance(clause, elements.True_)
        return lambda values: constant
    return lambda values: values(clause)


def _startswith(stored: Any, prefix: Any) -> bool:
    return isinstance(stored, (str, bytes)) and type(stored) is type(prefix) and stored.startswith(prefix)


def _contains(stored: Any, value: Any) -> bool:
    if isinstance(stored, (str, bytes)):
        return type(stored) is type(value) and value in stored
    if isinstance(stored, (set, frozenset, list)):
        return any(_kind(member) is _kind(value) and member == value for member in stored)
    return False


def _present(stored: Any) -> bool:
    return stored is not _MISSING and stored is not None


def _binary(clause: elements.BinaryExpression) -> Test:
    clause = _attribute_first(clause)  # ? = pk below an OR, as relationship loaders write it
    op = clause.operator
    if isinstance(clause.left, elements.Tuple) and op is operators.in_op:
        return _tuple_in(clause)
    operand = _operand(clause.left)
    if op is operators.ne:  # DynamoDB's <> is TRUE for a value of another type, as SQL's is
        value = _bound(clause.right)
        return lambda item, values: (
            _present(operand(item, values))
            and _present(value(values))  # x <> NULL is unknown
            and not _compare(operators.eq, operand(item, values), value(values))
        )
    if op in _ORDERED:
        value = _bound(clause.right)
        return lambda item, values: _compare(op, operand(item, values), value(values))
    if op in (operators.in_op, operators.not_in_op):
        listed = _bound(clause.right)

        def member(item: Mapping[str, Any], values: Values) -> bool:
            stored, candidates = operand(item, values), listed(values)
            found = any(_compare(operators.eq, stored, v) for v in candidates)
            if op is operators.in_op:
                return found
            # x NOT IN (a, NULL) is x <> a AND x <> NULL: never TRUE
            return _present(stored) and not found and all(v is not None for v in candidates)

        return member
    if op in (operators.between_op, operators.not_between_op):
        low, high = (_bound(bound) for bound in clause.right.clauses)

        def between(item: Mapping[str, Any], values: Values) -> bool:
            stored = operand(item, values)
            if op is operators.between_op:
                return _compare(operators.ge, stored, low(values)) and _compare(
                    operators.le, stored, high(values)
                )
            return _compare(operators.lt, stored, low(values)) or _compare(operators.gt, stored, high(values))

        return between
    if op in (operators.is_, operators.is_not):
        # IS [NOT] NULL of a key is folded before this; SQL's NULL is DynamoDB's NULL or absent
        missing = op is operators.is_
        return lambda item, values: _present(operand(item, values)) is not missing
    tests = {
        operators.startswith_op: _startswith,
        operators.like_op: _startswith,
        operators.contains_op: _contains,
    }
    negated = {
        operators.not_startswith_op: _startswith,
        operators.not_like_op: _startswith,
        operators.not_contains_op: _contains,
    }
    value = _bound(clause.right)
    if op in tests:
        return lambda item, values: tests[op](operand(item, values), value(values))
    if op in negated:

        def negation(item: Mapping[str, Any], values: Values) -> bool:
            stored, tested = operand(item, values), value(values)
            return _present(stored) and _present(tested) and not negated[op](stored, tested)

        return negation
    raise NotImplementedError(f"no predicate for the operator {op}")  # the compiler refused it already


def _tuple_in(clause: elements.BinaryExpression) -> Test:
    """``tuple_(pk, sk).in_(keys)``: some key equals the attributes, one by one."""
    operands = [_operand(element) for element in clause.left.clauses]
    listed = _bound(clause.right)

    def member(item: Mapping[str, Any], values: Values) -> bool:
        stored = [operand(item, values) for operand in operands]
        return any(
            all(_compare(operators.eq, s, v) for s, v in zip(stored, key, strict=True))
            for key in listed(values)
        )

    return member


def _function(clause: functions.FunctionElement) -> Test:
    name = clause.name.lower()
    arguments = list(clause.clauses)
    operand = _operand(arguments[0])
    if name == "attribute_exists":
        return lambda item, values: operand(item, values) is not _MISSING
    if name == "attribute_not_exists":
        return lambda item, values: operand(item, values) is _MISSING
    if name in ("begins_with", "contains"):
        value = _bound(arguments[1])
        test = _startswith if name == "begins_with" else _contains
        return lambda item, values: test(operand(item, values), value(values))
    if name == "attribute_type":
        wanted = _bound(arguments[1])

        def typed(item: Mapping[str, Any], values: Values) -> bool:
            stored = operand(item, values)
            if isinstance(stored, _NUMBERS) and not isinstance(stored, bool):
                return wanted(values) == "N"
            if isinstance(stored, (set, frozenset)):
                kinds = {_kind(member) for member in stored}
                return (
                    wanted(values) == {str: "SS", Decimal: "NS", bytes: "BS"}.get(kinds.pop())
                    if kinds
                    else False
                )
            return _ATTRIBUTE_TYPES.get(type(stored)) == wanted(values)

        return typed
    raise NotImplementedError(f"no predicate for {name}()")


def predicate_of(terms: list[Any]) -> Test | None:
    """The predicate of a WHERE's normalised AND terms (normal_form.terms_of); None for a
    WHERE this module cannot evaluate (then nothing relies on it)."""
    try:
        tests = [_test(term) for term in terms]
    except NotImplementedError:
        return None
    return lambda item, values: all(test(item, values) for test in tests)


def _test(clause: Any) -> Test:
    if isinstance(clause, elements.Grouping):
        return _test(clause.element)
    if isinstance(clause, elements.BooleanClauseList):
        parts = [_test(part) for part in clause.clauses]
        if clause.operator is operators.and_:
            return lambda item, values: all(part(item, values) for part in parts)
        return lambda item, values: any(part(item, values) for part in parts)
    if isinstance(clause, (elements.True_, elements.False_)):
        constant = isinstance(clause, elements.True_)
        return lambda item, values: constant
    if isinstance(clause, elements.BinaryExpression):
        return _binary(clause)
    if isinstance(clause, functions.FunctionElement):
        return _function(clause)
    raise NotImplementedError(f"no predicate for {type(clause).__name__}")


def values_of(
    compiled: Any, parameters: Mapping[str, Any], expanded: Mapping[str, list[str]] | None = None
) -> Values:
    """The value each bind parameter of ``compiled`` has as DynamoDB receives it, given one
    execution's parameters by name; ``expanded`` names the parameters an IN list became at
    execution (its values each processed as its own).

    As received: the column type's bind processor, then the driver's AttributeValue, read back
    as an item's attributes are. So the float 0.7 a Float column sends is the number 0.7, equal
    to the stored Decimal("0.7") as DynamoDB says, not the binary fraction nearest to it."""
    processors = bind_processors(compiled)
    names = compiled.bind_names
    by_key = {bind.key: name for bind, name in names.items()}
    known: dict[str, Any] = {}

    def value(bind: Any) -> Any:
        name = names.get(bind) or by_key[bind.key]
        if name not in known:
            known[name] = _value(bind, name, processors.get(name), parameters, expanded)
        return known[name]

    return value


def _value(
    bind: Any,
    name: str,
    process: Any,
    parameters: Mapping[str, Any],
    expanded: Mapping[str, list[str]] | None,
) -> Any:
    if bind.expanding:
        listed = parameters[name] if name in parameters else _expanded(bind, parameters, expanded[name])
        if isinstance(process, (tuple, list)):  # a tuple IN: one processor per element
            return [
                tuple(received(p(e) if p else e) for p, e in zip(process, v, strict=True)) for v in listed
            ]
        return [received(process(v) if process else v) for v in listed]
    raw = parameters[name]
    return received(process(raw) if process else raw)


def _expanded(bind: Any, parameters: Mapping[str, Any], names: list[str]) -> list[Any]:
    """An IN list's values from the parameters it was expanded into (a tuple's elements each
    became one, in order)."""
    flat = [parameters[n] for n in names]
    width = len(bind.type.types) if getattr(bind.type, "_is_tuple_type", False) else 0
    return [tuple(flat[i : i + width]) for i in range(0, len(flat), width)] if width else flat
