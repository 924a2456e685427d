"""Values inside a statement: JSON paths, literals, functions, COUNT, and a CompileError for the
expressions PartiQL lacks (CAST, CASE, window functions). The base of the compiler's mixins."""

from __future__ import annotations

from sqlalchemy.sql import compiler, elements, sqltypes

from ...dbapi.limits import FUNCTIONS
from ...exc import refuse
from ..client_side.aggregates import AGGREGATES

COUNT_ROWS = "\x00count\x00"


class ExpressionCompiler(compiler.SQLCompiler):
    """Renders the values and functions a condition or select list holds."""

    _refuse = staticmethod(refuse)
    aggregated = False  # an aggregate the client computes is in the select list

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
        if name in AGGREGATES:
            return self._aggregate(func, **kw)
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

    def _aggregate(self, func, within_columns_clause=False, **kw) -> str:
        """COUNT alone is computed by the driver while it pages through the matching items: the
        statement projects the partition key (count(*)) or the counted attribute. Any other
        aggregate, or COUNT beside other columns, makes the SELECT one the client computes
        (client_side/select_program.py); what is rendered here is never sent."""
        name = func.name.lower()
        arguments = list(func.clauses)
        if not within_columns_clause or self.stack[1:] or len(arguments) > 1:
            self._refuse(
                f"{name.upper()} here",
                f"select {name}() in the select list: select(func.{name}(...)).select_from(table).where(...), "
                "grouped with .group_by() if need be",
            )
        counted = arguments[0] if arguments else None
        if name != "count" or isinstance(counted, elements.UnaryExpression):  # count(distinct(x))
            self.aggregated = True
            return f"{name}(?)"
        if isinstance(counted, elements.ColumnClause) and not counted.is_literal:
            self.record.count = "values"
            return self.process(counted, **kw)
        self.record.count = "rows"  # COUNT(), COUNT(*), COUNT(1)
        return COUNT_ROWS

    def visit_cast(self, cast, **kw):
        self._refuse("CAST", "convert the value in Python before comparing")

    def visit_case(self, clause, **kwargs):
        self._refuse("CASE", "compute it in Python")

    def visit_over(self, over, **kwargs):
        self._refuse("a window function", "compute it in Python")
