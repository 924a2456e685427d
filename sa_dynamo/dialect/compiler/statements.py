"""SQL (Core and ORM) -> PartiQL: the one compiler class, which holds its parts: expressions.py
(values), conditions.py (each WHERE test), where.py (the table and the WHERE's split),
selects.py (SELECT), writes.py (INSERT/UPDATE/DELETE), client_side/single_read.py (what the
driver finishes of one read); record.py is what it tells the execution.

Strict by construction: a construct renders only if a ``visit_*`` method knows its PartiQL
meaning; anything else is a CompileError that names it. Nothing is silently dropped.
Identifiers are always double-quoted, values always ``?`` parameters.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import elements, operators, sqltypes
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.schema import Table

from ...dbapi.limits import MAX_OPERATORS
from ...exc import refuse
from ...sql_text.parser import COMPUTED_HEADER
from ...sqlalchemy_private import alternate_names
from ..client_side.single_read import ClientSideReads
from ..types import JSONElementAs
from .conditions import PATHS, Conditions
from .expressions import Expressions
from .normal_form import attribute_first, condition, described, is_json_element, negated, table_of
from .record import Record
from .selects import Selects
from .templates import operator_count
from .where import Where
from .writes import Writes


class DynamoDBCompiler(SQLCompiler):
    """Compiles Core/ORM statements to PartiQL; records what execution needs in ``record``.

    SQLAlchemy dispatches each construct to a ``visit_*`` method of this class; each is thin
    and hands the work to the part that owns it. Each part is given the compiler (to render
    operands, name parameters and fill the record) and the parts it reads, nothing else.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        self.record = Record()  # what the execution reads: compiled.record
        self.expressions = Expressions(self)  # values, JSON paths, functions, COUNT
        self.conditions = Conditions(self)  # each WHERE test, by operators.py's renderers
        self.where = Where(self, self.conditions)  # the table; key conditions, then the filter
        self.client_side = ClientSideReads(self, self.where)  # what the driver finishes of one read
        self.selects = Selects(self, self.expressions, self.conditions, self.where, self.client_side)
        self.writes = Writes(self, self.where)  # INSERT, UPDATE, DELETE: one item by its key
        super().__init__(*args, **kwargs)
        if self.record.template is not None:
            self.record.template = self.record.template.finalized(self.string)
        if self.record.plan is not None:
            self.record.plan = self.record.plan.finished(self.string)
            # a computed statement's steps were counted as each was compiled
            operators_used = 0 if self.record.program is not None else operator_count(self.string)
            if operators_used > MAX_OPERATORS:
                refuse(
                    f"a statement with {operators_used} operators and functions",
                    f"DynamoDB allows {MAX_OPERATORS}; split the condition over several queries",
                )

    def __str__(self) -> str:
        """SQL text that, run as text() or exec_driver_sql, gives the statement's rows; the
        PartiQL sent (``self.string``) leaves out what the driver finishes or computes."""
        if self.record.program is not None:
            return COMPUTED_HEADER + self.string
        if self.record.replay is None:
            return self.string
        sent, returned, tail = self.record.replay
        return self.string.replace(sent, returned, 1) + tail

    # -- values and WHERE tests: the parts that render them --------------------------------

    def sqlalchemy_binary(self, binary: Any, **kw: Any) -> str:
        """SQLAlchemy's own rendering of ``binary`` (operand, operator, operand): a comparison's."""
        return super().visit_binary(binary, **kw)

    def visit_binary(self, binary, override_operator=None, **kw):
        if override_operator is None and (oriented := attribute_first(binary)) is not binary:
            return self.process(oriented, **kw)
        op = override_operator or binary.operator
        if op in PATHS:
            return super().visit_binary(binary, override_operator=override_operator, **kw)
        return self.conditions.render(binary, op, **kw)

    def visit_unary(self, unary, **kw):
        if unary.operator is operators.inv:
            return self.process(negated(unary.element), **kw)
        if unary.modifier in (operators.asc_op, operators.desc_op):
            return super().visit_unary(unary, **kw)
        return self.conditions.render_unary(unary, **kw)

    def visit_clauselist(self, clauselist, **kw):
        if clauselist.operator in (operators.and_, operators.or_):
            clauselist = condition(clauselist)
            if not isinstance(clauselist, elements.ClauseList):
                return self.process(clauselist, **kw)
        return super().visit_clauselist(clauselist, **kw)

    def visit_empty_set_op_expr(self, type_, expand_op, **kw):
        return ""  # IN []: the execution decides it (templates.empty_lists_decided, value_checks)

    def _literal_execute_expanding_parameter(self, name, parameter, values, **kw):
        values = self.conditions.expanded_values(name, parameter, values, self.where.partition_key_list)
        return super()._literal_execute_expanding_parameter(name, parameter, values, **kw)

    def visit_function(self, func, **kw):
        self.conditions.check_function(func)
        return self.expressions.function(func, **kw)

    def visit_json_getitem_op_binary(self, binary, operator, **kw):
        return self.expressions.json_item(binary, **kw)

    def visit_json_path_getitem_op_binary(self, binary, operator, **kw):
        return self.expressions.json_path_item(binary, **kw)

    def render_literal_value(self, value, type_):
        if isinstance(type_, sqltypes.JSON.JSONPathType):
            return self.expressions.json_path(value)
        return super().render_literal_value(value, type_)

    def visit_cast(self, cast, **kw):
        refuse("CAST", "convert the value in Python before comparing")

    def visit_case(self, clause, **kwargs):
        refuse("CASE", "compute it in Python")

    def visit_over(self, over, **kwargs):
        refuse("a window function", "compute it in Python")

    # -- SELECT ----------------------------------------------------------------------------

    def visit_select(self, select_stmt, asfrom=False, insert_into=False, compound_index=None, **kw):
        if self.stack or asfrom or insert_into or compound_index is not None:
            refuse(
                "a subquery, UNION or INSERT ... SELECT",
                "run the inner query on its own and pass its results as parameters",
            )
        return super().visit_select(select_stmt, asfrom=asfrom, **kw)

    def visit_label(
        self, label, add_to_result_map=None, within_columns_clause=False, within_label_clause=False, **kw
    ):
        # PartiQL has no aliases; the result is matched to the select list by position.
        if within_columns_clause and not within_label_clause:
            if add_to_result_map is not None:
                type_ = label.type
                if is_json_element(label.element) and not isinstance(type_, sqltypes.JSON):
                    type_ = JSONElementAs(type_)  # doc["k"].as_string(): converted when read
                add_to_result_map(label.name, label.name, (label, label.name, *alternate_names(label)), type_)
            return self.process(label.element, within_columns_clause=True, within_label_clause=True, **kw)
        return self.process(label.element, within_columns_clause=False, **kw)

    def visit_bindparam(self, bindparam, within_columns_clause=False, literal_execute=False, **kw):
        if within_columns_clause and not literal_execute:  # a JSON path step is rendered inline
            refuse("a value in the select list", "select attributes; compute values in Python")
        return super().visit_bindparam(
            bindparam, within_columns_clause=within_columns_clause, literal_execute=literal_execute, **kw
        )

    def visit_column(self, column, include_table=True, **kw):
        # PartiQL reads "t"."a" as a path into attribute t; attributes are always bare names.
        table = column.table
        if not column.is_literal and table is not None and not isinstance(table_of(table), Table):
            refuse(
                f"a column of a {described(table)}",
                "select columns of the table itself",
            )
        return super().visit_column(column, include_table=False, **kw)

    def _compose_select_body(
        self, text, select, compile_state, inner_columns, froms, byfrom, toplevel, kwargs
    ):
        return self.selects.body(text, select, compile_state, inner_columns, froms, **kwargs)

    def visit_join(self, join, asfrom=False, **kwargs):
        refuse("JOIN", "query each table on its own key; model one-to-many inside an item collection")

    def visit_compound_select(self, cs, asfrom=False, compound_index=None, **kwargs):
        refuse("UNION/INTERSECT/EXCEPT", "run the queries separately and combine the rows in Python")

    def visit_cte(self, cte, **kwargs):
        refuse("a common table expression (WITH)", "run the inner query separately")

    # -- INSERT, UPDATE, DELETE --------------------------------------------------------------

    def visit_insert(self, insert_stmt, visiting_cte=None, **kw):
        return self.writes.insert(insert_stmt, **kw)

    def visit_update(self, update_stmt, visiting_cte=None, **kw):
        return self.writes.update(update_stmt, **kw)

    def visit_delete(self, delete_stmt, visiting_cte=None, **kw):
        return self.writes.delete(delete_stmt, **kw)
