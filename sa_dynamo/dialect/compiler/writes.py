"""INSERT, UPDATE and DELETE: one item each, by its whole key, with the values as a template the
execution finishes per row (templates.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import CompileError
from sqlalchemy.sql import elements, operators
from sqlalchemy.sql.schema import Table

from ...constructs import Upsert
from ...exc import refuse
from ...plan import Plan
from ...sqlalchemy_private import (
    crud_params,
    dml_compile_state,
    dml_extras,
    dml_mapper,
    dml_values,
    placeholder,
    where_criteria,
)
from ..attribute_bag import is_bag
from ..client_side import foreign_keys
from ..client_side.keyed_writes import by_read_key, keyed_writes
from ..client_side.semi_joins import has_semi_join
from ..key_schema import key_schema
from .normal_form import is_on
from .templates import DMLTemplate, Entry

ARITHMETIC = {operators.add, operators.sub, operators.mul, operators.truediv, operators.mod}


def refuse_arithmetic(stmt: Any) -> None:
    """``SET n = n + 1`` is not written yet (its operator would be refused as a filter's)."""
    for key, value in dml_values(stmt).items():
        if isinstance(value, elements.BinaryExpression) and value.operator in ARITHMETIC:
            name = getattr(key, "name", key)
            raise CompileError(
                f"SET {name} to an arithmetic expression is not supported yet (sa_dynamo writes values "
                f"only): read {name} and write the result (select it, then "
                f"update(...).values({name}=new_value)), or change the attribute of the ORM object and commit"
            )


class Writes:
    """The write statements, for the compiler that holds this part (the WHERE is the Where
    part's: an UPDATE's or DELETE's names one item by its whole key)."""

    def __init__(self, compiler: Any, where: Any):
        self.compiler, self.where = compiler, where

    def _dml_setup(self, stmt: Any, flag: str, **kw: Any) -> tuple[Any, Any, Table]:
        compiler = self.compiler
        compile_state = dml_compile_state(stmt, compiler, **kw)
        stmt = compile_state.statement
        if compiler.stack:
            refuse("a nested INSERT/UPDATE/DELETE", "run it as its own statement")
        setattr(compiler, flag, True)
        compiler.dml_compile_state = compiler.dml_compile_state or compile_state
        compiler.compile_state = compiler.compile_state or compile_state
        extras, other_tables = dml_extras(stmt, compile_state)
        if extras:
            refuse("RETURNING, prefixes or hints on a write", "remove them")
        if other_tables:
            refuse("a multi-table UPDATE/DELETE", "update or delete each item by its key")
        table = self.where.single_table(stmt.table, flag[2:].upper())
        if table.primary_key.columns:  # pandas' to_sql, for one, inserts through a keyless Table
            compiler.record.key_names = (table.name, tuple(c.name for c in key_schema(table).columns))
        compiler.stack.append({"correlate_froms": {table}, "asfrom_froms": {table}, "selectable": stmt})
        return stmt, compile_state, table

    def _entries(
        self, stmt: Any, compile_state: Any, quote: Any, **kw: Any
    ) -> tuple[tuple[Entry, ...], int | None, list[tuple[Any, str]]]:
        """The entries written, which one is an attribute bag (expanded at execution, where
        the names it holds are checked against the table's columns: ``_template``), and the
        columns written with their parameters' names."""
        refuse_arithmetic(stmt)
        params = crud_params(self.compiler, stmt, compile_state, **kw)
        if params.all_multi_params:
            refuse("a multi-row VALUES clause", "pass a list of dicts to execute() (executemany)")
        entries, bag, written = [], None, []
        for column, _expr, value, names in params.single_params:
            name = next(iter(names)) if len(names) == 1 else None
            if name is None or value != placeholder(self.compiler, name):
                refuse(
                    f"an SQL expression as the value of {column.name}",
                    "pass a plain Python value (arithmetic updates are not translated yet)",
                )
            if is_bag(column):
                bag = len(entries)
            entries.append(Entry(quote(column.name), value))
            written.append((column, name))
        if not entries:
            refuse("a write without values", "give at least one column a value")
        return tuple(entries), bag, written

    def insert(self, insert_stmt: Any, **kw: Any) -> str:
        stmt, compile_state, table = self._dml_setup(insert_stmt, "isinsert", **kw)
        if stmt.select is not None:
            refuse("INSERT ... SELECT", "select the rows first and insert them with executemany")
        preparer = self.compiler.preparer
        entries, bag, _written = self._entries(stmt, compile_state, preparer.attribute_literal, **kw)
        overwrite = isinstance(stmt, Upsert)
        head = ("PUT" if overwrite else "INSERT") + " INTO " + preparer.format_table(table) + " VALUE"
        self.compiler.record.plan = Plan("BatchWriteItem" if overwrite else "PutItem", table.name)
        return self._render_with_binds(self._template(insert_stmt, "INSERT", head, entries, "", bag))

    def update(self, update_stmt: Any, **kw: Any) -> str:
        stmt, compile_state, table = self._dml_setup(update_stmt, "isupdate", **kw)
        preparer = self.compiler.preparer
        entries, bag, written = self._entries(stmt, compile_state, preparer.quote_identifier, **kw)
        keys = {c.name for c in key_schema(table).columns}
        for entry in entries:
            if entry.attribute.strip('"') in keys:
                refuse(
                    f"an UPDATE of the key attribute {entry.attribute}",
                    "DynamoDB keys are immutable; delete the item and insert it under the new key",
                )
        if not self._names_one_item(table, stmt):
            return self._by_read(stmt, table, written)
        where = self.where.render(key_schema(table), where_criteria(stmt), full_key="UPDATE", **kw)
        self.compiler.record.plan = Plan(
            "UpdateItem", table.name, None, self.where.key_condition, self.where.filter
        )
        head = "UPDATE " + preparer.format_table(table)
        return self._render_with_binds(
            self._template(update_stmt, "UPDATE", head, entries, _where_clause(where), bag)
        )

    def delete(self, delete_stmt: Any, **kw: Any) -> str:
        stmt, _compile_state, table = self._dml_setup(delete_stmt, "isdelete", **kw)
        actions = () if by_read_key(stmt) else foreign_keys.actions(table, self.compiler.dialect)
        if actions or not self._names_one_item(table, stmt):
            return self._by_read(stmt, table, [], actions)
        where = self.where.render(key_schema(table), where_criteria(stmt), full_key="DELETE", **kw)
        compiler = self.compiler
        compiler.record.plan = Plan(
            "DeleteItem", table.name, None, self.where.key_condition, self.where.filter
        )
        compiler.stack.pop(-1)
        # A DELETE of a missing item succeeds silently; the old item tells whether one was deleted.
        compiler.record.count_only = True
        return (
            f"DELETE FROM {compiler.preparer.format_table(table)}{_where_clause(where)} RETURNING ALL OLD *"
        )

    def _names_one_item(self, table: Table, stmt: Any) -> bool:
        """Whether the WHERE has an equality on each key attribute (or matches no item at all):
        then it is one write; any other WHERE, or one with a subquery, is an UPDATE/DELETE by a
        read (keyed_writes.py)."""
        if has_semi_join(where_criteria(stmt)):
            return False
        terms = self.where.folded_terms(where_criteria(stmt))
        keys = key_schema(table)
        return self.compiler.record.always_empty or (
            any(is_on(t, keys.hash_key, {operators.eq}) for t in terms)
            and (keys.range_key is None or any(is_on(t, keys.range_key, {operators.eq}) for t in terms))
        )

    def _by_read(self, stmt: Any, table: Table, written: list[tuple[Any, str]], actions: tuple = ()) -> str:
        """An UPDATE (``written``: its columns and parameters) or DELETE by any WHERE (and the
        foreign-key ``actions`` a DELETE carries out)."""
        compiler = self.compiler
        compiler.stack.pop(-1)
        text, compiler.record.plan, compiler.record.program = keyed_writes(
            compiler, stmt, table, written, actions
        )
        return text

    @staticmethod
    def _template(stmt: Any, kind: str, head: str, entries: Any, tail: str, bag: int | None) -> DMLTemplate:
        """The write's template; with an attribute bag, the table's columns, which its names
        must not be, each with the name the statement sets it by (a mapped class's attribute
        for ``insert(Product)``, else the column's key). ``stmt`` is the statement as written:
        the compile state's copy of an ORM statement has no mapper."""
        if bag is None:
            return DMLTemplate(kind, head, entries, tail)
        mapper = dml_mapper(stmt)

        def key(column: Any) -> str:
            if mapper is not None and column in mapper.columns.values():
                return mapper.get_property_by_column(column).key
            return column.key

        columns = tuple((column.name, key(column)) for column in stmt.table.columns)
        bag_name = next(key(column) for column in stmt.table.columns if is_bag(column))
        return DMLTemplate(kind, head, entries, tail, bag, columns=columns, bag_name=bag_name)

    def _render_with_binds(self, template: DMLTemplate) -> str:
        # Rendered with SQLAlchemy's own placeholders so that parameter positions are tracked;
        # __init__ re-reads the template over the final text.
        self.compiler.stack.pop(-1)
        self.compiler.record.template = template
        return template.render()


def _where_clause(where: str) -> str:
    """`` WHERE ...``; nothing for a WHERE that matches no item, which is never sent."""
    return " WHERE " + where if where else ""
