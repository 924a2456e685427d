"""WHERE expressions: each test of the normal form (normal_form.py) as PartiQL, with the guards
SQL's three-valued logic needs, the checks only values can decide recorded for the execution,
and a CompileError naming any construct DynamoDB cannot evaluate."""

from __future__ import annotations

import contextlib
import re
from typing import Any, NoReturn

from sqlalchemy import String, TypeDecorator, exc, false, true
from sqlalchemy.sql import compiler, elements, functions, operators, sqltypes

from ...limits import FUNCTIONS, MAX_IN_OPERANDS, MAX_PARTITION_KEYS
from ...sqlalchemy_private import retyped
from .normal_form import (
    COMPARISON,
    _attribute_first,
    _condition,
    _equals,
    _is_boolean_attribute,
    _negated,
    has_affinity,
)

SUPPORTED_BINARY = {
    *COMPARISON,
    operators.in_op,
    operators.not_in_op,
    operators.is_,
    operators.is_not,
    operators.between_op,
    operators.startswith_op,
    operators.not_startswith_op,
    operators.like_op,
    operators.not_like_op,
    operators.not_between_op,
    operators.contains_op,
    operators.not_contains_op,
    operators.json_getitem_op,
    operators.json_path_getitem_op,
}


def refuse(what: str, instead: str) -> NoReturn:
    raise exc.CompileError(f"DynamoDB PartiQL cannot express {what}: {instead}")


COUNT_ROWS = "\x00count\x00"


def _operator_name(op: Any) -> str:
    return getattr(op, "__name__", str(op)).rstrip("_")


_LIKE_METHODS = {"begins_with": "startswith", "contains": "contains"}


class _LikeEscaped(TypeDecorator):
    """A startswith()/contains() value with LIKE escapes (autoescape=True, escape=...), sent
    with them removed: DynamoDB's begins_with and contains have no wildcards to escape."""

    impl = String
    cache_ok = True

    def __init__(self, escape: str):
        super().__init__()
        self.escaped = re.compile(re.escape(escape) + "(.)", re.DOTALL)

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return value if value is None else self.escaped.sub(r"\1", value)


def like_prefix(pattern: str, escape: str | None) -> str | None:
    """The literal prefix a LIKE pattern tests for (``'abc%'``: ``abc``), or None when the pattern
    is anything else: DynamoDB's begins_with is the only pattern match it has."""
    prefix: list[str] = []
    characters = iter(enumerate(pattern))
    for position, character in characters:
        if character == escape:
            escaped = next(characters, None)
            if escaped is None:
                return None
            prefix.append(escaped[1])
        elif character == "%" and position == len(pattern) - 1:
            return "".join(prefix)
        elif character in "%_":
            return None
        else:
            prefix.append(character)
    return None


class _LikePrefix(TypeDecorator):
    """A LIKE pattern sent as the prefix begins_with tests for (checked per execution)."""

    impl = String
    cache_ok = True

    def __init__(self, escape: str | None):
        super().__init__()
        self.escape = escape

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return like_prefix(value, self.escape) if isinstance(value, str) else value


_ORDERINGS = {
    operators.lt,
    operators.le,
    operators.gt,
    operators.ge,
    operators.between_op,
    operators.not_between_op,
}
_STRING_TESTS = {
    operators.like_op,
    operators.not_like_op,
    operators.startswith_op,
    operators.not_startswith_op,
    operators.contains_op,
    operators.not_contains_op,
}


def _keys(batch: Any, values: Any) -> list[Any]:
    """A batch read's keys, each once (SQL's IN is membership; DynamoDB refuses a call that
    names one key twice): tuples of the key's width, or partition-key values."""
    if not batch.always:
        return list(dict.fromkeys(values))
    keys = [tuple(key) if isinstance(key, (tuple, list)) else (key,) for key in values]
    if any(len(key) != batch.width for key in keys):
        refuse(
            "a key of the wrong length in tuple_(...).in_()",
            f"give each key as a tuple of {batch.width} values, in the tuple's order",
        )
    return list(dict.fromkeys(keys))


