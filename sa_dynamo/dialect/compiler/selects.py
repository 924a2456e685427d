"""SELECT: the select list, the table or index read (access_path.py), the WHERE (the Where
part), ORDER BY, LIMIT and OFFSET, and whether the client computes the statement instead
(client_side/select_program.py) or finishes its one read (client_side/single_read.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import elements
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.selectable import Join

from ...constructs import discriminator_after_reading
from ...exc import refuse
from ...plan import Plan
from ...sqlalchemy_private import (
    limit_clause,
    offset_clause,
    order_by_clauses,
    select_extras,
    selected_elements,
    where_criteria,
)
from ..attribute_bag import is_bag
from ..client_side.select_program import select_program
from ..client_side.semi_joins import has_semi_join
from ..client_side.single_read import bounded, order_columns, served
from ..key_schema import key_schema
from .access_path import access_path
from .expressions import COUNT_ROWS
from .normal_form import key_tuple_in, terms_of
from .predicate import predicate_of

# What to do instead of a SELECT clause PartiQL lacks.
_SELECT_ADVICE = {
    "FETCH FIRST": "use .limit(n)",
    "SELECT ... FOR UPDATE": "use a version_id_col for optimistic locking",
    "prefixes, suffixes or hints": "remove them",
}


class Selects:
    """The SELECT statement, for the compiler that holds this part, from the parts it is given:
    the values rendered (whether an aggregate is among them), the WHERE's tests and split,
    and the client side's share of one read."""

    def __init__(self, compiler: Any, expressions: Any, conditions: Any, where: Any, client_side: Any):
        self.compiler, self.expressions, self.conditions = compiler, expressions, conditions
        self.where, self.client_side = where, client_side

    def body(
        self,
        text: str,
        select: Any,
        compile_state: Any,
        inner_columns: list[str],
        froms: list[Any],
        **kw: Any,
    ) -> str:
        """The SELECT after its head: select list, table or index, WHERE, ORDER BY; what the
        execution needs in the record (plan, LIMIT and OFFSET, the client's share)."""
        record, preparer, where = self.compiler.record, self.compiler.preparer, self.where
        extras = select_extras(select)
        for what, instead in _SELECT_ADVICE.items():
            if extras[what]:
                refuse(what, instead)
        if not froms:
            refuse("a SELECT without a table", "select from a table")
        if not inner_columns:
            refuse("an empty select list", "select at least one column")
        if self._computed(froms, extras, inner_columns, where_criteria(select)) or has_semi_join(
            where_criteria(select)
        ):
            return self._select_program(select, compile_state, froms)
        table = where.single_table(froms[0], "SELECT")
        if record.count is not None:
            inner_columns = [
                c.replace(COUNT_ROWS, preparer.quote(key_schema(table).hash_key.name)) for c in inner_columns
            ]
        inner_columns = self._star_for_bag(table, inner_columns)
        if inner_columns == ["*"] and record.star_columns is None:
            record.star_table = table
        index, keys, reason = access_path(table, select, compile_state)
        source = preparer.format_table(table)
        if index is not None:
            source += "." + preparer.quote_identifier(index.name)
            self.conditions.index_keys = frozenset(
                c.name for c in (*key_schema(table).columns, *keys.columns)
            )
            record.global_index = not index.dialect_options["dynamodb"]["local"]
        criteria = where_criteria(select)
        terms = terms_of(criteria)
        key_list = index is None and any(key_tuple_in(t, keys.columns) for t in terms)
        returned, order_by, replay_tail = inner_columns, "", ""
        if order_by_clauses(select):
            orders = order_columns(order_by_clauses(select), selected_elements(compile_state))
            if served(keys, terms, orders, key_list):
                order_by = self._order_by(orders)
            else:
                replay_tail = self._order_by(orders, nulls=True)
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
            hidden = [c for c in dict.fromkeys(map(preparer.quote, needed)) if c not in inner_columns]
            inner_columns = [*inner_columns, *hidden]
            record.hidden_columns = len(hidden)
        text += ", ".join(inner_columns) + " FROM " + source
        table_hash = key_schema(table).hash_key if record.global_index else None
        if criteria:
            kinds_read = discriminator_after_reading(select, getattr(compile_state, "select_statement", None))
            if kinds_read is not None and not ({"*", preparer.quote(kinds_read)} & set(inner_columns)):
                kinds_read = None  # the driver tests the items it reads: DynamoDB tests the others
            rendered = where.render(keys, criteria, table_hash=table_hash, kinds_read=kinds_read, **kw)
            if rendered:
                text += " WHERE " + rendered
        else:
            record.predicate = predicate_of([])  # every item
        if where.key_list_columns:
            operation = "BatchGetItem"
        elif not where.hash_pinned:
            operation = "Scan"
            reason = f"the WHERE has no equality (= or IN) on its partition key {keys.hash_key.name!r}" + (
                f"; {reason}" if reason else ""
            )
        else:
            operation = "GetItem" if where.whole_key and index is None else "Query"
        record.plan = Plan(
            operation,
            table.name,
            index.name if index is not None else None,
            where.key_condition,
            where.filter,
            reason=reason if operation == "Scan" else "",
            driver_filter=where.driver_filter,
        )
        if index is None and (
            where.key_list_columns or (keys.range_key is None and where.partition_key_list)
        ):
            record.batch_get = self.client_side.batch_get(table.name, source, keys, inner_columns)
        text += order_by
        if limit_clause(select) is not None:
            record.limit_bind = self._row_count(limit_clause(select), "LIMIT", ".limit()")
        if offset_clause(select) is not None:
            record.bounded = bounded(keys, index is None, terms, key_list)
            record.offset_bind = self._row_count(offset_clause(select), "OFFSET", ".offset()")
        for word, clause in (("LIMIT", limit_clause(select)), ("OFFSET", offset_clause(select))):
            if clause is not None:
                value = clause.effective_value
                literal = (
                    self.compiler.render_literal_value(value, clause.type) if kw.get("literal_binds") else "?"
                )
                replay_tail += f" {word} {literal}"
        if replay_tail or inner_columns != returned:
            record.replay = (", ".join(inner_columns) + " FROM ", ", ".join(returned) + " FROM ", replay_tail)
        return text

    def _computed(
        self, froms: list[Any], extras: dict[str, bool], inner_columns: list[str], criteria: Any
    ) -> bool:
        """Whether the client computes this SELECT over reads of its own (a join, GROUP BY,
        DISTINCT, an aggregate other than COUNT alone, a COUNT of a list of full keys, which
        a batch of key reads cannot count): client_side/select_program.py."""
        counted_keys = (
            self.compiler.record.count is not None
            and isinstance(froms[0], Table)
            and any(key_tuple_in(t, key_schema(froms[0]).columns) for t in terms_of(criteria))
        )
        return counted_keys or (
            len(froms) != 1
            or isinstance(froms[0], Join)
            or extras["GROUP BY"]
            or extras["HAVING"]
            or extras["DISTINCT"]
            or self.expressions.aggregated
            or (self.compiler.record.count is not None and len(inner_columns) > 1)
        )

    def _select_program(self, select: Any, compile_state: Any, froms: list[Any]) -> str:
        limit, offset, record = limit_clause(select), offset_clause(select), self.compiler.record
        text, record.plan, record.program = select_program(
            self.compiler,
            select,
            compile_state,
            froms,
            self._row_count(limit, "LIMIT", ".limit()") if limit is not None else None,
            self._row_count(offset, "OFFSET", ".offset()") if offset is not None else None,
        )
        record.count = None
        return text

    def _star_for_bag(self, table: Table, inner_columns: list[str]) -> list[str]:
        """An attribute bag holds every attribute no column names, which only ``SELECT *``
        reads: the driver is told which columns the rows have and which one is the bag."""
        bags = [
            c.name
            for c in table.columns
            if is_bag(c) and self.compiler.preparer.quote(c.name) in inner_columns
        ]
        if not bags:
            return inner_columns
        names = []
        for rendered in inner_columns:
            if not (rendered.startswith('"') and rendered.endswith('"')):
                refuse(f"{rendered} beside an attribute bag", "select the entity or plain columns")
            names.append(rendered[1:-1].replace('""', '"'))
        self.compiler.record.star_columns = (tuple(names), bags[0])
        return ["*"]

    def _order_by(self, orders: list[tuple[Any, bool, bool | None]], nulls: bool = False) -> str:
        """ORDER BY the sort key, which DynamoDB serves (client_side.served), and which has no
        NULL to place; with ``nulls``, the SQL of an ORDER BY the driver applies (record.replay)."""
        quote, places = self.compiler.preparer.quote, {True: " NULLS FIRST", False: " NULLS LAST"}
        return " ORDER BY " + ", ".join(
            quote(column.name) + (" DESC" if desc else "") + (places.get(first, "") if nulls else "")
            for column, desc, first in orders
        )

    def _row_count(self, clause: Any, what: str, method: str) -> str:
        """The parameter of a LIMIT or OFFSET: the cursor counts rows for both (DynamoDB's
        Limit counts items evaluated, not rows returned, and PartiQL has no OFFSET). The bind
        is compiled (so it varies per execution) but not rendered."""
        if not isinstance(clause, elements.BindParameter):
            refuse(f"{what} with an expression", f"pass an integer to {method}")
        self.compiler.process(clause)
        return self.compiler.bind_names[clause]
