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
from ...exc import refuse
from ...sqlalchemy_private import retyped
from ..operators import NULL_NEVER_TRUE, OPERATORS, ORDERINGS, STRING_TESTS, words
from ..types import BinarySet, NumberSet, StringSet
from .like import LIKE_METHODS, LikeEscaped, LikePrefix
from .normal_form import equals, has_affinity, is_boolean_attribute, is_document

# contains() tests a member of a set or list too; the other string tests take strings only.
CONTAINMENT = {operators.contains_op, operators.not_contains_op}
# The attribute types DynamoDB's functions do not take: there DynamoDB's test is FALSE (and
# size(x) <> ? TRUE) or a ValidationException after sending, where SQL has no such test.
_NUMBERS_AND_BOOLEANS = (sqltypes.Integer, sqltypes.Numeric, sqltypes.Float, sqltypes.Boolean)
_SETS = (StringSet, NumberSet, BinarySet)
_NOT_TAKEN = {
    "size": _NUMBERS_AND_BOOLEANS,
    "contains": _NUMBERS_AND_BOOLEANS,
    "begins_with": (*_NUMBERS_AND_BOOLEANS, *_SETS, sqltypes.JSON),
}
_TAKES = {
    "size": "measures strings, binaries, sets, lists and maps",
    "contains": "tests strings, binaries, sets and lists",
    "begins_with": "tests strings and binaries",
}
_LIKES = {operators.like_op, operators.not_like_op}
# A document path is no test of its own: it reads into a map or list (expressions.py).
PATHS = {operators.json_getitem_op, operators.json_path_getitem_op}


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


