"""WHERE tests: each test of the normal form (normal_form.py) as PartiQL, with the guards SQL's
three-valued logic needs, the checks only values can decide recorded for the execution, and a
CompileError naming any operator or operand DynamoDB cannot evaluate. Which operators there are,
and which renderer below writes each, is operators.py's table."""

from __future__ import annotations

import contextlib
from typing import Any

from sqlalchemy import String, false, true
from sqlalchemy.sql import elements, functions, operators, sqltypes

from ...dbapi.limits import MAX_IN_OPERANDS, MAX_PARTITION_KEYS
from ...sqlalchemy_private import retyped
from ..operators import NULL_NEVER_TRUE, OPERATORS, ORDERINGS, STRING_TESTS, words
from ..types import BinarySet, NumberSet, StringSet
from .expressions import ExpressionCompiler
from .like import LIKE_METHODS, LikeEscaped, LikePrefix
from .normal_form import attribute_first, condition, equals, has_affinity, is_boolean_attribute, negated

# contains() tests a member of a set or list too; the other string tests take strings only.
CONTAINMENT = {operators.contains_op, operators.not_contains_op}
# A document path is no test of its own: it reads into a map or list (expressions.py).
_PATHS = {operators.json_getitem_op, operators.json_path_getitem_op}


def compared_parameters(binary: Any, right: Any = None) -> list[Any]:
    """The parameters a test compares its attribute with (BETWEEN's two bounds, an IN's list);
    ``right`` is the value as rendered, when it is not the binary's own."""
    right = binary.right if right is None else right
    right = right.element if isinstance(right, elements.Grouping) else right
    return [b for b in getattr(right, "clauses", [right]) if isinstance(b, elements.BindParameter)]


def never_true(parameter: Any, values: list[Any]) -> str | None:
    """What makes a test of ``parameter`` never TRUE in SQL, given its values (an IN list's, or
    its one value), or None: x = NULL is unknown, and so are x NOT IN (a, NULL) and x IN (NULL)."""
    if not parameter.expanding:
        return "a comparison with None" if values[0] is None else None
    if parameter.expand_op is operators.not_in_op and any(v is None for v in values):
        return "NOT IN with None in its list"
    if parameter.expand_op is operators.in_op and values and all(v is None for v in values):
        return "IN with only None in its list"
    return None


