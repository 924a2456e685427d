"""Values inside a statement: JSON paths, functions and COUNT, rendered for the compiler that
holds this part. CAST, CASE and window functions, which PartiQL lacks, the compiler refuses."""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import elements, sqltypes

from ...dbapi.limits import FUNCTIONS
from ...exc import refuse
from ..client_side.aggregates import AGGREGATES
from .normal_form import is_document

COUNT_ROWS = "\x00count\x00"


class Expressions:
    """The values and functions a condition or select list holds."""

    def __init__(self, compiler: Any):
        self.compiler = compiler
        self.aggregated = False  # an aggregate the client computes is in the select list

    def _path_step(self, binary: Any, **kw: Any) -> str:
        key = binary.right
        if not isinstance(key, elements.BindParameter):
            refuse("a JSON path with a computed key", "index JSON with a Python str or int")
        step = self.compiler.process(key, literal_execute=True, **kw)
        return f"[{step}]"

    def json_item(self, binary: Any, **kw: Any) -> str:
        # A literal path step (rendered per execution, so the statement cache stays correct):
        # "doc"['a'][0]. DynamoDB cannot take a parameter inside a path.
        return self.compiler.process(binary.left, **kw) + self._path_step(binary, **kw)

    def json_path_item(self, binary: Any, **kw: Any) -> str:
        # doc[("a", 0)]: the whole path rendered per execution, "doc"['a'][0] (see json_path)
        if not isinstance(binary.right, elements.BindParameter):
            refuse("a JSON path with a computed key", "index JSON with a tuple of str and int")
        left = self.compiler.process(binary.left, **kw)
        return left + self.compiler.process(binary.right, literal_execute=True, **kw)

    def json_path(self, value: Any) -> str:
        """A JSON path's literal value: each step in brackets."""
        if isinstance(value, (str, int)):
            value = (value,)
        steps = []
        for step in value:
            if isinstance(step, bool) or not isinstance(step, (str, int)):
                refuse(f"the JSON path step {step!r}", "use str keys and int list positions")
            step_type = sqltypes.Integer() if isinstance(step, int) else sqltypes.String()
            steps.append(f"[{self.compiler.render_literal_value(step, step_type)}]")
        return "".join(steps)

    def function(self, func: Any, **kw: Any) -> str:
        name = func.name.lower()
        if name in AGGREGATES:
            return self._aggregate(func, **kw)
        arity = FUNCTIONS.get(name)
        if arity is None:
            refuse(
                f"the SQL function {func.name}()",
                f"DynamoDB offers {', '.join(sorted(FUNCTIONS))}; compute anything else in Python",
            )
        arguments = list(func.clauses)
        if len(arguments) != arity:
            refuse(f"{name}() with {len(arguments)} arguments", f"{name} takes {arity}")
        return f"{name}({', '.join(self.compiler.process(a, **kw) for a in arguments)})"

    def _aggregate(self, func: Any, within_columns_clause: bool = False, **kw: Any) -> str:
        """COUNT alone is computed by the driver while it pages through the matching items: the
        statement projects the partition key (count(*)) or the counted attribute. Any other
        aggregate, or COUNT beside other columns, makes the SELECT one the client computes
        (client_side/select_program.py); what is rendered here is never sent."""
        name = func.name.lower()
        arguments = list(func.clauses)
        if not within_columns_clause or self.compiler.stack[1:] or len(arguments) > 1:
            refuse(
                f"{name.upper()} here",
                f"select {name}() in the select list: select(func.{name}(...)).select_from(table).where(...), "
                "grouped with .group_by() if need be",
            )
        counted = arguments[0] if arguments else None
        if name != "count" or isinstance(counted, elements.UnaryExpression):  # count(distinct(x))
            self.aggregated = True
            return f"{name}(?)"
        if isinstance(counted, elements.ColumnClause) and not counted.is_literal:
            # a JSON column's stored NULL is JSON's null, which COUNT counts
            self.compiler.record.count = "present" if is_document(counted) else "values"
            return self.compiler.process(counted, **kw)
        self.compiler.record.count = "rows"  # COUNT(), COUNT(*), COUNT(1)
        return COUNT_ROWS