class ConditionCompiler(compiler.SQLCompiler):
    """The WHERE half of the DynamoDB compiler (statements.py holds the statements)."""

    _refuse = staticmethod(refuse)

    # -- WHERE expressions ----------------------------------------------------------------

    @staticmethod
    def _is_key(clause: Any) -> bool:
        """A table key attribute: every item has it, so it needs no presence guard, and
        DynamoDB Local fails IS [NOT] MISSING and attribute_exists() on it."""
        return isinstance(clause, elements.ColumnClause) and getattr(clause, "primary_key", False)

    def _guarded(self, binary, text: str, **kw) -> str:
        # PartiQL: a negated test is TRUE when the attribute is missing or stored as NULL (as
        # boto3 writes None); SQL: unknown, no row. attribute_exists() rather than IS NOT
        # MISSING, which DynamoDB Local fails beside ORDER BY; <> NULL is TRUE for a missing one.
        subject = binary.left
        if isinstance(subject, functions.FunctionElement):  # size(x) <> ?: the guard tests x
            subject = next(iter(subject.clauses), subject)
        if self._is_key(subject):
            return text
        attribute = self.process(subject, **kw)
        return f"({text} AND attribute_exists({attribute}) AND {attribute} <> NULL)"

    def _unordered(self, what: str) -> None:
        # DynamoDB Local fails NOT (...) in a statement with ORDER BY (InternalFailure).
        if self._ordered:
            self._refuse(
                f"{what} together with ORDER BY", "filter these rows in Python, or drop the ORDER BY"
            )

    def _record_key_values(self, binary, right: Any = None) -> None:
        """Remember the parameters compared with a key attribute: an empty string there is
        checked at execution (DynamoDB rejects empty key values even in comparisons). ``right``
        is the value as rendered, when it is not the binary's own."""
        if not self._is_key(binary.left):
            return
        right = binary.right if right is None else right
        right = right.element if isinstance(right, elements.Grouping) else right
        binds = getattr(right, "clauses", [right])  # BETWEEN's bounds are a clause list
        for bind in binds:
            if isinstance(bind, elements.BindParameter) and bind in self.bind_names:
                self.dynamodb_key_parameters[self.bind_names[bind]] = binary.left.name

    def visit_binary(self, binary, override_operator=None, **kw):
        if override_operator is None and (oriented := _attribute_first(binary)) is not binary:
            return self.process(oriented, **kw)
        op = override_operator or binary.operator
        if op not in SUPPORTED_BINARY:
            self._refuse(
                f"the operator {_operator_name(op)}",
                "use comparisons, IN, BETWEEN, IS NULL, startswith() or contains(); filter further in Python",
            )
        if isinstance(binary.left, elements.BindParameter) and isinstance(
            binary.right, elements.BindParameter
        ):
            self._refuse("a comparison of two values", "compare an attribute with a value")
        self._check_operands(binary, op)
        text = super().visit_binary(binary, override_operator=override_operator, **kw)
        self._record_key_values(binary)
        return text

    def _check_operands(self, binary, op) -> None:
        """Refuse operands DynamoDB rejects (or answers differently from SQL) before sending."""
        left, right = binary.left, binary.right
        inner = right.element if isinstance(right, elements.Grouping) else right
        if isinstance(left, elements.Tuple) or isinstance(inner, elements.Tuple):
            self._refuse(
                "a tuple comparison (tuple_(...))",
                "compare each attribute with its value: and_(a == x, b == y)",
            )
        for operand in getattr(inner, "clauses", [inner]):  # BETWEEN's bounds are a clause list
            if isinstance(operand, elements.ColumnClause) and not operand.is_literal:
                self._refuse(
                    f"a comparison of two attributes ({getattr(left, 'name', '?')} and {operand.name})",
                    "compare an attribute with a value",
                )
        if op in _ORDERINGS and has_affinity(left.type, sqltypes.Boolean):
            self._refuse(
                f"an ordering of the boolean attribute {getattr(left, 'name', '')}".rstrip(),
                "DynamoDB orders no booleans; compare with == True or == False",
            )
        if op in _STRING_TESTS and has_affinity(
            left.type, (sqltypes.Integer, sqltypes.Numeric, sqltypes.Boolean)
        ):
            self._refuse(
                f"{_operator_name(op)} on the {left.type.__visit_name__} attribute {getattr(left, 'name', '')}",
                "DynamoDB's begins_with and contains test strings, sets and lists; compare numbers with "
                "==, <, >= or between()",
            )

    def visit_ne_binary(self, binary, operator, **kw):
        left, right = self.process(binary.left, **kw), self.process(binary.right, **kw)
        return self._guarded(binary, f"{left} <> {right}", **kw)

    def visit_is__binary(self, binary, operator, **kw):
        left = self.process(binary.left, **kw)
        if not isinstance(binary.right, elements.Null):
            self._refuse("IS with a value other than NULL", "compare with == instead")
        if self._is_key(binary.left):
            return f"{left} IS NULL"  # never true: a key always has a value
        return f"({left} IS NULL OR {left} IS MISSING)"

    def visit_is_not_binary(self, binary, operator, **kw):
        left = self.process(binary.left, **kw)
        if not isinstance(binary.right, elements.Null):
            self._refuse("IS NOT with a value other than NULL", "compare with != instead")
        # <> NULL is TRUE for any stored value but NULL, and DynamoDB Local accepts it beside
        # ORDER BY, where IS NOT NULL fails.
        if self._is_key(binary.left):
            return f"{left} <> NULL"
        return f"(attribute_exists({left}) AND {left} <> NULL)"

    def _in(self, binary, **kw) -> str:
        right = binary.right
        if isinstance(right, elements.Grouping):
            right = right.element
        if not (isinstance(right, elements.BindParameter) and right.expanding):
            self._refuse("IN with a subquery or expression list", "pass a Python list of values to in_()")
        # The expanding parameter renders as "(?, ?, ...)"; PartiQL lists are "[?, ?, ...]".
        values = self.process(right, **kw)
        if values.startswith("(") and values.endswith(")"):
            values = values[1:-1]
        return f"{self.process(binary.left, **kw)} IN [{values}]"

    def visit_in_op_binary(self, binary, operator, **kw):
        text = self._in(binary, **kw)
        self._record_key_values(binary)
        return text

    def visit_not_in_op_binary(self, binary, operator, **kw):
        # Beside ORDER BY, where DynamoDB Local fails NOT, the execution rewrites the list into
        # a chain of <> (see not_in_as_chain) once the list's length is known.
        self.dynamodb_not_in_chain = self.dynamodb_not_in_chain or self._ordered
        text = self._guarded(binary, f"NOT {self._in(binary, **kw)}", **kw)
        self._record_key_values(binary)
        return text

    def visit_empty_set_op_expr(self, type_, expand_op, **kw):
        self._refuse("IN with an empty list", "skip the query when the list is empty (it matches no row)")

    def _literal_execute_expanding_parameter(self, name, parameter, values, **kw):
        batch = self.dynamodb_batch_get
        if batch is not None and name == batch.keys:
            return super()._literal_execute_expanding_parameter(name, parameter, _keys(batch, values), **kw)
        # A repeated partition key would return its partition twice; IN means membership.
        with contextlib.suppress(TypeError):  # unhashable values (documents) stay as given
            values = list(dict.fromkeys(values))
        if name == self._partition_key_list and len(values) > MAX_PARTITION_KEYS:
            self._refuse(
                f"IN with {len(values)} partition keys",
                f"DynamoDB reads at most {MAX_PARTITION_KEYS} partitions in one query; split the list "
                "into several queries",
            )
        if len(values) > MAX_IN_OPERANDS:
            self._refuse(
                f"IN with {len(values)} values",
                f"DynamoDB takes at most {MAX_IN_OPERANDS}; split the list into several queries",
            )
        return super()._literal_execute_expanding_parameter(name, parameter, values, **kw)

    def visit_between_op_binary(self, binary, operator, dynamodb_key_condition=False, **kw):
        left = self.process(binary.left, **kw)
        low, high = (self.process(bound, **kw) for bound in binary.right.clauses)
        self._record_key_values(binary)
        if dynamodb_key_condition:
            # As a key condition DynamoDB rejects low > high; the execution answers no rows instead.
            self.dynamodb_key_between = tuple(self.bind_names[b] for b in binary.right.clauses)
            return f"{left} BETWEEN {low} AND {high}"
        # Elsewhere the same test without BETWEEN, which DynamoDB rejects for low > high.
        return f"({left} >= {low} AND {left} <= {high})"

    def visit_not_between_op_binary(self, binary, operator, **kw):
        left = self.process(binary.left, **kw)
        low, high = (self.process(bound, **kw) for bound in binary.right.clauses)
        self._record_key_values(binary)
        return f"({left} < {low} OR {left} > {high})"  # both false when the attribute is missing

    def _function_of_value(self, name: str, binary, like: bool = False, **kw) -> str:
        right = binary.right
        if not isinstance(right, elements.BindParameter):
            what = "LIKE with a pattern that is not a value" if like else f"{name}() of an expression"
            self._refuse(what, "pass the value as a Python value")
        escape = binary.modifiers.get("escape")
        if like:
            # LIKE 'prefix%' is begins_with(x, 'prefix'); any other pattern is refused per execution.
            right = retyped(right, _LikePrefix(escape))
        elif escape is not None:
            # begins_with/contains take the value literally: undo the LIKE escaping.
            right = retyped(right, _LikeEscaped(escape))
        text = f"{name}({self.process(binary.left, **kw)}, {self.process(right, **kw)})"
        if like:
            self.dynamodb_like_patterns[self.bind_names[right]] = escape
        elif escape is None and has_affinity(binary.left.type, String):
            # SQL reads % and _ in a LIKE pattern as wildcards: checked per execution
            self.dynamodb_like_parameters[self.bind_names[right]] = _LIKE_METHODS[name]
        self._record_key_values(binary, right)
        return text

    def visit_startswith_op_binary(self, binary, operator, **kw):
        return self._function_of_value("begins_with", binary, **kw)

    def visit_not_startswith_op_binary(self, binary, operator, **kw):
        self._unordered("NOT startswith()")
        return self._guarded(binary, f"NOT {self._function_of_value('begins_with', binary, **kw)}", **kw)

    def visit_like_op_binary(self, binary, operator, **kw):
        return self._function_of_value("begins_with", binary, like=True, **kw)

    def visit_not_like_op_binary(self, binary, operator, **kw):
        self._unordered("NOT LIKE")
        text = self._function_of_value("begins_with", binary, like=True, **kw)
        return self._guarded(binary, f"NOT {text}", **kw)

    def visit_contains_op_binary(self, binary, operator, **kw):
        return self._function_of_value("contains", binary, **kw)

    def visit_not_contains_op_binary(self, binary, operator, **kw):
        self._unordered("NOT contains()")
        return self._guarded(binary, f"NOT {self._function_of_value('contains', binary, **kw)}", **kw)

    def _path_step(self, binary, **kw) -> str:
        key = binary.right
        if not isinstance(key, elements.BindParameter):
            self._refuse("a JSON path with a computed key", "index JSON with a Python str or int")
        step = self.process(key, literal_execute=True, **kw)
        return f"[{step}]"

    def visit_json_getitem_op_binary(self, binary, operator, **kw):
        # A literal path step (rendered per execution, so the statement cache stays correct):
        # "doc"['a'][0]. DynamoDB cannot take a parameter inside a path.
        return self.process(binary.left, **kw) + self._path_step(binary, **kw)

    def visit_json_path_getitem_op_binary(self, binary, operator, **kw):
        # doc[("a", 0)]: the whole path rendered per execution, "doc"['a'][0] (see render_literal_value)
        if not isinstance(binary.right, elements.BindParameter):
            self._refuse("a JSON path with a computed key", "index JSON with a tuple of str and int")
        return self.process(binary.left, **kw) + self.process(binary.right, literal_execute=True, **kw)

    def render_literal_value(self, value, type_):
        if isinstance(type_, sqltypes.JSON.JSONPathType):
            if isinstance(value, (str, int)):
                value = (value,)
            steps = []
            for step in value:
                if isinstance(step, bool) or not isinstance(step, (str, int)):
                    self._refuse(f"the JSON path step {step!r}", "use str keys and int list positions")
                step_type = sqltypes.Integer() if isinstance(step, int) else sqltypes.String()
                steps.append(f"[{super().render_literal_value(step, step_type)}]")
            return "".join(steps)
        return super().render_literal_value(value, type_)

    def visit_function(self, func, **kw):
        name = func.name.lower()
        if name == "count":
            return self._count(func, **kw)
        arity = FUNCTIONS.get(name)
        if arity is None:
            self._refuse(
                f"the SQL function {func.name}()",
                f"DynamoDB offers {', '.join(sorted(FUNCTIONS))}; compute anything else in Python",
            )
        arguments = list(func.clauses)
        if len(arguments) != arity:
            self._refuse(f"{name}() with {len(arguments)} arguments", f"{name} takes {arity}")
        return f"{name}({', '.join(self.process(a, **kw) for a in arguments)})"

    def _count(self, func, within_columns_clause=False, **kw) -> str:
        """COUNT is computed by the driver while it pages through the matching items: the
        statement projects the partition key (count(*)) or the counted attribute."""
        arguments = list(func.clauses)
        if not within_columns_clause or self.stack[1:] or len(arguments) > 1:
            self._refuse("COUNT here", "use select(func.count()).select_from(table).where(...) on its own")
        counted = arguments[0] if arguments else None
        if isinstance(counted, elements.ColumnClause) and not counted.is_literal:
            self.dynamodb_count = "values"
            return self.process(counted, **kw)
        self.dynamodb_count = "rows"  # COUNT(), COUNT(*), COUNT(1)
        return COUNT_ROWS

    def visit_unary(self, unary, **kw):
        if unary.operator is operators.inv:
            return self.process(_negated(unary.element), **kw)
        if unary.modifier in (operators.asc_op, operators.desc_op):
            return super().visit_unary(unary, **kw)
        if unary.modifier in (operators.is_true, operators.is_false) and _is_boolean_attribute(unary.element):
            constant = true() if unary.modifier is operators.is_true else false()
            return self.process(_equals(unary.element, constant), **kw)
        self._refuse(f"the unary operator {_operator_name(unary.operator or unary.modifier)}", "remove it")

    def visit_clauselist(self, clauselist, **kw):
        if clauselist.operator in (operators.and_, operators.or_):
            clauselist = _condition(clauselist)
            if not isinstance(clauselist, elements.ClauseList):
                return self.process(clauselist, **kw)
        return super().visit_clauselist(clauselist, **kw)

    def visit_cast(self, cast, **kw):
        self._refuse("CAST", "convert the value in Python before comparing")

    def visit_case(self, clause, **kwargs):
        self._refuse("CASE", "compute it in Python")

    def visit_join(self, join, asfrom=False, **kwargs):
        self._refuse("JOIN", "query each table on its own key; model one-to-many inside an item collection")

    def visit_compound_select(self, cs, asfrom=False, compound_index=None, **kwargs):
        self._refuse("UNION/INTERSECT/EXCEPT", "run the queries separately and combine the rows in Python")

    def visit_cte(self, cte, **kwargs):
        self._refuse("a common table expression (WITH)", "run the inner query separately")

    def visit_over(self, over, **kwargs):
        self._refuse("a window function", "compute it in Python")
