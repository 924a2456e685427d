"""SQL (Core and ORM) -> PartiQL statements.

Strict by construction: a construct renders only if a ``visit_*`` method knows its PartiQL
meaning; anything else is a CompileError that names it. Nothing is silently dropped.

Statement shape (partiql-reference.md §0, §15): key conditions first, every other condition in
one parenthesised group, because DynamoDB Local silently drops key conditions of some flat AND
chains. Identifiers are always double-quoted, values always ``?`` parameters.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import elements, operators, sqltypes
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.selectable import Join

from ...constructs import Upsert
from ...limits import MAX_OPERATORS
from ...plan import Plan
from ...sqlalchemy_private import (
    alternate_names,
    crud_params,
    dml_compile_state,
    dml_extras,
    limit_clause,
    order_by_clauses,
    placeholder,
    select_extras,
    where_criteria,
)
from ..key_schema import KeySchema, key_schema
from ..types import JSONElementAs
from .access_path import RANGE_KEY_OPERATORS, access_path
from .conditions import COUNT_ROWS, ConditionCompiler, refuse
from .normal_form import _is_json_element, _table_of, is_on, is_partition_or, terms_of
from .predicate import predicate_of
from .templates import DMLTemplate, _Entry, operator_count

# What to do instead of a SELECT clause PartiQL lacks.
_SELECT_ADVICE = {
    "DISTINCT": "de-duplicate the rows in Python",
    "GROUP BY": "aggregate the rows in Python",
    "HAVING": "filter the aggregated rows in Python",
    "OFFSET": "page with sa_dynamo.paginate(..., after=token)",
    "FETCH FIRST": "use .limit(n)",
    "SELECT ... FOR UPDATE": "use a version_id_col for optimistic locking",
    "prefixes, suffixes or hints": "remove them",
}


class DynamoDBCompiler(ConditionCompiler):
    """Compiles Core/ORM statements to PartiQL; records what execution needs (row limit, DML template)."""

    dynamodb_limit_bind: str | None = None
    dynamodb_template: DMLTemplate | None = None
    dynamodb_count_only = False
    dynamodb_plan: Plan | None = None
    dynamodb_count: str | None = None  # "rows" for COUNT(*), "values" for COUNT(attribute)
    dynamodb_global_index = False
    dynamodb_hidden_columns = 0  # projected only for DynamoDB's sake, not returned
    dynamodb_key_names: tuple[str, tuple[str, ...]] | None = None  # a write's table and key
    dynamodb_key_between: tuple[str, str] | None = None  # a sort-key BETWEEN's bound parameters
    dynamodb_always_empty = False  # the WHERE folded to FALSE: no row can match
    dynamodb_not_in_chain = False  # NOT IN must become a chain of <> at execution
    dynamodb_finished_plan: tuple | None = None
    dynamodb_predicate: Any = None  # the WHERE as a Python test of an item (predicate.py)  # (plan, statement, finished plan), per execution text
    _partition_key_list: str | None = None  # the expanding parameter of an IN on the partition key

    def __init__(self, *args: Any, **kwargs: Any):
        self._key_condition = self._filter = ""
        self._hash_pinned = self._whole_key = self._ordered = False
        # parameter name -> key attribute it is compared with (checked for empty values at execution)
        self.dynamodb_key_parameters: dict[str, str] = {}
        # parameter name -> "startswith"/"contains": the method whose value may not hold % or _
        self.dynamodb_like_parameters: dict[str, str] = {}
        # parameter name -> escape character of a LIKE pattern, which must be 'prefix%'
        self.dynamodb_like_patterns: dict[str, str | None] = {}
        super().__init__(*args, **kwargs)
        if self.dynamodb_template is not None:
            self.dynamodb_template = self.dynamodb_template.finalized(self.string)
        if self.dynamodb_plan is not None:
            self.dynamodb_plan = self.dynamodb_plan.finished(self.string)
            operators_used = operator_count(self.string)
            if operators_used > MAX_OPERATORS:
                refuse(
                    f"a statement with {operators_used} operators and functions",
                    f"DynamoDB allows {MAX_OPERATORS}; split the condition over several queries",
                )

    # -- helpers ---------------------------------------------------------------------------

    def _single_table(self, from_: Any, statement: str) -> Table:
        from_ = _table_of(from_)
        if isinstance(from_, Table):
            if from_.schema is not None:
                self._refuse(
                    f"a schema-qualified table ({from_.schema}.{from_.name})",
                    "DynamoDB has no schemas; drop schema= from the Table",
                )
            return from_
        what = "JOIN" if isinstance(from_, Join) else f"{statement} from a subquery or {type(from_).__name__}"
        self._refuse(
            what,
            "query one table; joins and subqueries are not available (load related items with a "
            "second query on their partition key; an item collection loads with lazy loading or "
            "selectinload(), never joinedload/subqueryload)",
        )

    def _where_terms(self, terms: list[Any]) -> list[Any]:
        """The WHERE's terms with constant TRUE dropped; a constant FALSE means no row can match."""
        if any(isinstance(t, elements.False_) for t in terms):
            self.dynamodb_always_empty = True
        return [t for t in terms if not isinstance(t, (elements.True_, elements.False_))]

    def _where(
        self, keys: KeySchema, terms: list, full_key: str | None = None, table_hash: Any = None, **kw: Any
    ) -> str:
        """WHERE text of its terms (terms_of; see _render_where), and the same WHERE as a Python
        predicate, built after the text so that a refused construct is refused in the compiler's words."""
        terms = self._where_terms(terms)
        text = self._render_where(keys, terms, full_key, table_hash, **kw)
        self.dynamodb_predicate = (
            (lambda item, values: False) if self.dynamodb_always_empty else predicate_of(terms)
        )
        return text

    def _render_where(
        self,
        keys: KeySchema,
        terms: list[Any],
        full_key: str | None = None,
        table_hash: Any = None,
        **kw: Any,
    ) -> str:
        """WHERE text: the key conditions first, every other condition in one group.

        With ``full_key`` (UPDATE/DELETE), equality on every key attribute is required.
        ``table_hash`` is the table's partition key when a global index is read.
        """
        hash_ops = {operators.eq} if full_key else {operators.eq, operators.in_op}
        range_ops = {operators.eq} if full_key else RANGE_KEY_OPERATORS
        hash_term = next(
            (
                t
                for t in terms
                if is_on(t, keys.hash_key, hash_ops) or (not full_key and is_partition_or(t, keys.hash_key))
            ),
            None,
        )
        range_term = None
        if hash_term is not None:
            range_term = next((t for t in terms if is_on(t, keys.range_key, range_ops)), None)
        if full_key and (hash_term is None or (keys.range_key is not None and range_term is None)):
            names = ", ".join(c.name for c in keys.columns)
            self._refuse(
                f"{full_key} without equality on the whole primary key ({names})",
                f"add {' and '.join(f'{c.name} == value' for c in keys.columns)} to the WHERE clause "
                f"(select the matching keys first to {full_key.lower()} several items)",
            )
        rest = [t for t in terms if t is not hash_term and t is not range_term]
        key_parts = (
            [self.process(hash_term.self_group(against=operators.and_), **kw)]
            if hash_term is not None
            else []
        )
        if hash_term is not None and hash_term.operator is operators.in_op:
            values = (
                hash_term.right.element if isinstance(hash_term.right, elements.Grouping) else hash_term.right
            )
            self._partition_key_list = self.bind_names.get(values)
        if range_term is not None:
            key_parts.append(self.process(range_term, dynamodb_key_condition=True, **kw))
        self._key_condition = " AND ".join(key_parts)
        self._hash_pinned = hash_term is not None
        self._whole_key = (
            hash_term is not None
            and hash_term.operator is operators.eq
            and (keys.range_key is None or (range_term is not None and range_term.operator is operators.eq))
        )
        if not rest:
            self._filter = ""
            return self._key_condition
        self._filter = " AND ".join(self._filter_term(t, len(rest) > 1, table_hash, **kw) for t in rest)
        if len(rest) == 1 and not key_parts:
            return self._filter
        if not key_parts:
            # A scan's AND chain: DynamoDB Local drops tests of key attributes from some flat
            # chains, even parenthesised; NOT (NOT (...)) was never wrong (partiql-reference §15).
            return f"NOT (NOT ({self._filter}))"
        return " AND ".join([*key_parts, f"({self._filter})"])

    def _filter_term(self, term: Any, grouped: bool, table_hash: Any, **kw: Any) -> str:
        text = self.process(term.self_group(against=operators.and_) if grouped else term, **kw)
        if is_on(term, table_hash, {operators.in_op}):
            # Reading a global index, DynamoDB Local returns each matching item several times
            # for an IN on the table's partition key in the AND chain; below a NOT NOT it
            # returns each once (docs/partiql-findings.md).
            self._unordered(
                f"IN on the table's partition key {table_hash.name!r} while reading a global index"
            )
            text = f"NOT (NOT ({text}))"
        return text

    # -- SELECT ----------------------------------------------------------------------------

    def visit_select(self, select_stmt, asfrom=False, insert_into=False, compound_index=None, **kw):
        if self.stack or asfrom or insert_into or compound_index is not None:
            self._refuse(
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
                if _is_json_element(label.element) and not isinstance(type_, sqltypes.JSON):
                    type_ = JSONElementAs(type_)  # doc["k"].as_string(): converted when read
                add_to_result_map(label.name, label.name, (label, label.name, *alternate_names(label)), type_)
            return self.process(label.element, within_columns_clause=True, within_label_clause=True, **kw)
        return self.process(label.element, within_columns_clause=False, **kw)

    def visit_bindparam(self, bindparam, within_columns_clause=False, literal_execute=False, **kw):
        if within_columns_clause and not literal_execute:  # a JSON path step is rendered inline
            self._refuse("a value in the select list", "select attributes; compute values in Python")
        return super().visit_bindparam(
            bindparam, within_columns_clause=within_columns_clause, literal_execute=literal_execute, **kw
        )

    def visit_column(self, column, include_table=True, **kw):
        # PartiQL reads "t"."a" as a path into attribute t; attributes are always bare names.
        table = column.table
        if not column.is_literal and table is not None and not isinstance(_table_of(table), Table):
            self._refuse(
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
                self._refuse(what, instead)
        if len(froms) != 1:
            self._refuse(
                "a SELECT over several tables" if froms else "a SELECT without a table",
                "select from exactly one table",
            )
        table = self._single_table(froms[0], "SELECT")
        if not inner_columns:
            self._refuse("an empty select list", "select at least one column")
        if self.dynamodb_count is not None:
            if len(inner_columns) != 1:
                self._refuse("COUNT next to other columns (GROUP BY)", "count on its own, or group in Python")
            inner_columns = [
                c.replace(COUNT_ROWS, self.preparer.quote(key_schema(table).hash_key.name))
                for c in inner_columns
            ]
        table_keys = key_schema(table)
        criteria = where_criteria(select)
        terms = terms_of(criteria)  # once: the access path, ORDER BY and WHERE all read them
        index, keys, reason = access_path(table, select, compile_state, terms)
        source = self.preparer.format_table(table)
        if index is not None:
            source += "." + self.preparer.quote_identifier(index.name)
            self.dynamodb_global_index = not index.dialect_options["dynamodb"]["local"]
        order_by = self._order_by(keys, select, terms, **kwargs) if order_by_clauses(select) else ""
        self._ordered = bool(order_by)
        hash_key = self.preparer.quote(table_keys.hash_key.name)
        if order_by.endswith(" DESC") and not {hash_key, "*"} & set(inner_columns):
            # DynamoDB Local fails ORDER BY ... DESC unless the partition key is projected; it
            # is read but not returned (partiql-reference.md §5).
            inner_columns = [*inner_columns, hash_key]
            self.dynamodb_hidden_columns = 1
        text += ", ".join(inner_columns) + " FROM " + source
        table_hash = table_keys.hash_key if self.dynamodb_global_index else None
        if criteria:
            where = self._where(keys, terms, table_hash=table_hash, **kwargs)
            if where:
                text += " WHERE " + where
        else:
            self.dynamodb_predicate = predicate_of([])  # every item
        if not self._hash_pinned:
            operation = "Scan"
            reason = f"no = or IN condition on its partition key {keys.hash_key.name!r}" + (
                f"; {reason}" if reason else ""
            )
        else:
            operation = "GetItem" if self._whole_key and index is None else "Query"
        self.dynamodb_plan = Plan(
            operation,
            table.name,
            index.name if index is not None else None,
            self._key_condition,
            self._filter,
            reason=reason if operation == "Scan" else "",
        )
        text += order_by
        if limit_clause(select) is not None:
            self._row_limit(select)
        return text

    def _order_by(self, keys: KeySchema, select: Any, terms: list[Any], **kw: Any) -> str:
        if not any(is_on(t, keys.hash_key, {operators.eq}) for t in terms):
            self._refuse(
                "ORDER BY without partition-key equality",
                f"add {keys.hash_key.name} == value to the WHERE clause, or sort the rows in Python",
            )
        rendered = []
        for clause in order_by_clauses(select):
            element, direction = clause, ""
            if isinstance(clause, elements.UnaryExpression) and clause.modifier in (
                operators.asc_op,
                operators.desc_op,
            ):
                element = clause.element
                direction = " DESC" if clause.modifier is operators.desc_op else " ASC"
            if not (
                isinstance(element, elements.ColumnClause)
                and keys.range_key is not None
                and element.name == keys.range_key.name
            ):
                self._refuse(
                    f"ORDER BY {getattr(element, 'name', element)}",
                    "DynamoDB returns a partition in sort-key order only; order by the sort key "
                    f"{keys.range_key.name if keys.range_key is not None else '(this table has none)'} "
                    "or sort the rows in Python",
                )
            rendered.append(self.preparer.quote(element.name) + direction)
        return " ORDER BY " + ", ".join(rendered)

    def _row_limit(self, select: Any) -> None:
        # DynamoDB's Limit counts items evaluated, not rows returned: the cursor stops after
        # LIMIT rows instead. The bind is compiled (so it varies per execution) but not rendered.
        clause = limit_clause(select)
        if not isinstance(clause, elements.BindParameter):
            self._refuse("LIMIT with an expression", "pass an integer to .limit()")
        self.process(clause)
        self.dynamodb_limit_bind = self.bind_names[clause]

    # -- INSERT / UPDATE / DELETE ----------------------------------------------------------

    def _dml_setup(self, stmt: Any, flag: str, **kw: Any) -> tuple[Any, Any, Table]:
        compile_state = dml_compile_state(stmt, self, **kw)
        stmt = compile_state.statement
        if self.stack:
            self._refuse("a nested INSERT/UPDATE/DELETE", "run it as its own statement")
        setattr(self, flag, True)
        self.dml_compile_state = self.dml_compile_state or compile_state
        self.compile_state = self.compile_state or compile_state
        extras, other_tables = dml_extras(stmt, compile_state)
        if extras:
            self._refuse("RETURNING, prefixes or hints on a write", "remove them")
        if other_tables:
            self._refuse("a multi-table UPDATE/DELETE", "update or delete each item by its key")
        table = self._single_table(stmt.table, flag[2:].upper())
        if table.primary_key.columns:  # pandas' to_sql, for one, inserts through a keyless Table
            self.dynamodb_key_names = (table.name, tuple(c.name for c in key_schema(table).columns))
        self.stack.append({"correlate_froms": {table}, "asfrom_froms": {table}, "selectable": stmt})
        return stmt, compile_state, table

    def _entries(self, stmt: Any, compile_state: Any, quote: Any, **kw: Any) -> tuple[_Entry, ...]:
        params = crud_params(self, stmt, compile_state, **kw)
        if params.all_multi_params:
            self._refuse("a multi-row VALUES clause", "pass a list of dicts to execute() (executemany)")
        entries = []
        for column, _expr, value, names in params.single_params:
            name = next(iter(names)) if len(names) == 1 else None
            if name is None or value != placeholder(self, name):
                self._refuse(
                    f"an SQL expression as the value of {column.name}",
                    "pass a plain Python value (arithmetic updates are not translated yet)",
                )
            entries.append(_Entry(quote(column.name), value))
        if not entries:
            self._refuse("a write without values", "give at least one column a value")
        return tuple(entries)

    def visit_insert(self, insert_stmt, visiting_cte=None, **kw):
        stmt, compile_state, table = self._dml_setup(insert_stmt, "isinsert", **kw)
        if stmt.select is not None:
            self._refuse("INSERT ... SELECT", "select the rows first and insert them with executemany")
        entries = self._entries(stmt, compile_state, self.preparer.attribute_literal, **kw)
        overwrite = isinstance(stmt, Upsert)
        head = ("PUT" if overwrite else "INSERT") + " INTO " + self.preparer.format_table(table) + " VALUE"
        self.dynamodb_plan = Plan("BatchWriteItem" if overwrite else "PutItem", table.name)
        return self._render_with_binds(DMLTemplate("INSERT", head, entries, ""))

    def visit_update(self, update_stmt, visiting_cte=None, **kw):
        stmt, compile_state, table = self._dml_setup(update_stmt, "isupdate", **kw)
        entries = self._entries(stmt, compile_state, self.preparer.quote_identifier, **kw)
        keys = {c.name for c in key_schema(table).columns}
        for entry in entries:
            if entry.attribute.strip('"') in keys:
                self._refuse(
                    f"an UPDATE of the key attribute {entry.attribute}",
                    "DynamoDB keys are immutable; delete the item and insert it under the new key",
                )
        where = self._where(key_schema(table), terms_of(where_criteria(stmt)), full_key="UPDATE", **kw)
        self.dynamodb_plan = Plan("UpdateItem", table.name, None, self._key_condition, self._filter)
        head = "UPDATE " + self.preparer.format_table(table)
        return self._render_with_binds(DMLTemplate("UPDATE", head, entries, " WHERE " + where))

    def visit_delete(self, delete_stmt, visiting_cte=None, **kw):
        stmt, _compile_state, table = self._dml_setup(delete_stmt, "isdelete", **kw)
        where = self._where(key_schema(table), terms_of(where_criteria(stmt)), full_key="DELETE", **kw)
        self.dynamodb_plan = Plan("DeleteItem", table.name, None, self._key_condition, self._filter)
        self.stack.pop(-1)
        # A DELETE of a missing item succeeds silently; the old item tells whether one was deleted.
        self.dynamodb_count_only = True
        return "DELETE FROM " + self.preparer.format_table(table) + " WHERE " + where + " RETURNING ALL OLD *"

    def _render_with_binds(self, template: DMLTemplate) -> str:
        # Rendered with SQLAlchemy's own placeholders so that parameter positions are tracked;
        # __init__ re-reads the template over the final text.
        self.stack.pop(-1)
        self.dynamodb_template = template
        return template.render()