class Conditions:
    """Each test a WHERE holds (where.py arranges them into key conditions and a filter), for
    the compiler that holds this part: its text, and what only values can decide in its record."""

    def __init__(self, compiler: Any):
        self.compiler = compiler
        # an index read's key attributes, the table's among them (the SELECT sets them)
        self.index_keys: frozenset[str] = frozenset()
        # the statement has an ORDER BY DynamoDB serves (the SELECT sets it)
        self.ordered = False

    def _is_key(self, clause: Any) -> bool:
        """A key attribute of what is read: every item has it, so it needs no presence guard,
        and DynamoDB Local fails IS [NOT] MISSING and attribute_exists() on it."""
        return getattr(clause, "primary_key", False) or (
            isinstance(clause, elements.ColumnClause) and clause.name in self.index_keys
        )

    def _guarded(self, binary: Any, text: str, **kw: Any) -> str:
        # PartiQL: a negated test is TRUE when the attribute is missing or stored as NULL (as
        # boto3 writes None); SQL: unknown, no row. attribute_exists() rather than IS NOT
        # MISSING, which DynamoDB Local fails beside ORDER BY; <> NULL is TRUE for a missing one.
        subject = binary.left
        if isinstance(subject, functions.FunctionElement):  # size(x) <> ?: the guard tests x
            subject = next(iter(subject.clauses), subject)
        if self._is_key(subject):
            return text
        attribute = self.compiler.process(subject, **kw)
        if is_document(subject):  # a stored NULL is JSON's null, a value
            return f"({text} AND attribute_exists({attribute}))"
        return f"({text} AND attribute_exists({attribute}) AND {attribute} <> NULL)"

    def unordered(self, what: str) -> None:
        """Refuse ``what`` beside ORDER BY: DynamoDB Local fails NOT (...) there (InternalFailure)."""
        if self.ordered:
            refuse(f"{what} together with ORDER BY", "filter these rows in Python, or drop the ORDER BY")

    def record_values(self, binary: Any, right: Any = None) -> None:
        """Remember the parameters a test compares with: with a key attribute an empty string is
        checked at execution (DynamoDB rejects empty key values even in comparisons), and with
        any attribute a None (SQL's test is never TRUE; where.py marks the WHERE's top-level
        terms). ``right`` is the value as rendered, when it is not the binary's own."""
        bind_names, record = self.compiler.bind_names, self.compiler.record
        names = [bind_names[b] for b in compared_parameters(binary, right) if b in bind_names]
        if self._is_key(binary.left):
            record.key_parameters.update(dict.fromkeys(names, binary.left.name))
        if binary.operator in NULL_NEVER_TRUE:
            for name in names:
                record.value_parameters.setdefault(name, False)

    def render(self, binary: Any, op: Any, **kw: Any) -> str:
        """The test ``binary`` with the operator ``op``, by the renderer operators.py names."""
        definition = OPERATORS.get(op)
        if definition is None:
            refuse(
                f"the operator {words(op)}",
                "use comparisons, IN, BETWEEN, IS NULL, startswith() or contains(); filter further in Python",
            )
        if isinstance(binary.left, elements.BindParameter) and isinstance(
            binary.right, elements.BindParameter
        ):
            refuse("a comparison of two values", "compare an attribute with a value")
        self._check_operands(binary, op)
        return getattr(self, f"render_{definition.render}")(binary, **kw)

    def render_comparison(self, binary: Any, **kw: Any) -> str:
        text = self.compiler.sqlalchemy_binary(binary, **kw)
        self.record_values(binary)
        return text

    def _check_operands(self, binary: Any, op: Any) -> None:
        """Refuse operands DynamoDB rejects (or answers differently from SQL) before sending."""
        left, right = binary.left, binary.right
        inner = right.element if isinstance(right, elements.Grouping) else right
        if isinstance(left, elements.Tuple) or isinstance(inner, elements.Tuple):
            refuse(
                "a tuple comparison (tuple_(...))",
                "compare each attribute with its value: and_(a == x, b == y)",
            )
        for operand in getattr(inner, "clauses", [inner]):  # BETWEEN's bounds are a clause list
            if isinstance(operand, elements.ColumnClause) and not operand.is_literal:
                refuse(
                    f"a comparison of two attributes ({getattr(left, 'name', '?')} and {operand.name})",
                    "compare an attribute with a value",
                )
        if op in ORDERINGS and has_affinity(left.type, sqltypes.Boolean):
            refuse(
                f"an ordering of the boolean attribute {getattr(left, 'name', '')}".rstrip(),
                "DynamoDB orders no booleans; compare with == True or == False",
            )
        if op in ORDERINGS and (has_affinity(left.type, _SETS) or is_document(left)):
            kind = "set" if has_affinity(left.type, _SETS) else "JSON document"
            refuse(
                f"an ordering of the {kind} attribute {getattr(left, 'name', '')}".rstrip(),
                f"DynamoDB orders no {kind}s (it answers with a ValidationException); compare whole "
                f"{kind}s with == or !=, or test "
                + ("a member with contains()" if kind == "set" else "a value inside it by its path"),
            )
        if op in STRING_TESTS:
            # SQL's string tests of a whole document test its JSON text; DynamoDB's functions its parts
            function = "contains" if op in CONTAINMENT else "begins_with"
            self._refuse_operand(f"{words(op)} on", function, left, (*_NOT_TAKEN[function], sqltypes.JSON))
        if op in _LIKES and has_affinity(left.type, sqltypes.LargeBinary):
            refuse(
                f"{words(op)} on the binary attribute {getattr(left, 'name', '')}".rstrip(),
                "SQL's LIKE matches no byte prefix (SQLite's never matches a binary value); test a "
                "prefix with func.begins_with(column, prefix)",
            )

    def _refuse_operand(self, what: str, function: str, operand: Any, refused: tuple[type, ...]) -> None:
        """Refuse DynamoDB's ``function`` (or the SQL test it renders) of an attribute of a type
        it does not take (of a document, only a whole one: a path into it may hold any type)."""
        if not has_affinity(operand.type, refused):
            return
        if has_affinity(operand.type, sqltypes.JSON) and not is_document(operand):
            return
        if has_affinity(operand.type, _SETS):
            kind, instead = "set", "test a member with contains()"
        elif has_affinity(operand.type, sqltypes.JSON):
            kind, instead = "JSON document", "test a value inside it by its path: column['key'] == value"
        elif has_affinity(operand.type, sqltypes.Boolean):
            kind, instead = "boolean", "compare it with == True or == False"
        else:
            kind, instead = operand.type.__visit_name__, "compare the number with ==, <, >= or between()"
        refuse(
            f"{what} the {kind} attribute {getattr(operand, 'name', '')}".rstrip(),
            f"DynamoDB's {function} {_TAKES[function]}; {instead}",
        )

    def check_function(self, func: Any) -> None:
        """Refuse size(), contains() or begins_with() of an attribute type DynamoDB's function
        does not take (a path into a document may hold any type)."""
        name = func.name.lower()
        arguments = list(func.clauses)
        if name in _NOT_TAKEN and arguments:
            self._refuse_operand(f"{name}() of", name, arguments[0], _NOT_TAKEN[name])

    def render_guarded_comparison(self, binary: Any, **kw: Any) -> str:
        left, right = self.compiler.process(binary.left, **kw), self.compiler.process(binary.right, **kw)
        text = self._guarded(binary, f"{left} <> {right}", **kw)
        self.record_values(binary)
        return text

    def render_is_null(self, binary: Any, **kw: Any) -> str:
        left = self.compiler.process(binary.left, **kw)
        if not isinstance(binary.right, elements.Null):
            refuse("IS with a value other than NULL", "compare with == instead")
        if self._is_key(binary.left):
            return f"{left} IS NULL"  # never true: a key always has a value
        if is_document(binary.left):  # a stored NULL is JSON's null
            return f"{left} IS MISSING"
        return f"({left} IS NULL OR {left} IS MISSING)"

    def render_is_not_null(self, binary: Any, **kw: Any) -> str:
        left = self.compiler.process(binary.left, **kw)
        if not isinstance(binary.right, elements.Null):
            refuse("IS NOT with a value other than NULL", "compare with != instead")
        # <> NULL is TRUE for any stored value but NULL, and DynamoDB Local accepts it beside
        # ORDER BY, where IS NOT NULL fails.
        if self._is_key(binary.left):
            return f"{left} <> NULL"
        if is_document(binary.left):
            return f"attribute_exists({left})"
        return f"(attribute_exists({left}) AND {left} <> NULL)"

    def in_list(self, binary: Any, **kw: Any) -> str:
        """``x IN [?, ?, ...]``, the list an expanding parameter (no subquery, no expressions)."""
        right = binary.right
        if isinstance(right, elements.Grouping):
            right = right.element
        if not (isinstance(right, elements.BindParameter) and right.expanding):
            refuse("IN with a subquery or expression list", "pass a Python list of values to in_()")
        # The expanding parameter renders as "(?, ?, ...)"; PartiQL lists are "[?, ?, ...]".
        values = self.compiler.process(right, **kw)
        if values.startswith("(") and values.endswith(")"):
            values = values[1:-1]
        return f"{self.compiler.process(binary.left, **kw)} IN [{values}]"

    def render_in_list(self, binary: Any, **kw: Any) -> str:
        text = self.in_list(binary, **kw)
        self.record_values(binary)
        return text

    def render_not_in_list(self, binary: Any, **kw: Any) -> str:
        # Beside ORDER BY, where DynamoDB Local fails NOT, the execution rewrites the list into
        # a chain of <> (see not_in_as_chain) once the list's length is known.
        record = self.compiler.record
        record.not_in_chain = record.not_in_chain or self.ordered
        text = self._guarded(binary, f"NOT {self.in_list(binary, **kw)}", **kw)
        self.record_values(binary)
        if self._is_key(binary.left) and not getattr(binary.left, "primary_key", False):
            for bind in compared_parameters(binary):
                record.sparse_not_in[self.compiler.bind_names[bind]] = binary.left.name
        return text

    def expanded_values(
        self, name: str, parameter: Any, values: list[Any], partition_key_list: str | None
    ) -> list[Any]:
        """The values an IN list's parameter ``name`` expands to in one execution, within
        DynamoDB's caps (``partition_key_list``: the parameter of an IN on the partition key)."""
        if parameter.expand_op is operators.in_op and any(v is not None for v in values):
            # SQL's x IN (a, NULL) is TRUE where x = a and never else; PartiQL's NULL matches a
            # stored NULL. A list of None only, or NOT IN with one, is never TRUE: the
            # execution decides it (never_true) and sends nothing.
            values = [v for v in values if v is not None]
        batch = self.compiler.record.batch_get
        if batch is not None and name == batch.keys:
            return batch.distinct_keys(values)
        # A repeated partition key would return its partition twice; IN means membership.
        with contextlib.suppress(TypeError):  # unhashable values (documents) stay as given
            values = list(dict.fromkeys(values))
        if name == partition_key_list and len(values) > MAX_PARTITION_KEYS:
            refuse(
                f"IN with {len(values)} partition keys",
                f"DynamoDB reads at most {MAX_PARTITION_KEYS} partitions in one query; split the list "
                "into several queries",
            )
        if len(values) > MAX_IN_OPERANDS:
            refuse(
                f"IN with {len(values)} values",
                f"DynamoDB takes at most {MAX_IN_OPERANDS}; split the list into several queries",
            )
        return values

    def render_between(self, binary: Any, as_key_condition: bool = False, **kw: Any) -> str:
        left = self.compiler.process(binary.left, **kw)
        low, high = (self.compiler.process(bound, **kw) for bound in binary.right.clauses)
        self.record_values(binary)
        if as_key_condition:
            # As a key condition DynamoDB rejects low > high; the execution answers no rows instead.
            bind_names = self.compiler.bind_names
            self.compiler.record.key_between = tuple(bind_names[b] for b in binary.right.clauses)
            return f"{left} BETWEEN {low} AND {high}"
        # Elsewhere the same test without BETWEEN, which DynamoDB rejects for low > high.
        return f"({left} >= {low} AND {left} <= {high})"

    def render_not_between(self, binary: Any, **kw: Any) -> str:
        left = self.compiler.process(binary.left, **kw)
        low, high = (self.compiler.process(bound, **kw) for bound in binary.right.clauses)
        self.record_values(binary)
        return f"({left} < {low} OR {left} > {high})"  # both false when the attribute is missing

    def _function_of_value(self, name: str, binary: Any, like: bool = False, **kw: Any) -> str:
        right = binary.right
        if not isinstance(right, elements.BindParameter):
            what = "LIKE with a pattern that is not a value" if like else f"{name}() of an expression"
            refuse(what, "pass the value as a Python value")
        escape = binary.modifiers.get("escape")
        if like:
            # LIKE 'prefix%' is begins_with(x, 'prefix'); any other pattern is refused per execution.
            right = retyped(right, LikePrefix(escape))
        elif escape is not None:
            # begins_with/contains take the value literally: undo the LIKE escaping.
            right = retyped(right, LikeEscaped(escape))
        process, record = self.compiler.process, self.compiler.record
        text = f"{name}({process(binary.left, **kw)}, {process(right, **kw)})"
        if name == "begins_with" and self._is_key(binary.left):
            record.key_prefixes[self.compiler.bind_names[right]] = process(binary.left, **kw)
        if like:
            record.like_patterns[self.compiler.bind_names[right]] = escape
        elif escape is None and has_affinity(binary.left.type, String):
            # SQL reads % and _ in a LIKE pattern as wildcards: checked per execution
            record.like_parameters[self.compiler.bind_names[right]] = LIKE_METHODS[name]
        self.record_values(binary, right)
        return text

    def render_begins_with(self, binary: Any, **kw: Any) -> str:
        return self._function_of_value("begins_with", binary, **kw)

    def render_not_begins_with(self, binary: Any, **kw: Any) -> str:
        self.unordered("NOT startswith()")
        return self._guarded(binary, f"NOT {self._function_of_value('begins_with', binary, **kw)}", **kw)

    def render_like(self, binary: Any, **kw: Any) -> str:
        return self._function_of_value("begins_with", binary, like=True, **kw)

    def render_not_like(self, binary: Any, **kw: Any) -> str:
        self.unordered("NOT LIKE")
        text = self._function_of_value("begins_with", binary, like=True, **kw)
        return self._guarded(binary, f"NOT {text}", **kw)

    def render_contains(self, binary: Any, **kw: Any) -> str:
        return self._function_of_value("contains", binary, **kw)

    def render_not_contains(self, binary: Any, **kw: Any) -> str:
        self.unordered("NOT contains()")
        return self._guarded(binary, f"NOT {self._function_of_value('contains', binary, **kw)}", **kw)

    def render_unary(self, unary: Any, **kw: Any) -> str:
        """IS TRUE / IS FALSE of a boolean attribute, as == TRUE / == FALSE; any other unary
        operator (NOT and ASC/DESC are the compiler's) is refused."""
        if unary.modifier in (operators.is_true, operators.is_false) and is_boolean_attribute(unary.element):
            constant = true() if unary.modifier is operators.is_true else false()
            return self.compiler.process(equals(unary.element, constant), **kw)
        refuse(f"the unary operator {words(unary.operator or unary.modifier)}", "remove it")
