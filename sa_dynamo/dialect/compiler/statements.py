"""SQL (Core and ORM) -> PartiQL: the compiler, its record of what the execution needs, and SELECT
(writes.py holds INSERT/UPDATE/DELETE, where.py the WHERE both share).

Strict by construction: a construct renders only if a ``visit_*`` method knows its PartiQL
meaning; anything else is a CompileError that names it. Nothing is silently dropped.
Identifiers are always double-quoted, values always ``?`` parameters.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import elements, operators, sqltypes
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.selectable import Join

from ...dbapi.limits import MAX_OPERATORS
from ...exc import refuse
from ...plan import Plan
from ...sqlalchemy_private import (
    alternate_names,
    limit_clause,
    offset_clause,
    order_by_clauses,
    select_extras,
    where_criteria,
)
from ..attribute_bag import is_bag
from ..client_side.select_program import select_program
from ..client_side.single_read import NULLS_PLACES, ClientSideReads, bounded, order_columns, served
from ..key_schema import key_schema
from ..types import JSONElementAs
from .access_path import access_path
from .conditions import PATHS, Conditions
from .expressions import COUNT_ROWS, Expressions
from .normal_form import (
    attribute_first,
    condition,
    is_json_element,
    key_tuple_in,
    negated,
    table_of,
    terms_of,
)
from .predicate import predicate_of
from .record import Record
from .templates import operator_count
from .where import Where
from .writes import WriteCompiler

# What to do instead of a SELECT clause PartiQL lacks.
_SELECT_ADVICE = {
    "FETCH FIRST": "use .limit(n)",
    "SELECT ... FOR UPDATE": "use a version_id_col for optimistic locking",
    "prefixes, suffixes or hints": "remove them",
}


class DynamoDBCompiler(WriteCompiler):
    """Compiles Core/ORM statements to PartiQL; records what execution needs (row limit, DML template)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.record = Record()
        self.expressions = Expressions(self)
        self.conditions = Conditions(self)
        self.where = Where(self, self.conditions)
        self.client_side = ClientSideReads(self, self.where)
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
        self.conditions.refuse_empty_list(expand_op)

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
                f"a column of {type(table).__name__.lower()} {getattr(table, 'name', '')}",
                "select columns of the table itself",
            )
        return super().visit_column(column, include_table=False, **kw)

    def _compose_select_body(
        self, text, select, compile_state, inner_columns, froms, byfrom, toplevel, kwargs
    ):
        extras = select_extras(select)
        for what, instead in _SELECT_ADVICE.items():
            if extras[what]:
                refuse(what, instead)
        if not froms:
            refuse("a SELECT without a table", "select from a table")
        if not inner_columns:
            refuse("an empty select list", "select at least one column")
        if self._computed(froms, extras, inner_columns):
            return self._select_program(select, compile_state, froms)
        table = self.where.single_table(froms[0], "SELECT")
        if self.record.count is not None:
            inner_columns = [
                c.replace(COUNT_ROWS, self.preparer.quote(key_schema(table).hash_key.name))
                for c in inner_columns
            ]
        inner_columns = self._star_for_bag(table, inner_columns)
        if inner_columns == ["*"] and self.record.star_columns is None:
            self.record.star_table = table
        index, keys, reason = access_path(table, select, compile_state)
        source = self.preparer.format_table(table)
        if index is not None:
            source += "." + self.preparer.quote_identifier(index.name)
            self.conditions.index_keys = frozenset(
                c.name for c in (*key_schema(table).columns, *keys.columns)
            )
            self.record.global_index = not index.dialect_options["dynamodb"]["local"]
        criteria = where_criteria(select)
        terms = terms_of(criteria)
        key_list = index is None and any(key_tuple_in(t, keys.columns) for t in terms)
        order_by = ""
        if order_by_clauses(select):
            orders = order_columns(order_by_clauses(select))
            if served(keys, terms, orders, key_list):
                order_by = self._order_by(order_by_clauses(select))
            else:
                inner_columns = self.client_side.client_order(
                    keys, index is None, terms, key_list, orders, inner_columns, reason
                )
        self.conditions.ordered = bool(order_by)
        if order_by.endswith(" DESC") and "*" not in inner_columns:
            # DynamoDB Local fails ORDER BY ... DESC unless the partition key of the table or
            # index read is projected (partiql-reference.md §5, docs/partiql-findings.md), and
            # returns the pages of a longer read upwards: the driver puts them in order by the
            # sort key. Both are read but not returned.
            needed = (keys.hash_key.name, keys.range_key.name)
            hidden = [c for c in dict.fromkeys(map(self.preparer.quote, needed)) if c not in inner_columns]
            inner_columns = [*inner_columns, *hidden]
            self.record.hidden_columns = len(hidden)
        text += ", ".join(inner_columns) + " FROM " + source
        table_hash = key_schema(table).hash_key if self.record.global_index else None
        if criteria:
            where = self.where.render(keys, criteria, table_hash=table_hash, **kwargs)
            if where:
                text += " WHERE " + where
        else:
            self.record.predicate = predicate_of([])  # every item
        if self.where.key_list_columns:
            operation = "BatchGetItem"
        elif not self.where.hash_pinned:
            operation = "Scan"
            reason = f"the WHERE has no equality (= or IN) on its partition key {keys.hash_key.name!r}" + (
                f"; {reason}" if reason else ""
            )
        else:
            operation = "GetItem" if self.where.whole_key and index is None else "Query"
        self.record.plan = Plan(
            operation,
            table.name,
            index.name if index is not None else None,
            self.where.key_condition,
            self.where.filter,
            reason=reason if operation == "Scan" else "",
        )
        if index is None and (
            self.where.key_list_columns or (keys.range_key is None and self.where.partition_key_list)
        ):
            self.record.batch_get = self.client_side.batch_get(table.name, source, keys, inner_columns)
        text += order_by
        if limit_clause(select) is not None:
            self.record.limit_bind = self._row_count(limit_clause(select), "LIMIT", ".limit()")
        if offset_clause(select) is not None:
            self.record.bounded = bounded(keys, index is None, terms, key_list)
            self.record.offset_bind = self._row_count(offset_clause(select), "OFFSET", ".offset()")
        return text

    def _computed(self, froms: list[Any], extras: dict[str, bool], inner_columns: list[str]) -> bool:
        """Whether the client computes this SELECT over reads of its own (a join, GROUP BY,
        DISTINCT, an aggregate other than COUNT alone): client_side/select_program.py."""
        return (
            len(froms) != 1
            or isinstance(froms[0], Join)
            or extras["GROUP BY"]
            or extras["HAVING"]
            or extras["DISTINCT"]
            or self.expressions.aggregated
            or (self.record.count is not None and len(inner_columns) > 1)
        )

    def _select_program(self, select: Any, compile_state: Any, froms: list[Any]) -> str:
        limit, offset = limit_clause(select), offset_clause(select)
        text, self.record.plan, self.record.program = select_program(
            self,
            select,
            compile_state,
            froms,
            self._row_count(limit, "LIMIT", ".limit()") if limit is not None else None,
            self._row_count(offset, "OFFSET", ".offset()") if offset is not None else None,
        )
        self.record.count = None
        return text

    def _star_for_bag(self, table: Table, inner_columns: list[str]) -> list[str]:
        """An attribute bag holds every attribute no column names, which only ``SELECT *``
        reads: the driver is told which columns the rows have and which one is the bag."""
        bags = [c.name for c in table.columns if is_bag(c) and self.preparer.quote(c.name) in inner_columns]
        if not bags:
            return inner_columns
        names = []
        for rendered in inner_columns:
            if not (rendered.startswith('"') and rendered.endswith('"')):
                refuse(f"{rendered} beside an attribute bag", "select the entity or plain columns")
            names.append(rendered[1:-1].replace('""', '"'))
        self.record.star_columns = (tuple(names), bags[0])
        return ["*"]

    def _order_by(self, clauses: tuple[Any, ...]) -> str:
        """ORDER BY the sort key, which DynamoDB serves (client_side.served), as written."""
        rendered = []
        for clause in clauses:
            if getattr(clause, "modifier", None) in NULLS_PLACES:  # a sort key has no NULL to place
                clause = clause.element
            modifier = getattr(clause, "modifier", None)
            if modifier in (operators.asc_op, operators.desc_op):
                clause = clause.element
            direction = {operators.asc_op: " ASC", operators.desc_op: " DESC"}.get(modifier, "")
            rendered.append(self.preparer.quote(clause.name) + direction)
        return " ORDER BY " + ", ".join(rendered)

    def _row_count(self, clause: Any, what: str, method: str) -> str:
        """The parameter of a LIMIT or OFFSET: the cursor counts rows for both (DynamoDB's
        Limit counts items evaluated, not rows returned, and PartiQL has no OFFSET). The bind
        is compiled (so it varies per execution) but not rendered."""
        if not isinstance(clause, elements.BindParameter):
            refuse(f"{what} with an expression", f"pass an integer to {method}")
        self.process(clause)
        return self.bind_names[clause]

    def visit_join(self, join, asfrom=False, **kwargs):
        refuse("JOIN", "query each table on its own key; model one-to-many inside an item collection")

    def visit_compound_select(self, cs, asfrom=False, compound_index=None, **kwargs):
        refuse("UNION/INTERSECT/EXCEPT", "run the queries separately and combine the rows in Python")

    def visit_cte(self, cte, **kwargs):
        refuse("a common table expression (WITH)", "run the inner query separately")
