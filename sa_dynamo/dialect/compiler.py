"""SQL (Core and ORM) -> PartiQL.

Strict by construction: a construct renders only if a ``visit_*`` method here knows its PartiQL
meaning; anything else is a CompileError that names it. Nothing is silently dropped.

Statement shape (partiql-reference.md §0, §15): key conditions first, every other condition in
one parenthesised group, because DynamoDB Local silently drops key conditions of some flat AND
chains. Identifiers are always double-quoted, values always ``?`` parameters.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, NamedTuple, NoReturn

from sqlalchemy import Boolean, String, TypeDecorator, and_, exc, false, func, or_, true
from sqlalchemy.sql import compiler, crud, elements, functions, operators, sqltypes, visitors
from sqlalchemy.sql.schema import Index, Table
from sqlalchemy.sql.selectable import Alias, Join, Subquery

from ..dbapi import writes
from ..dml import Upsert
from ..partiql import FUNCTIONS, MAX_IN_OPERANDS, MAX_OPERATORS, MAX_PARTITION_KEYS
from ..plan import Plan
from .key_schema import KeySchema, index_key_schema, key_schema, projects, unprojected
from .options import forced_index
from .types import JSONElementAs

_COMPARISON = {
    operators.eq: " = ",
    operators.ne: " <> ",
    operators.lt: " < ",
    operators.le: " <= ",
    operators.gt: " > ",
    operators.ge: " >= ",
}
_RANGE_KEY_OPERATORS = {
    operators.eq,
    operators.lt,
    operators.le,
    operators.gt,
    operators.ge,
    operators.between_op,
    operators.startswith_op,
}
_SUPPORTED_BINARY = {
    *_COMPARISON,
    operators.in_op,
    operators.not_in_op,
    operators.is_,
    operators.is_not,
    operators.between_op,
    operators.startswith_op,
    operators.not_startswith_op,
    operators.not_between_op,
    operators.contains_op,
    operators.not_contains_op,
    operators.json_getitem_op,
    operators.json_path_getitem_op,
}


def _refuse(what: str, instead: str) -> NoReturn:
    raise exc.CompileError(f"DynamoDB PartiQL cannot express {what}: {instead}")


_COUNT_ROWS = "\x00count\x00"
_NEGATEDFUNCTIONS = {"attribute_exists": "attribute_not_exists", "attribute_not_exists": "attribute_exists"}


_QUOTED = re.compile(r'"(?:[^"]|"")*"|\'(?:[^\']|\'\')*\'')
_COMPARATORS = re.compile(r"<>|<=|>=|=|<|>")
_WORD_OPERATORS = re.compile(r"\b(?:AND|OR|NOT|IN|IS|BETWEEN)\b")
_CALLS = re.compile(r"\b\w+\(")


def operator_count(statement: str) -> int:
    """Operators and functions in a statement's WHERE, as DynamoDB counts them toward its limit
    of 300 (a BETWEEN's own AND is part of the BETWEEN)."""
    where = _QUOTED.sub(" ", statement).partition(" WHERE ")[2].partition(" ORDER BY ")[0]
    between = where.count("BETWEEN")
    return (
        len(_COMPARATORS.findall(where))
        + len(_WORD_OPERATORS.findall(where))
        - between
        + len(_CALLS.findall(where))
    )


_NOT_IN = re.compile(r'NOT ("(?:[^"]|"")*") IN \[(\?(?:, \?)*)\]')


def not_in_as_chain(statement: str) -> str:
    """``NOT "x" IN [?, ?]`` as ``("x" <> ? AND "x" <> ?)``: the same test without NOT, which
    DynamoDB Local fails beside ORDER BY. Parameters keep their order."""
    return _NOT_IN.sub(
        lambda m: "(" + " AND ".join(f"{m.group(1)} <> ?" for _ in m.group(2).split(", ")) + ")", statement
    )


def _is_boolean_attribute(clause: Any) -> bool:
    return (
        isinstance(clause, elements.ColumnClause)
        and not clause.is_literal
        and clause.type._type_affinity is Boolean
    )


def _condition(clause: Any) -> Any:
    """A WHERE clause with its NOTs pushed down to the tests and bare boolean attributes
    compared with true, so every test can carry the guard SQL's three-valued logic needs."""
    if isinstance(clause, elements.BooleanClauseList) and clause.operator in (operators.and_, operators.or_):
        parts = [_condition(c) for c in clause.clauses]
        if all(new is old for new, old in zip(parts, clause.clauses, strict=True)):
            return clause
        return _combine(clause.operator, parts)
    if isinstance(clause, elements.Grouping):
        return _condition(clause.element)
    if isinstance(clause, elements.UnaryExpression) and clause.operator is operators.inv:
        return _negated(clause.element)
    if (
        isinstance(clause, elements.BinaryExpression)
        and clause.operator in (operators.is_, operators.is_not)
        and isinstance(clause.right, elements.Null)
        and getattr(clause.left, "primary_key", False)
    ):
        # A table key always has a value, and DynamoDB refuses to compare one with NULL.
        return false() if clause.operator is operators.is_ else true()
    if isinstance(clause, elements.AsBoolean) and _is_boolean_attribute(clause.element):
        return _equals(clause.element, true() if clause.operator is operators.is_true else false())
    if _is_boolean_attribute(clause):
        return _equals(clause, true())
    return clause


def _combine(operator: Any, parts: list[Any]) -> Any:
    """AND/OR of normalised parts, with the constants a key's IS [NOT] NULL became folded away."""
    absorbing, neutral = (
        (elements.False_, elements.True_) if operator is operators.and_ else (elements.True_, elements.False_)
    )
    if any(isinstance(p, absorbing) for p in parts):
        return false() if operator is operators.and_ else true()
    parts = [p for p in parts if not isinstance(p, neutral)]
    if not parts:
        return true() if operator is operators.and_ else false()
    return parts[0] if len(parts) == 1 else (and_ if operator is operators.and_ else or_)(*parts)


def _equals(attribute: Any, constant: Any) -> Any:
    # Built directly: `column == true()` would become SQLAlchemy's IS TRUE, which PartiQL lacks.
    return elements.BinaryExpression(attribute, constant, operators.eq, negate=operators.ne)


def _negated(clause: Any) -> Any:
    """NOT clause, as a clause that is TRUE exactly where SQL's NOT is TRUE (not where it is
    unknown): De Morgan down to the tests, each test replaced by its guarded opposite."""
    clause = _condition(clause)
    if isinstance(clause, elements.BooleanClauseList) and clause.operator in (operators.and_, operators.or_):
        opposite = operators.or_ if clause.operator is operators.and_ else operators.and_
        return _combine(opposite, [_negated(c) for c in clause.clauses])
    if isinstance(clause, elements.UnaryExpression) and clause.operator is operators.inv:
        return _condition(clause.element)
    if isinstance(clause, elements.BinaryExpression) and clause.negate is not None:
        if (
            clause.operator is operators.eq
            and _is_boolean_attribute(clause.left)
            and isinstance(clause.right, elements.True_)
        ):
            return _equals(clause.left, false())
        return clause._negate()
    if isinstance(clause, functions.FunctionElement) and clause.name.lower() in _NEGATEDFUNCTIONS:
        return getattr(func, _NEGATEDFUNCTIONS[clause.name.lower()])(*clause.clauses)
    if isinstance(clause, (elements.True_, elements.False_)):
        return clause._negate()
    _refuse(f"NOT of {type(clause).__name__}", "write the opposite condition directly")


def _table_of(from_: Any) -> Any:
    """The Table behind an alias of it: with one FROM and no aliases in PartiQL, they are the same.
    (The ORM aliases a table to load a relationship to another class of the same table.)"""
    while isinstance(from_, Alias) and not isinstance(from_, Subquery):
        from_ = from_.element
    return from_


def _attribute_names(clauses: list[Any]) -> set[str]:
    """Names of the table attributes that the clauses read."""
    return {
        element.name
        for clause in clauses
        for element in visitors.iterate(clause)
        if isinstance(element, elements.ColumnClause) and not element.is_literal
    }


def _attribute_first(term: Any) -> Any:
    """``? = "pk"`` (as relationship loaders write it) as ``"pk" = ?``, so it can be a key condition."""
    if (
        isinstance(term, elements.BinaryExpression)
        and term.operator in _COMPARISON
        and isinstance(term.left, elements.BindParameter)
        and isinstance(term.right, elements.ColumnClause)
    ):
        return elements.BinaryExpression(
            term.right, term.left, operators.mirror(term.operator), type_=term.type
        )
    return term


def _is_json_element(clause: Any) -> bool:
    return isinstance(clause, elements.BinaryExpression) and clause.operator in (
        operators.json_getitem_op,
        operators.json_path_getitem_op,
    )


def _operator_name(op: Any) -> str:
    return getattr(op, "__name__", str(op)).rstrip("_")


class _Entry(NamedTuple):
    attribute: str  # rendered name: "'a'" in an INSERT tuple, '"a"' in an UPDATE
    value: str  # the value's placeholder


class DMLTemplate(NamedTuple):
    """How to re-render an INSERT/UPDATE when some values are None (attribute absent).

    INSERT omits such attributes; UPDATE REMOVEs them (keeping sparse indexes sparse).
    The value parameters come first in the statement, one per entry, in entry order.
    """

    kind: str  # "INSERT" or "UPDATE"
    head: str
    entries: tuple[_Entry, ...]
    tail: str

    def render(self, absent: frozenset[int] = frozenset()) -> str:
        if self.kind == "INSERT":
            body = ", ".join(
                f"{e.attribute}: {e.value}" for i, e in enumerate(self.entries) if i not in absent
            )
            return f"{self.head} {{{body}}}{self.tail}"
        sets = [f"{e.attribute} = {e.value}" for i, e in enumerate(self.entries) if i not in absent]
        removes = [f" REMOVE {e.attribute}" for i, e in enumerate(self.entries) if i in absent]
        return self.head + (" SET " + ", ".join(sets) if sets else "") + "".join(removes) + self.tail

    @classmethod
    def of(cls, partiql: str) -> DMLTemplate | None:
        """The template of an INSERT/UPDATE in the canonical form (as sqltext writes it too)."""
        if (match := writes.INSERT_FORM.match(partiql)) is not None:
            entries = writes.joined(writes.INSERT_ENTRY, match.group("body"), ", ")
            if entries is None:
                return None
            return cls("INSERT", match.group("head"), tuple(_Entry(a, "?") for a in entries), "")
        if (match := writes.UPDATE_FORM.match(partiql)) is not None and match.group("sets"):
            entries = writes.joined(writes.SET_ENTRY, match.group("sets"), ", ")
            if entries is None:
                return None
            tail = match.group("removes") + match.group("tail")
            return cls("UPDATE", match.group("head"), tuple(_Entry(a, "?") for a in entries), tail)
        return None

    def finalized(self, final_text: str) -> DMLTemplate:
        """The same template over the final statement text, whose placeholders are all ``?``."""
        entries = tuple(e._replace(value="?") for e in self.entries)
        prefix = self._replace(entries=entries, tail="").render()
        if not final_text.startswith(prefix):
            raise exc.CompileError(f"internal: unexpected statement text {final_text!r}")
        return self._replace(entries=entries, tail=final_text[len(prefix) :])


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


class DynamoDBCompiler(compiler.SQLCompiler):
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
    _partition_key_list: str | None = None  # the expanding parameter of an IN on the partition key

    def __init__(self, *args: Any, **kwargs: Any):
        self._key_condition = self._filter = ""
        self._hash_pinned = self._whole_key = self._ordered = False
        # parameter name -> key attribute it is compared with (checked for empty values at execution)
        self.dynamodb_key_parameters: dict[str, str] = {}
        # parameter name -> "startswith"/"contains": the method whose value may not hold % or _
        self.dynamodb_like_parameters: dict[str, str] = {}
        super().__init__(*args, **kwargs)
        if self.dynamodb_template is not None:
            self.dynamodb_template = self.dynamodb_template.finalized(self.string)
        if self.dynamodb_plan is not None:
            self.dynamodb_plan = self.dynamodb_plan.finished(self.string)
            operators_used = operator_count(self.string)
            if operators_used > MAX_OPERATORS:
                _refuse(
                    f"a statement with {operators_used} operators and functions",
                    f"DynamoDB allows {MAX_OPERATORS}; split the condition over several queries",
                )

    # -- helpers ---------------------------------------------------------------------------

    _refuse = staticmethod(_refuse)

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

    @staticmethod
    def _terms(criteria: Any) -> list[Any]:
        """The top-level AND terms of a WHERE, each normalised once (see _condition)."""
        terms: list[Any] = []

        def flatten(clause: Any) -> None:
            while isinstance(clause, elements.Grouping):
                clause = clause.element
            if isinstance(clause, elements.BooleanClauseList) and clause.operator is operators.and_:
                for part in clause.clauses:
                    flatten(part)
            else:
                terms.append(_attribute_first(clause))

        for criterion in criteria:
            flatten(_condition(criterion))
        return terms

    def _where_terms(self, criteria: Any) -> list[Any]:
        """The WHERE's terms with constant TRUE dropped; a constant FALSE means no row can match."""
        terms = self._terms(criteria)
        if any(isinstance(t, elements.False_) for t in terms):
            self.dynamodb_always_empty = True
        return [t for t in terms if not isinstance(t, (elements.True_, elements.False_))]

    @staticmethod
    def _is_on(term: Any, column: Any, ops: set | None) -> bool:
        if column is None or not isinstance(term, elements.BinaryExpression):
            return False
        left = term.left
        return (
            isinstance(left, elements.ColumnClause)
            and getattr(left, "table", None) is not None
            and _table_of(left.table) is column.table
            and left.name == column.name
            and (ops is None or term.operator in ops)
        )

    def _where(
        self, keys: KeySchema, criteria: Any, full_key: str | None = None, table_hash: Any = None, **kw: Any
    ) -> str:
        """WHERE text: the key conditions first, every other condition in one group.

        With ``full_key`` (UPDATE/DELETE), equality on every key attribute is required.
        ``table_hash`` is the table's partition key when a global index is read.
        """
        terms = self._where_terms(criteria)
        hash_ops = {operators.eq} if full_key else {operators.eq, operators.in_op}
        range_ops = {operators.eq} if full_key else _RANGE_KEY_OPERATORS
        hash_term = next((t for t in terms if self._is_on(t, keys.hash_key, hash_ops)), None)
        range_term = None
        if hash_term is not None:
            range_term = next((t for t in terms if self._is_on(t, keys.range_key, range_ops)), None)
        if full_key and (hash_term is None or (keys.range_key is not None and range_term is None)):
            names = ", ".join(c.name for c in keys.columns)
            self._refuse(
                f"{full_key} without equality on the whole primary key ({names})",
                f"add {' and '.join(f'{c.name} == value' for c in keys.columns)} to the WHERE clause "
                f"(select the matching keys first to {full_key.lower()} several items)",
            )
        rest = [t for t in terms if t is not hash_term and t is not range_term]
        key_parts = [self.process(hash_term, **kw)] if hash_term is not None else []
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
        if self._is_on(term, table_hash, {operators.in_op}):
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
                add_to_result_map(label.name, label.name, (label, label.name, *label._alt_names), type_)
            return label.element._compiler_dispatch(
                self, within_columns_clause=True, within_label_clause=True, **kw
            )
        return label.element._compiler_dispatch(self, within_columns_clause=False, **kw)

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
        for present, what, instead in (
            (select._distinct or select._distinct_on, "DISTINCT", "de-duplicate the rows in Python"),
            (select._group_by_clauses, "GROUP BY", "aggregate the rows in Python"),
            (select._having_criteria, "HAVING", "filter the aggregated rows in Python"),
            (select._offset_clause is not None, "OFFSET", "page with sa_dynamo.paginate(..., after=token)"),
            (select._fetch_clause is not None, "FETCH FIRST", "use .limit(n)"),
            (
                select._for_update_arg is not None,
                "SELECT ... FOR UPDATE",
                "use a version_id_col for optimistic locking",
            ),
            (
                select._prefixes or select._suffixes or select._hints,
                "prefixes, suffixes or hints",
                "remove them",
            ),
        ):
            if present:
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
                c.replace(_COUNT_ROWS, self.preparer.quote(key_schema(table).hash_key.name))
                for c in inner_columns
            ]
        index, keys, reason = self._access_path(table, select, compile_state)
        source = self.preparer.format_table(table)
        if index is not None:
            source += "." + self.preparer.quote_identifier(index.name)
            self.dynamodb_global_index = not index.dialect_options["dynamodb"]["local"]
        order_by = self._order_by(keys, select, **kwargs) if select._order_by_clauses else ""
        self._ordered = bool(order_by)
        hash_key = self.preparer.quote(key_schema(table).hash_key.name)
        if order_by.endswith(" DESC") and hash_key not in inner_columns:
            # DynamoDB Local fails ORDER BY ... DESC unless the partition key is projected; it
            # is read but not returned (partiql-reference.md §5).
            inner_columns = [*inner_columns, hash_key]
            self.dynamodb_hidden_columns = 1
        text += ", ".join(inner_columns) + " FROM " + source
        table_hash = key_schema(table).hash_key if self.dynamodb_global_index else None
        where = (
            self._where(keys, select._where_criteria, table_hash=table_hash, **kwargs)
            if select._where_criteria
            else ""
        )
        if where:
            text += " WHERE " + where
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
        if select._limit_clause is not None:
            self._row_limit(select)
        return text

    def _access_path(
        self, table: Table, select: Any, compile_state: Any
    ) -> tuple[Index | None, KeySchema, str]:
        """The table, or the secondary index that can serve the query with a key condition, and
        why an index whose key the query pins was passed over.

        An index is chosen when the WHERE pins its partition key (and, for a local index, has a
        condition on its sort key that the table's sort key lacks) and it projects every
        attribute the statement reads.
        """
        keys = key_schema(table)
        terms = self._terms(select._where_criteria)
        hash_ops = {operators.eq, operators.in_op}
        needed = _attribute_names(
            [*select.selected_columns, *select._where_criteria, *select._order_by_clauses]
        )
        # the ORM's statement (its options) is the compile state's select_statement
        forced = forced_index(select, getattr(compile_state, "select_statement", None))
        if forced is not None:
            return self._forced_index(table, forced, needed)

        def pinned(column: Any, ops: set) -> bool:
            return column is not None and any(self._is_on(t, column, ops) for t in terms)

        table_hash = pinned(keys.hash_key, hash_ops)
        if table_hash and (keys.range_key is None or pinned(keys.range_key, _RANGE_KEY_OPERATORS)):
            return None, keys, ""
        passed_over = []
        for index in sorted(table.indexes, key=lambda i: i.name or ""):
            index_keys = index_key_schema(index)
            local = index.dialect_options["dynamodb"]["local"]
            usable = (
                table_hash and local and pinned(index_keys.range_key, _RANGE_KEY_OPERATORS)
                if local
                else not table_hash and pinned(index_keys.hash_key, hash_ops)
            )
            if usable:
                if projects(index, needed):
                    return index, index_keys, ""
                passed_over.append(f"index {index.name!r} does not project every attribute the query reads")
        return None, keys, "; ".join(passed_over)

    def _forced_index(self, table: Table, name: str, needed: set[str]) -> tuple[Index, KeySchema, str]:
        """The index use_index() names, if the table has it and it projects what is read."""
        index = next((i for i in table.indexes if i.name == name), None)
        if index is None:
            known = ", ".join(sorted(i.name for i in table.indexes if i.name)) or "none"
            raise exc.CompileError(
                f"table {table.name!r} has no index {name!r} (its indexes: {known}); "
                "name one of them in use_index()/dynamodb_index"
            )
        if missing := unprojected(index, needed):
            raise exc.CompileError(
                f"index {name!r} does not project {', '.join(sorted(missing))}, which the query "
                "reads: select only the attributes it projects, or read the table"
            )
        return index, index_key_schema(index), f"the index was chosen by use_index({name!r})"

    def _order_by(self, keys: KeySchema, select: Any, **kw: Any) -> str:
        terms = self._terms(select._where_criteria)
        if not any(self._is_on(t, keys.hash_key, {operators.eq}) for t in terms):
            self._refuse(
                "ORDER BY without partition-key equality",
                f"add {keys.hash_key.name} == value to the WHERE clause, or sort the rows in Python",
            )
        rendered = []
        for clause in select._order_by_clauses:
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
        clause = select._limit_clause
        if not isinstance(clause, elements.BindParameter):
            self._refuse("LIMIT with an expression", "pass an integer to .limit()")
        self.process(clause)
        self.dynamodb_limit_bind = self.bind_names[clause]

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
        if self._is_key(binary.left):
            return text
        attribute = self.process(binary.left, **kw)
        return f"({text} AND attribute_exists({attribute}) AND {attribute} <> NULL)"

    def _unordered(self, what: str) -> None:
        # DynamoDB Local fails NOT (...) in a statement with ORDER BY (InternalFailure).
        if self._ordered:
            self._refuse(
                f"{what} together with ORDER BY", "filter these rows in Python, or drop the ORDER BY"
            )

    def _record_key_values(self, binary) -> None:
        """Remember the parameters compared with a key attribute: an empty string there is
        checked at execution (DynamoDB rejects empty key values even in comparisons)."""
        if not self._is_key(binary.left):
            return
        right = binary.right.element if isinstance(binary.right, elements.Grouping) else binary.right
        binds = getattr(right, "clauses", [right])  # BETWEEN's bounds are a clause list
        for bind in binds:
            if isinstance(bind, elements.BindParameter) and bind in self.bind_names:
                self.dynamodb_key_parameters[self.bind_names[bind]] = binary.left.name

    def visit_binary(self, binary, override_operator=None, **kw):
        if override_operator is None and (oriented := _attribute_first(binary)) is not binary:
            return self.process(oriented, **kw)
        op = override_operator or binary.operator
        if op not in _SUPPORTED_BINARY:
            self._refuse(
                f"the operator {_operator_name(op)}",
                "use comparisons, IN, BETWEEN, IS NULL, startswith() or contains(); filter further in Python",
            )
        if isinstance(binary.right, elements.ColumnClause) and not binary.right.is_literal:
            self._refuse(
                f"a comparison of two attributes ({getattr(binary.left, 'name', '?')} and {binary.right.name})",
                "compare an attribute with a value",
            )
        text = super().visit_binary(binary, override_operator=override_operator, **kw)
        self._record_key_values(binary)
        return text

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

    def _function_of_value(self, name: str, binary, **kw) -> str:
        right = binary.right
        if not isinstance(right, elements.BindParameter):
            self._refuse(f"{name}() of an expression", "pass the value as a Python value")
        escape = binary.modifiers.get("escape")
        if escape is not None:
            # begins_with/contains take the value literally: undo the LIKE escaping.
            right = right._with_binary_element_type(_LikeEscaped(escape))
        text = f"{name}({self.process(binary.left, **kw)}, {self.process(right, **kw)})"
        if escape is None and binary.left.type._type_affinity is String:
            # SQL reads % and _ in a LIKE pattern as wildcards: checked per execution
            self.dynamodb_like_parameters[self.bind_names[right]] = _LIKE_METHODS[name]
        self._record_key_values(binary)
        return text

    def visit_startswith_op_binary(self, binary, operator, **kw):
        return self._function_of_value("begins_with", binary, **kw)

    def visit_not_startswith_op_binary(self, binary, operator, **kw):
        self._unordered("NOT startswith()")
        return self._guarded(binary, f"NOT {self._function_of_value('begins_with', binary, **kw)}", **kw)

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
        return _COUNT_ROWS

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

    # -- INSERT / UPDATE / DELETE ----------------------------------------------------------

    def _dml_setup(self, stmt: Any, flag: str, **kw: Any) -> tuple[Any, Any, Table]:
        compile_state = stmt._compile_state_factory(stmt, self, **kw)
        stmt = compile_state.statement
        if self.stack:
            self._refuse("a nested INSERT/UPDATE/DELETE", "run it as its own statement")
        setattr(self, flag, True)
        self.dml_compile_state = self.dml_compile_state or compile_state
        self.compile_state = self.compile_state or compile_state
        if getattr(stmt, "_returning", ()) or getattr(stmt, "_prefixes", ()) or getattr(stmt, "_hints", {}):
            self._refuse("RETURNING, prefixes or hints on a write", "remove them")
        if getattr(compile_state, "_extra_froms", None):
            self._refuse("a multi-table UPDATE/DELETE", "update or delete each item by its key")
        table = self._single_table(stmt.table, flag[2:].upper())
        if table.primary_key.columns:  # pandas' to_sql, for one, inserts through a keyless Table
            self.dynamodb_key_names = (table.name, tuple(c.name for c in key_schema(table).columns))
        self.stack.append({"correlate_froms": {table}, "asfrom_froms": {table}, "selectable": stmt})
        return stmt, compile_state, table

    def _entries(self, stmt: Any, compile_state: Any, quote: Any, **kw: Any) -> tuple[_Entry, ...]:
        params = crud._get_crud_params(self, stmt, compile_state, True, **kw)
        if params.all_multi_params:
            self._refuse("a multi-row VALUES clause", "pass a list of dicts to execute() (executemany)")
        entries = []
        for column, _expr, value, names in params.single_params:
            name = next(iter(names)) if len(names) == 1 else None
            placeholder = self.compilation_bindtemplate % {"name": self.escaped_bind_names.get(name, name)}
            if name is None or value != placeholder:
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
        where = self._where(key_schema(table), stmt._where_criteria, full_key="UPDATE", **kw)
        self.dynamodb_plan = Plan("UpdateItem", table.name, None, self._key_condition, self._filter)
        head = "UPDATE " + self.preparer.format_table(table)
        return self._render_with_binds(DMLTemplate("UPDATE", head, entries, " WHERE " + where))

    def visit_delete(self, delete_stmt, visiting_cte=None, **kw):
        stmt, _compile_state, table = self._dml_setup(delete_stmt, "isdelete", **kw)
        where = self._where(key_schema(table), stmt._where_criteria, full_key="DELETE", **kw)
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


class DynamoDBIdentifierPreparer(compiler.IdentifierPreparer):
    """Every identifier double-quoted (PartiQL reserves many common words when unquoted)."""

    def __init__(self, dialect: Any):
        super().__init__(dialect, initial_quote='"', escape_quote='"')

    def _requires_quotes(self, value: str) -> bool:
        return True

    def attribute_literal(self, name: str) -> str:
        """An attribute name as an INSERT tuple key: a single-quoted string."""
        return "'" + name.replace("'", "''") + "'"

    def format_table(self, table, use_schema=True, name=None):
        return self.quote_identifier(name or table.name)