class ConditionCompiler(ExpressionCompiler):
    """Each test a WHERE holds (where.py arranges them into key conditions and a filter)."""

    # an index read's key attributes, the table's among them (statements.py sets them)
    _index_keys: frozenset[str] = frozenset()

    def _is_key(self, clause: Any) -> bool:
        """A key attribute of what is read: every item has it, so it needs no presence guard,
        and DynamoDB Local fails IS [NOT] MISSING and attribute_exists() on it."""
        return getattr(clause, "primary_key", False) or (
            isinstance(clause, elements.ColumnClause) and clause.name in self._index_keys
        )

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

    def _record_values(self, binary, right: Any = None) -> None:
        """Remember the parameters a test compares with: with a key attribute an empty string is
        checked at execution (DynamoDB rejects empty key values even in comparisons), and with
        any attribute a None (SQL's test is never TRUE; where.py marks the WHERE's top-level
        terms). ``right`` is the value as rendered, when it is not the binary's own."""
        names = [self.bind_names[b] for b in compared_parameters(binary, right) if b in self.bind_names]
        if self._is_key(binary.left):
            self.record.key_parameters.update(dict.fromkeys(names, binary.left.name))
        if binary.operator in NULL_NEVER_TRUE:
            for name in names:
                self.record.value_parameters.setdefault(name, False)

    def visit_binary(self, binary, override_operator=None, **kw):
        if override_operator is None and (oriented := attribute_first(binary)) is not binary:
            return self.process(oriented, **kw)
        op = override_operator or binary.operator
        if op in _PATHS:
            return super().visit_binary(binary, override_operator=override_operator, **kw)
        definition = OPERATORS.get(op)
        if definition is None:
            self._refuse(
                f"the operator {words(op)}",
                "use comparisons, IN, BETWEEN, IS NULL, startswith() or contains(); filter further in Python",
            )
        if isinstance(binary.left, elements.BindParameter) and isinstance(
            binary.right, elements.BindParameter
        ):
            self._refuse("a comparison of two values", "compare an attribute with a value")
        self._check_operands(binary, op)
        return getattr(self, f"render_{definition.render}")(binary, **kw)

    def render_comparison(self, binary, **kw) -> str:
        text = super().visit_binary(binary, **kw)
        self._record_values(binary)
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
        if op in ORDERINGS and has_affinity(left.type, sqltypes.Boolean):
            self._refuse(
                f"an ordering of the boolean attribute {getattr(left, 'name', '')}".rstrip(),
                "DynamoDB orders no booleans; compare with == True or == False",
            )
        if op in ORDERINGS and has_affinity(left.type, (StringSet, NumberSet, BinarySet)):
            self._refuse(
                f"an ordering of the set attribute {getattr(left, 'name', '')}".rstrip(),
                "DynamoDB orders no sets (it answers with a ValidationException); compare whole sets "
                "with == or !=, or test a member with contains()",
            )
        if op in STRING_TESTS - CONTAINMENT and has_affinity(left.type, (StringSet, NumberSet, BinarySet)):
            self._refuse(
                f"{words(op)} on the set attribute {getattr(left, 'name', '')}".rstrip(),
                "DynamoDB's begins_with tests strings (it answers a set with a ValidationException); test "
                "a member with contains()",
            )
        if op in STRING_TESTS and has_affinity(
            left.type, (sqltypes.Integer, sqltypes.Numeric, sqltypes.Boolean)
        ):
            self._refuse(
                f"{words(op)} on the {left.type.__visit_name__} attribute {getattr(left, 'name', '')}",
                "DynamoDB's begins_with and contains test strings, sets and lists; compare numbers with "
                "==, <, >= or between()",
            )

    def render_guarded_comparison(self, binary, **kw) -> str:
        left, right = self.process(binary.left, **kw), self.process(binary.right, **kw)
        text = self._guarded(binary, f"{left} <> {right}", **kw)
        self._record_values(binary)
        return text

    def render_is_null(self, binary, **kw) -> str:
        left = self.process(binary.left, **kw)
        if not isinstance(binary.right, elements.Null):
            self._refuse("IS with a value other than NULL", "compare with == instead")
        if self._is_key(binary.left):
            return f"{left} IS NULL"  # never true: a key always has a value
        return f"({left} IS NULL OR {left} IS MISSING)"

    def render_is_not_null(self, binary, **kw) -> str:
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

    def render_in_list(self, binary, **kw) -> str:
        text = self._in(binary, **kw)
        self._record_values(binary)
        return text

    def render_not_in_list(self, binary, **kw) -> str:
        # Beside ORDER BY, where DynamoDB Local fails NOT, the execution rewrites the list into
        # a chain of <> (see not_in_as_chain) once the list's length is known.
        self.record.not_in_chain = self.record.not_in_chain or self._ordered
        text = self._guarded(binary, f"NOT {self._in(binary, **kw)}", **kw)
        self._record_values(binary)
        return text

    def visit_empty_set_op_expr(self, type_, expand_op, **kw):
        if expand_op is operators.not_in_op:
            self._refuse(
                "NOT IN with an empty list",
                "leave the NOT IN condition out when the list is empty (it holds for every row)",
            )
        self._refuse("IN with an empty list", "skip the query when the list is empty (it matches no row)")

    def _literal_execute_expanding_parameter(self, name, parameter, values, **kw):
        if parameter.expand_op is operators.in_op and any(v is not None for v in values):
            # SQL's x IN (a, NULL) is TRUE where x = a and never else; PartiQL's NULL matches a
            # stored NULL. A list of None only, or NOT IN with one, is never TRUE: the
            # execution decides it (never_true) and sends nothing.
            values = [v for v in values if v is not None]
        batch = self.record.batch_get
        if batch is not None and name == batch.keys:
            return super()._literal_execute_expanding_parameter(
                name, parameter, batch.distinct_keys(values), **kw
            )
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

    def render_between(self, binary, dynamodb_key_condition=False, **kw) -> str:
        left = self.process(binary.left, **kw)
        low, high = (self.process(bound, **kw) for bound in binary.right.clauses)
        self._record_values(binary)
        if dynamodb_key_condition:
            # As a key condition DynamoDB rejects low > high; the execution answers no rows instead.
            self.record.key_between = tuple(self.bind_names[b] for b in binary.right.clauses)
            return f"{left} BETWEEN {low} AND {high}"
        # Elsewhere the same test without BETWEEN, which DynamoDB rejects for low > high.
        return f"({left} >= {low} AND {left} <= {high})"

    def render_not_between(self, binary, **kw) -> str:
        left = self.process(binary.left, **kw)
        low, high = (self.process(bound, **kw) for bound in binary.right.clauses)
        self._record_values(binary)
        return f"({left} < {low} OR {left} > {high})"  # both false when the attribute is missing

    def _function_of_value(self, name: str, binary, like: bool = False, **kw) -> str:
        right = binary.right
        if not isinstance(right, elements.BindParameter):
            what = "LIKE with a pattern that is not a value" if like else f"{name}() of an expression"
            self._refuse(what, "pass the value as a Python value")
        escape = binary.modifiers.get("escape")
        if like:
            # LIKE 'prefix%' is begins_with(x, 'prefix'); any other pattern is refused per execution.
            right = retyped(right, LikePrefix(escape))
        elif escape is not None:
            # begins_with/contains take the value literally: undo the LIKE escaping.
            right = retyped(right, LikeEscaped(escape))
        text = f"{name}({self.process(binary.left, **kw)}, {self.process(right, **kw)})"
        if like:
            self.record.like_patterns[self.bind_names[right]] = escape
        elif escape is None and has_affinity(binary.left.type, String):
            # SQL reads % and _ in a LIKE pattern as wildcards: checked per execution
            self.record.like_parameters[self.bind_names[right]] = LIKE_METHODS[name]
        self._record_values(binary, right)
        return text

    def render_begins_with(self, binary, **kw) -> str:
        return self._function_of_value("begins_with", binary, **kw)

    def render_not_begins_with(self, binary, **kw) -> str:
        self._unordered("NOT startswith()")
        return self._guarded(binary, f"NOT {self._function_of_value('begins_with', binary, **kw)}", **kw)

    def render_like(self, binary, **kw) -> str:
        return self._function_of_value("begins_with", binary, like=True, **kw)

    def render_not_like(self, binary, **kw) -> str:
        self._unordered("NOT LIKE")
        text = self._function_of_value("begins_with", binary, like=True, **kw)
        return self._guarded(binary, f"NOT {text}", **kw)

    def render_contains(self, binary, **kw) -> str:
        return self._function_of_value("contains", binary, **kw)

    def render_not_contains(self, binary, **kw) -> str:
        self._unordered("NOT contains()")
        return self._guarded(binary, f"NOT {self._function_of_value('contains', binary, **kw)}", **kw)

    def visit_unary(self, unary, **kw):
        if unary.operator is operators.inv:
            return self.process(negated(unary.element), **kw)
        if unary.modifier in (operators.asc_op, operators.desc_op):
            return super().visit_unary(unary, **kw)
        if unary.modifier in (operators.is_true, operators.is_false) and is_boolean_attribute(unary.element):
            constant = true() if unary.modifier is operators.is_true else false()
            return self.process(equals(unary.element, constant), **kw)
        self._refuse(f"the unary operator {words(unary.operator or unary.modifier)}", "remove it")

    def visit_clauselist(self, clauselist, **kw):
        if clauselist.operator in (operators.and_, operators.or_):
            clauselist = condition(clauselist)
            if not isinstance(clauselist, elements.ClauseList):
                return self.process(clauselist, **kw)
        return super().visit_clauselist(clauselist, **kw)
