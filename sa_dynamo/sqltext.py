"""Hand-written SQL text -> DynamoDB PartiQL, by the rules the compiler applies to constructs.

``text()``, ``exec_driver_sql()`` and ``pandas.read_sql()`` hand the dialect SQL text, which the
compiler never sees. sqlglot parses it; this module walks the tree and writes the PartiQL itself,
as the compiler writes it for the same query: key conditions first and every other condition in
one group (a scan's as ``NOT (NOT (...))``, partiql-reference.md §15), ``attribute_exists()``
guards that keep SQL's three-valued logic, identifiers double-quoted, values left as the
parameters or literals the user wrote. Whatever has no PartiQL meaning is a TranslationError that
names it. No I/O: the caller says what the keys are.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any, NamedTuple, NoReturn

from sqlalchemy import exc
from sqlglot import exp, parser, tokens
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from .partiql import FUNCTIONS, MAX_IN_OPERANDS, MAX_PARTITION_KEYS


class KeyNames(NamedTuple):
    """What the translator needs to know about a table: its key attribute names."""

    hash_key: str
    range_key: str | None
    indexes: dict[str, tuple[str, str | None]] = {}  # index name -> (hash key, range key)


class TranslationError(exc.CompileError):
    """SQL text that DynamoDB PartiQL cannot express: the same kind of error as the compiler's."""


def _refuse(what: str, instead: str) -> NoReturn:
    raise TranslationError(f"DynamoDB PartiQL cannot express {what}: {instead}")


def _refuse_empty_key(attribute: str) -> NoReturn:
    # The compiler's words, so that both roads give the same refusal.
    _refuse(
        f"a comparison of key attribute {attribute!r} with an empty value",
        "no key is empty, so leave the condition out or skip the query",
    )


class Bound(NamedTuple):
    """A value a test compares with, known when the statement runs: the input parameter
    ``index``, or the ``literal`` written in the text."""

    index: int | None
    literal: Any = None

    def of(self, parameters: Sequence[Any]) -> Any:
        return self.literal if self.index is None else parameters[self.index]


class Checks(NamedTuple):
    """What only the values decide, checked when the statement runs, as the compiled path
    checks its parameters: DynamoDB rejects an empty key value even in a filter (no key is
    empty: refused), and rejects a sort-key BETWEEN with reversed bounds (SQL: no row)."""

    key_values: tuple[tuple[int, str], ...] = ()  # (input parameter, key attribute compared with it)
    key_between: tuple[Bound, Bound] | None = None  # a sort-key condition's BETWEEN bounds
    always_empty: bool = False  # the WHERE folded to FALSE (a key attribute IS NULL)
    partition_keys: tuple[Bound, ...] = ()  # a key condition's IN list

    def no_rows(self, rows: Sequence[Sequence[Any]]) -> bool:
        """Whether the statement can match no row, so nothing need be sent; a refusal for an
        empty value compared with a key attribute."""
        for row in rows:
            for index, attribute in self.key_values:
                if isinstance(row[index], (str, bytes)) and not row[index]:
                    _refuse_empty_key(attribute)
            listed = [bound.of(row) for bound in self.partition_keys]
            if len(set(map(_hashable, listed))) < len(listed):
                # The compiler drops repeats; here the text is fixed, so they are refused.
                _refuse(
                    "an IN list naming one partition key twice",
                    "DynamoDB would return that partition once per mention; list each key once",
                )
        if self.always_empty:
            return True
        if self.key_between is None or not rows:
            return False
        low, high = (bound.of(rows[0]) for bound in self.key_between)
        try:
            return bool(low > high)
        except TypeError:  # values of different types: DynamoDB's own error says so
            return False


def _hashable(value: Any) -> Any:
    """The value, or its identity when unhashable (DynamoDB refuses such a key itself)."""
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


class Translation(NamedTuple):
    """One statement as PartiQL, plus what execution needs that PartiQL cannot say."""

    text: str  # PartiQL with `?` placeholders
    order: tuple[int, ...]  # for each `?` in text, the index of the input parameter it takes
    limit: int | None  # LIMIT as a row count (never sent to DynamoDB; the cursor stops after it)
    limit_param: int | None  # index of the input parameter holding the LIMIT, for `LIMIT ?`
    kind: str  # SELECT / INSERT / UPDATE / DELETE
    checks: Checks = Checks()  # what the parameter values decide when the statement runs


_FUNCTION_ADVICE = f"DynamoDB offers {', '.join(sorted(FUNCTIONS))}; compute anything else in Python"
_CONDITION_ADVICE = (
    "use comparisons, IN, BETWEEN, IS NULL, LIKE 'prefix%' or DynamoDB's functions; filter further in Python"
)
_SUBQUERY_ADVICE = "run the inner query on its own and pass its results as parameters"

_COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_MIRRORED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_OPPOSITE = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_EXISTENCE = {"attribute_exists": "attribute_not_exists", "attribute_not_exists": "attribute_exists"}
_HASH_OPERATORS = {"=", "IN"}
_RANGE_OPERATORS = {"=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"}
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.DPipe, exp.Neg)

# Statement clauses sqlglot parses that PartiQL has no counterpart for (sqlglot's argument names).
_CLAUSES = {
    "distinct": ("DISTINCT", "de-duplicate the rows in Python"),
    "group": ("GROUP BY", "aggregate the rows in Python"),
    "having": ("HAVING", "filter the aggregated rows in Python"),
    "offset": ("OFFSET", "page with sa_dynamo.paginate(..., after=token)"),
    "joins": ("JOIN", "query each table on its own key; model one-to-many inside an item collection"),
    "laterals": ("LATERAL", "query one table"),
    "with": ("a common table expression (WITH)", "run the inner query separately"),
    "locks": ("SELECT ... FOR UPDATE", "use a version_id_col for optimistic locking"),
    "from": ("UPDATE ... FROM", "update each item by its key"),
    "using": ("DELETE ... USING", "delete each item by its key"),
    "tables": ("a multi-table DELETE", "delete each item by its key"),
    "returning": ("RETURNING on this statement", "remove it; read the item by its key afterwards"),
    "conflict": (
        "INSERT ... ON CONFLICT",
        "INSERT fails on an existing key; use the upsert construct to overwrite",
    ),
}

# A `?` in the output carries its input index until the text is final: "\0<index>\0".
_MARKER = re.compile("\x00([0-9]+)\x00")
_ANSI = re.compile("\x1b\\[[0-9;]*m")


class _Parser(parser.Parser):
    """sqlglot's parser plus what PartiQL adds: several SET/REMOVE clauses in UPDATE,
    ``RETURNING ALL OLD *``, and ``?`` placeholders that remember where they stand in the text
    (parameters are positional, and sqlglot's tree does not keep source order)."""

    # DynamoDB's functions stay anonymous calls under their own names.
    FUNCTIONS = {name: f for name, f in parser.Parser.FUNCTIONS.items() if name.lower() not in FUNCTIONS}
    PLACEHOLDER_PARSERS = {
        **parser.Parser.PLACEHOLDER_PARSERS,
        TokenType.PLACEHOLDER: lambda self: self._positional_placeholder(),
    }

    def _positional_placeholder(self) -> exp.Placeholder:
        placeholder = exp.Placeholder()
        placeholder.meta["start"] = self._prev.start
        return placeholder

    def _parse_update(self) -> exp.Update:
        # sqlglot keeps only the last of several SET clauses; REMOVE a is taken as SET a = NULL,
        # which is what NULL means here (attribute absent).
        table = self._parse_table_parts()
        if not self._match_texts(("SET", "REMOVE"), advance=False):  # else REMOVE is read as an alias
            table.set("alias", self._parse_table_alias(self.UPDATE_ALIAS_TOKENS))
        assignments: list[exp.Expression] = []
        while True:
            if self._match(TokenType.SET):
                assignments.extend(self._parse_csv(self._parse_update_assignment))
            elif self._match_text_seq("REMOVE"):
                path = self._parse_column()
                if path is None:
                    self.raise_error("Expected an attribute after REMOVE")
                assignments.append(exp.EQ(this=path, expression=exp.Null()))
            else:
                break
        return exp.Update(
            this=table,
            expressions=assignments,
            from_=self._parse_from(joins=True),
            where=self._parse_where(),
            returning=self._parse_returning(),
        )

    def _parse_returning(self) -> exp.Returning | None:
        for which, image in itertools.product(("ALL", "MODIFIED"), ("OLD", "NEW")):
            if self._match_text_seq("RETURNING", which, image, "*"):
                return exp.Returning(expressions=[exp.var(f"{which} {image} *")])
        return super()._parse_returning()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _is_missing(node: exp.Expression) -> bool:
    """PartiQL's MISSING (unquoted), which sqlglot reads as a column."""
    return (
        isinstance(node, exp.Column)
        and not node.table
        and not node.this.quoted
        and node.name.upper() == "MISSING"
    )


def _is_path(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Column, exp.Dot, exp.Bracket)) and not _is_missing(node)


def _is_value(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Placeholder, exp.Literal, exp.Boolean, exp.Null)) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string
    )


def _is_size(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() == "size"


def _is_operand(node: exp.Expression) -> bool:
    """What a test can compare: an attribute path or size() of one."""
    return _is_path(node) or _is_size(node)


def _attribute(node: exp.Expression) -> str | None:
    """The attribute a plain (one-part) name refers to; None for a path into one."""
    return node.name if isinstance(node, exp.Column) and len(node.parts) == 1 else None


def _refuse_expression(node: exp.Expression) -> NoReturn:
    """The error for an expression with no PartiQL counterpart, named as specifically as we can."""
    if isinstance(node, (exp.Subquery, exp.Select, exp.Exists, exp.SetOperation)):
        _refuse("a subquery", _SUBQUERY_ADVICE)
    if isinstance(node, exp.Case):
        _refuse("CASE", "compute it in Python")
    if isinstance(node, exp.Cast):
        _refuse("CAST", "convert the value in Python before comparing")
    if isinstance(node, exp.Window):
        _refuse("a window function", "compute it in Python")
    if isinstance(node, exp.AggFunc):
        _refuse(f"the aggregate {node.sql()}", "select the attributes and aggregate the rows in Python")
    if isinstance(node, exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        _refuse(f"the SQL function {name}()", _FUNCTION_ADVICE)
    if isinstance(node, _ARITHMETIC):
        _refuse(f"arithmetic ({node.sql()})", "compute the value in Python and pass it as a parameter")
    if isinstance(node, exp.Paren):
        _refuse_expression(node.this)
    _refuse(node.sql(), _CONDITION_ADVICE)


def _plain(node: exp.Expression, *allowed: str) -> None:
    """Refuse a node that carries anything besides the arguments we translate."""
    if any(value and key not in allowed for key, value in node.args.items()):
        _refuse(node.sql(), _CONDITION_ADVICE)


def _check_clauses(statement: exp.Expression, *allowed: str) -> None:
    for key, value in statement.args.items():
        name = key.rstrip("_")
        if value and name not in allowed:
            what, instead = _CLAUSES.get(name, (f"the clause {name.upper()}", "remove it"))
            _refuse(what, instead)


class _Test(NamedTuple):
    """One rendered test, with what key-condition detection needs."""

    text: str
    attribute: str | None  # the top-level attribute compared, None for a path or a function of one
    operator: str | None  # "=", "IN", "<", ..., "BETWEEN", "begins_with"; None: never a key condition
    # Sibling tests this one already contains, under AND or OR: our own output, read again,
    # translates to itself instead of gaining a second guard.
    absorbs: tuple[str, tuple[str, ...]] | None = None
    absorbed_as: str | None = None  # what a sibling's absorbs names this test by, if not its text
    key_text: str | None = None  # the text when it is the key condition, if that differs
    bounds: tuple[Bound, Bound] | None = None  # BETWEEN's, checked when it is the key condition
    listed: tuple[Bound, ...] = ()  # IN's values, checked when it is the key condition


class _Group(NamedTuple):
    operator: str  # "AND" / "OR"
    parts: tuple[_Test | _Group, ...]


# A condition: tests, groups, or a constant (a key attribute's IS [NOT] NULL, folded away).
_Node = _Test | _Group | bool


def _group(operator: str, parts: Iterable[_Node]) -> _Node:
    absorbing = operator == "OR"  # TRUE decides an OR, FALSE an AND
    flat: list[_Test | _Group] = []
    for part in parts:
        if isinstance(part, bool):
            if part is absorbing:
                return absorbing
        else:
            flat.extend(part.parts if isinstance(part, _Group) and part.operator == operator else [part])
    absorbed = {
        text
        for p in flat
        if isinstance(p, _Test) and p.absorbs and p.absorbs[0] == operator
        for text in p.absorbs[1]
    }
    kept = [p for p in flat if not (isinstance(p, _Test) and (p.absorbed_as or p.text) in absorbed)]
    if not kept:
        return not absorbing
    return kept[0] if len(kept) == 1 else _Group(operator, tuple(kept))


def _render(node: _Test | _Group, inside: str | None = None) -> str:
    """Condition text with SQL precedence (an OR inside an AND is parenthesised), as the
    compiler renders SQLAlchemy's clause lists."""
    if isinstance(node, _Test):
        return node.text
    text = f" {node.operator} ".join(_render(part, node.operator) for part in node.parts)
    return f"({text})" if inside == "AND" and node.operator == "OR" else text


def _is_on(term: _Node, attribute: str | None, operators: set[str]) -> bool:
    return (
        isinstance(term, _Test)
        and attribute is not None
        and term.attribute == attribute
        and term.operator in operators
    )


def translate(sql: str, keys: Callable[[str], KeyNames | None]) -> Translation:
    """PartiQL for one statement of SQL text with qmark parameters (or already PartiQL).

    ``keys(table)`` gives the table's key names, or None when unknown: then no condition is
    taken for a key condition, and they keep the user's order in one group.
    """
    if "\x00" in sql:
        _refuse("a NUL character in SQL text", "pass the value as a parameter")
    try:
        raw = tokens.Tokenizer().tokenize(sql)
        statements = [s for s in _Parser().parse(raw, sql) if s is not None]
    except SqlglotError as error:
        raise TranslationError(f"cannot parse the SQL text: {_ANSI.sub('', str(error))}") from error
    if len(statements) != 1:
        _refuse(
            "more than one statement" if statements else "an empty statement",
            "execute one statement at a time",
        )
    placeholders = [token.start for token in raw if token.token_type is TokenType.PLACEHOLDER]
    return _Translator(placeholders, keys).translate(statements[0])


class _Translator:
    """One statement's translation: its table, the table's keys, the numbering of its ``?``."""

    def __init__(self, placeholders: list[int], keys: Callable[[str], KeyNames | None]):
        self._index = {start: index for index, start in enumerate(placeholders)}
        self._keys = keys
        self._table = ""
        self._table_keys: KeyNames | None = None
        self._key_paths: dict[str, str] = {}  # the table's key attributes: quoted -> name
        self._negations: list[str] = []  # NOT tests written so far, which ORDER BY cannot take
        self._index_read = False  # FROM "table"."index"
        self._ordered = False  # the statement has an ORDER BY
        self._key_values: list[tuple[int, str]] = []  # parameters compared with a key attribute
        self._key_between: tuple[Bound, Bound] | None = None
        self._partition_keys: tuple[Bound, ...] = ()
        self._always_empty = False

    def translate(self, statement: exp.Expression) -> Translation:
        limit = limit_param = None
        if isinstance(statement, exp.Select):
            kind = "SELECT"
            text, limit, limit_param = self._select(statement)
        elif isinstance(statement, exp.Insert):
            kind, text = "INSERT", self._insert(statement)
        elif isinstance(statement, exp.Update):
            kind, text = "UPDATE", self._update(statement)
        elif isinstance(statement, exp.Delete):
            kind, text = "DELETE", self._delete(statement)
        elif isinstance(statement, exp.SetOperation):
            _refuse("UNION/INTERSECT/EXCEPT", "run the queries separately and combine the rows in Python")
        else:
            _refuse(f"the statement {statement.sql()}", "send SELECT, INSERT, UPDATE or DELETE")
        order = tuple(int(index) for index in _MARKER.findall(text))
        # Only the parameters sent count: a test folded away (beside a key's IS NULL) is not.
        key_values = tuple((index, key) for index, key in self._key_values if index in order)
        checks = Checks(key_values, self._key_between, self._always_empty, self._partition_keys)
        return Translation(_MARKER.sub("?", text), order, limit, limit_param, kind, checks)

    # -- tables ----------------------------------------------------------------------------

    def _source(self, node: exp.Expression, statement: str) -> tuple[str, KeyNames | None]:
        """The quoted table (or ``"table"."index"`` for a SELECT) and the keys that serve it."""
        if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
            _refuse_expression(node)
        if node.alias:
            _refuse(f"an alias ({node.alias})", "PartiQL has no aliases; use the table's own name")
        if node.catalog:
            _refuse(f"the three-part name {node.sql()}", "name a table, or a table and one of its indexes")
        _plain(node, "this", "db")
        table, index = (node.db, node.name) if node.db else (node.name, None)
        self._table, self._table_keys = table, self._keys(table)
        if self._table_keys is not None:
            keys = (self._table_keys.hash_key, self._table_keys.range_key)
            self._key_paths = {_quote(k): k for k in keys if k is not None}
        if index is None:
            return _quote(table), self._table_keys
        self._index_read = True
        if statement != "SELECT":
            _refuse(f"{statement} on the index {_quote(table)}.{_quote(index)}", "write to the table itself")
        index_keys = self._table_keys.indexes.get(index) if self._table_keys is not None else None
        return f"{_quote(table)}.{_quote(index)}", KeyNames(*index_keys) if index_keys else None

    # -- SELECT ----------------------------------------------------------------------------

    def _select(self, select: exp.Select) -> tuple[str, int | None, int | None]:
        _check_clauses(select, "expressions", "from", "where", "order", "limit")
        source = select.args.get("from_")
        if source is None:
            _refuse("a SELECT without a table", "select from exactly one table")
        _plain(source, "this")
        table, keys = self._source(source.this, "SELECT")
        self._ordered = bool(select.args.get("order"))
        columns = self._projection(select.expressions)
        terms = self._terms(select.args.get("where"))
        text = f"SELECT {', '.join(columns)} FROM {table}{self._where(terms, keys)}"
        if select.args.get("order"):
            if self._negations and not self._always_empty:
                # DynamoDB Local fails NOT (...) in a statement with ORDER BY (InternalFailure).
                _refuse(
                    f"{self._negations[0]} together with ORDER BY",
                    "filter these rows in Python, or drop the ORDER BY",
                )
            order_by = self._order_by(select.args["order"], keys, terms, columns)
            # A WHERE folded to FALSE: no row to order and nothing sent, so no partition key
            # need be pinned; the ORDER BY is left out as the WHERE is.
            text += "" if self._always_empty else order_by
        limit = limit_param = None
        if select.args.get("limit"):
            limit, limit_param = self._limit(select.args["limit"])
        return text, limit, limit_param

    def _projection(self, expressions: list[exp.Expression]) -> list[str]:
        columns = []
        for node in expressions:
            if isinstance(node, exp.Star):
                if len(expressions) > 1:
                    _refuse("* next to other columns", "select * alone, or name the columns")
                _plain(node)
                columns.append("*")
            elif isinstance(node, exp.Alias):
                _refuse(f"an alias ({node.alias})", "PartiQL has no aliases; rename the column in Python")
            elif _is_path(node):
                columns.append(self._path(node))
            elif _is_value(node) or _is_operand(node):
                _refuse(f"{node.sql()} in the select list", "select attributes; compute values in Python")
            else:
                _refuse_expression(node)
        return columns

    def _order_by(
        self, order: exp.Order, keys: KeyNames | None, terms: list[_Test | _Group], columns: list[str]
    ) -> str:
        """ORDER BY the sort key only, and only with partition-key equality: DynamoDB returns a
        partition in sort-key order and nothing else."""
        _plain(order, "expressions")
        if keys is not None and not (
            self._always_empty or any(_is_on(t, keys.hash_key, {"="}) for t in terms)
        ):
            _refuse(
                "ORDER BY without partition-key equality",
                f"add {keys.hash_key} = ? to the WHERE clause, or sort the rows in Python",
            )
        table_keys = self._table_keys
        rendered = []
        for ordered in order.expressions:
            # NULLS FIRST/LAST is moot: a sort key is never null.
            _plain(ordered, "this", "desc", "nulls_first")
            column = ordered.this
            name = _attribute(column)
            if name is None or (keys is not None and name != keys.range_key):
                sort_key = keys.range_key if keys is not None and keys.range_key else "(this table has none)"
                _refuse(
                    f"ORDER BY {column.sql()}",
                    f"DynamoDB returns a partition in sort-key order only; order by the sort key {sort_key} "
                    "or sort the rows in Python",
                )
            desc = ordered.args.get("desc")
            rendered.append(_quote(name) + (" DESC" if desc else " ASC" if desc is False else ""))
            if desc and table_keys is not None and not {"*", _quote(table_keys.hash_key)} & set(columns):
                # DynamoDB Local fails ORDER BY ... DESC unless the partition key is projected
                # (partiql-reference.md §5); the compiler adds it, but text has no hidden columns.
                _refuse(
                    f"ORDER BY {name} DESC without the partition key {table_keys.hash_key} in the select list",
                    f"select {table_keys.hash_key} as well (or *)",
                )
        return " ORDER BY " + ", ".join(rendered)

    def _limit(self, limit: exp.Expression) -> tuple[int | None, int | None]:
        """LIMIT is a row count the cursor applies; DynamoDB's Limit counts items evaluated."""
        if not isinstance(limit, exp.Limit):
            _refuse(limit.sql(), "write LIMIT n or LIMIT ?")
        _plain(limit, "expression")
        count = limit.expression
        if isinstance(count, exp.Placeholder):
            return None, self._parameter(count)
        if isinstance(count, exp.Literal) and not count.is_string and count.this.isdigit():
            return int(count.this), None
        _refuse(f"LIMIT {count.sql()}", "write LIMIT n with a whole number, or LIMIT ?")

    # -- WHERE -----------------------------------------------------------------------------

    def _terms(self, where: exp.Where | None, write: bool = False) -> list[_Test | _Group]:
        """The WHERE clause as a list of ANDed terms, NOTs pushed down to the tests.

        A WHERE that is FALSE (a key attribute IS NULL) makes a SELECT match no row: nothing is
        sent, as the compiler does for the same condition.
        """
        if where is None:
            return []
        condition = self._condition(where.this)
        if condition is False:
            if write:
                _refuse(
                    "a WHERE clause that no item can meet (a key attribute IS NULL)",
                    "skip the statement: every item has its key attributes",
                )
            self._always_empty = True
            return []
        if condition is True:
            return []
        return (
            list(condition.parts)
            if isinstance(condition, _Group) and condition.operator == "AND"
            else [condition]
        )

    def _where(self, terms: list[_Test | _Group], keys: KeyNames | None, full_key: str | None = None) -> str:
        """WHERE text: the key conditions first, every other condition in one group.

        With ``full_key`` (UPDATE/DELETE), equality on every key attribute is required.
        """
        if full_key and not terms:
            _refuse(f"{full_key} without a WHERE clause", "add equality on the whole primary key")
        if not terms:
            return ""
        hash_term = range_term = None
        if keys is not None:
            hash_ops, range_ops = ({"="}, {"="}) if full_key else (_HASH_OPERATORS, _RANGE_OPERATORS)
            hash_term = next((t for t in terms if _is_on(t, keys.hash_key, hash_ops)), None)
            if hash_term is not None:
                range_term = next((t for t in terms if _is_on(t, keys.range_key, range_ops)), None)
            if full_key and (hash_term is None or (keys.range_key is not None and range_term is None)):
                names = [n for n in (keys.hash_key, keys.range_key) if n is not None]
                _refuse(
                    f"{full_key} without equality on the whole primary key ({', '.join(names)})",
                    f"add {' AND '.join(f'{n} = ?' for n in names)} to the WHERE clause "
                    f"(select the matching keys first to {full_key.lower()} several items)",
                )
        key_parts = [t.key_text or t.text for t in (hash_term, range_term) if t is not None]
        if range_term is not None and range_term.bounds is not None:
            self._key_between = range_term.bounds
        if hash_term is not None and hash_term.operator == "IN":
            self._partition_keys = hash_term.listed
            if len(hash_term.listed) > MAX_PARTITION_KEYS:
                _refuse(
                    f"IN with {len(hash_term.listed)} partition keys",
                    f"DynamoDB reads at most {MAX_PARTITION_KEYS} partitions in one query; split the "
                    "list into several queries",
                )
        rest = [self._beside_index_key(t) for t in terms if t is not hash_term and t is not range_term]
        if len(rest) == 1 and not key_parts:
            return " WHERE " + _render(rest[0])
        if not rest:
            return " WHERE " + " AND ".join(key_parts)
        # A lone term is not parenthesised inside the group (as the compiler renders it).
        group = _render(rest[0]) if len(rest) == 1 else " AND ".join(_render(t, "AND") for t in rest)
        if not key_parts and not full_key:
            # A scan's AND chain: DynamoDB Local drops tests of key attributes from some flat
            # chains, even parenthesised; NOT (NOT (...)) was never wrong (partiql-reference §15).
            # (A write needs its key equalities visible: there the keys are unknown, not absent.)
            return f" WHERE NOT (NOT ({group}))"
        return " WHERE " + " AND ".join([*key_parts, f"({group})"])

    def _beside_index_key(self, term: _Test | _Group) -> _Test | _Group:
        """Reading a global index, DynamoDB Local returns each matching item several times for
        an IN on the table's partition key in the AND chain; below a NOT NOT it returns each
        once (docs/partiql-findings.md). As the compiler renders it."""
        table_hash = self._table_keys.hash_key if self._table_keys is not None else None
        if not (self._index_read and _is_on(term, table_hash, {"IN"})):
            return term
        self._negations.append(f"IN on the table's partition key {table_hash!r} while reading a global index")
        return _Test(f"NOT (NOT ({term.text}))", None, None)

    def _condition(self, node: exp.Expression, negated: bool = False) -> _Node:
        """A condition, negated when asked so that it is TRUE exactly where SQL's is: De Morgan
        down to the tests, each test replaced by its guarded opposite."""
        if isinstance(node, exp.Paren):
            return self._condition(node.this, negated)
        if isinstance(node, exp.Not):
            return self._condition(node.this, not negated)
        if isinstance(node, (exp.And, exp.Or)):
            operator = "AND" if isinstance(node, exp.And) != negated else "OR"
            return _group(operator, (self._condition(side, negated) for side in (node.this, node.expression)))
        if type(node) in _COMPARISONS:
            return self._comparison(node, negated)
        if isinstance(node, exp.In):
            return self._in(node, negated)
        if isinstance(node, exp.Between):
            return self._between(node, negated)
        if isinstance(node, exp.Is):
            return self._is(node, negated)
        if isinstance(node, exp.Like):
            return self._like(node, negated)
        if isinstance(node, exp.Escape):
            _refuse("LIKE ... ESCAPE", "write begins_with(x, 'prefix'), which takes % and _ literally")
        if isinstance(node, exp.ILike):
            _refuse(
                "ILIKE", "DynamoDB compares case-sensitively; compare a lower-cased copy of the attribute"
            )
        if isinstance(node, exp.Anonymous) and node.name.lower() in FUNCTIONS:
            return self._function(node, negated)
        if _is_path(node):
            # A bare boolean attribute: compared with true, so that NOT can carry SQL's meaning.
            return _Test(f"{self._path(node)} = {'false' if negated else 'true'}", _attribute(node), "=")
        _refuse_expression(node)

    def _comparison(self, node: exp.Expression, negated: bool) -> _Test | bool:
        _plain(node, "this", "expression")
        operator = _COMPARISONS[type(node)]
        left, right = node.this, node.expression
        if _is_value(left) and not _is_value(right):
            left, right, operator = right, left, _MIRRORED[operator]
        if not _is_value(right):
            if _is_operand(left) and _is_operand(right):
                _refuse(f"a comparison of two attributes ({node.sql()})", "compare an attribute with a value")
            _refuse_expression(right if _is_operand(left) else left)
        if _is_value(left):
            _refuse(f"a comparison of two values ({node.sql()})", "compare an attribute with a value")
        if negated:
            operator = _OPPOSITE[operator]
        if isinstance(right, exp.Null):
            # = NULL / <> NULL read as IS [NOT] NULL, as SQLAlchemy reads == None / != None.
            if operator not in ("=", "<>"):
                _refuse(f"a comparison with NULL ({node.sql()})", "test with IS NULL or IS NOT NULL")
            test = self._null_test(self._path(left), operator == "=")
            # `a <> NULL` as the tail of a guard read again; IS NOT NULL is the user's own test.
            if operator == "<>" and isinstance(test, _Test):
                return test._replace(absorbed_as=f"{self._path(left)} <> NULL")
            return test
        operand, attribute, subject = self._operand(left)
        text = f"{operand} {operator} {self._compared(operand, right)}"
        return self._guarded(text, subject) if operator == "<>" else _Test(text, attribute, operator)

    def _between(self, node: exp.Between, negated: bool) -> _Test:
        """BETWEEN only as a sort-key condition; elsewhere DynamoDB rejects low > high (SQL: no
        row), so the filter says it with comparisons, which are also false for a missing attribute."""
        _plain(node, "this", "low", "high")
        operand, attribute, _subject = self._operand(node.this)
        low, high = (self._compared(operand, node.args[bound]) for bound in ("low", "high"))
        if negated:
            return _Test(f"({operand} < {low} OR {operand} > {high})", None, None)
        text = f"({operand} >= {low} AND {operand} <= {high})"
        bounds = (self._bound(node.args["low"]), self._bound(node.args["high"]))
        key_text = f"{operand} BETWEEN {low} AND {high}"
        return _Test(text, attribute, "BETWEEN", key_text=key_text, bounds=bounds)

    def _in(self, node: exp.In, negated: bool) -> _Test:
        if node.args.get("query"):
            _refuse("IN with a subquery", _SUBQUERY_ADVICE)
        if node.args.get("field"):
            _refuse("IN with a single parameter", "list one ? per value: IN (?, ?, ...)")
        _plain(node, "this", "expressions")
        values = node.expressions
        if not values:
            _refuse("IN with an empty list", "skip the query when the list is empty (it matches no row)")
        if len(values) > MAX_IN_OPERANDS:
            _refuse(
                f"IN with {len(values)} values",
                f"DynamoDB takes at most {MAX_IN_OPERANDS}; split the list into several queries",
            )
        operand, attribute, subject = self._operand(node.this)
        listed = [self._compared(operand, v) for v in values]
        if negated and self._ordered:
            # The same test without NOT, which DynamoDB Local fails beside ORDER BY.
            return self._guarded("(" + " AND ".join(f"{operand} <> {v}" for v in listed) + ")", subject)
        text = f"{operand} IN [{', '.join(listed)}]"
        if negated:
            return self._negation("NOT IN", text, subject)
        return _Test(text, attribute, "IN", listed=tuple(self._bound(v) for v in values))

    def _is(self, node: exp.Is, negated: bool) -> _Test | bool:
        _plain(node, "this", "expression")
        path = self._path(node.this)
        if isinstance(node.expression, exp.Null):
            return self._null_test(path, not negated)
        if _is_missing(node.expression):
            return _Test(f"{path} IS {'NOT ' if negated else ''}MISSING", None, None)
        _refuse(f"IS with a value other than NULL or MISSING ({node.sql()})", "compare with = instead")

    def _null_test(self, path: str, is_null: bool) -> _Test | bool:
        """SQL's IS [NOT] NULL: PartiQL's IS NULL is false for a missing attribute
        (partiql-reference.md §3). A key attribute always has a value, and DynamoDB refuses
        to compare one with NULL: the test is a constant."""
        if path in self._key_paths:
            return not is_null
        if is_null:
            return _Test(
                f"({path} IS NULL OR {path} IS MISSING)", None, None, ("OR", (f"{path} IS MISSING",))
            )
        # <> NULL is TRUE for any stored value but NULL, and for a missing attribute; DynamoDB
        # Local accepts it beside ORDER BY, where IS NOT NULL fails.
        guard = f"attribute_exists({path})"
        return _Test(f"({guard} AND {path} <> NULL)", None, None, ("AND", (guard,)))

    def _guarded(self, text: str, subject: str) -> _Test:
        """A test made FALSE where its attribute is missing or stored as NULL (as boto3 writes
        None): PartiQL's negative tests are TRUE there, SQL's are unknown (no row); the
        compiler's guard. attribute_exists(), because DynamoDB Local fails IS NOT MISSING
        beside ORDER BY; <> NULL is TRUE for a missing attribute, hence both. A key attribute
        always has a value and takes no guard (DynamoDB Local fails one on it)."""
        if subject in self._key_paths:
            return _Test(text, None, None)
        guard = f"attribute_exists({subject})"
        absorbs = ("AND", (guard, f"{subject} <> NULL"))
        return _Test(f"({text} AND {guard} AND {subject} <> NULL)", None, None, absorbs)

    def _negation(self, what: str, text: str, subject: str) -> _Test:
        self._negations.append(what)
        return self._guarded(f"NOT {text}", subject)

    def _like(self, node: exp.Like, negated: bool) -> _Test:
        """LIKE 'prefix%' is begins_with; DynamoDB has no other pattern matching."""
        _plain(node, "this", "expression", "negate")
        pattern = node.expression
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            _refuse(
                f"LIKE with {'a parameter' if isinstance(pattern, exp.Placeholder) else pattern.sql()}",
                "the pattern must be known when the SQL is translated; write LIKE 'prefix%' "
                "with the prefix in the text, or begins_with(x, ?) with the prefix as the parameter",
            )
        prefix = pattern.this[:-1]
        if not pattern.this.endswith("%") or "%" in prefix or "_" in prefix:
            _refuse(
                f"LIKE {_string(pattern.this)}",
                "DynamoDB matches a prefix only: write LIKE 'prefix%', begins_with(x, 'prefix') "
                "(which takes % and _ literally), contains(x, 'text') for a substring, or filter in Python",
            )
        negated = negated != bool(node.args.get("negate"))
        # LIKE '%' is begins_with(x, ''): TRUE for every string, as the compiler's startswith('');
        # on a key attribute it is the empty key value DynamoDB rejects.
        attribute = self._key_paths.get(self._path(node.this))
        if not prefix and attribute is not None:
            _refuse_empty_key(attribute)
        return self._test_function("begins_with", node.this, _string(prefix), negated, "NOT LIKE")

    def _function(self, node: exp.Anonymous, negated: bool) -> _Test:
        name = node.name.lower()
        arguments = node.expressions
        if len(arguments) != FUNCTIONS[name]:
            _refuse(f"{name}() with {len(arguments)} arguments", f"{name} takes {FUNCTIONS[name]}")
        if name == "size":
            _refuse("size() as a condition", "compare it with a value: size(x) > ?")
        value = None
        if name in ("begins_with", "contains"):
            value = self._compared(self._path(arguments[0]), arguments[1])
        elif len(arguments) == 2:
            value = self._value(arguments[1])
        return self._test_function(name, arguments[0], value, negated, f"NOT {name}()")

    def _test_function(
        self, name: str, subject: exp.Expression, value: str | None, negated: bool, negation: str
    ) -> _Test:
        path = self._path(subject)
        if name in _EXISTENCE:
            return _Test(f"{_EXISTENCE[name] if negated else name}({path})", None, None)
        text = f"{name}({path}, {value})"
        if not negated:
            return _Test(text, _attribute(subject), name)
        if name == "attribute_type":
            _refuse("NOT attribute_type()", "write the opposite condition directly")
        return self._negation(negation, text, path)

    # -- operands and values ---------------------------------------------------------------

    def _operand(self, node: exp.Expression) -> tuple[str, str | None, str]:
        """What a test compares: an attribute path or size() of one. Returns its text, the
        top-level attribute name (for key detection) and the path a guard must test."""
        if _is_size(node):
            if len(node.expressions) != 1:
                _refuse(f"size() with {len(node.expressions)} arguments", "size takes 1")
            path = self._path(node.expressions[0])
            return f"size({path})", None, path
        path = self._path(node)
        return path, _attribute(node), path

    def _path(self, node: exp.Expression) -> str:
        """An attribute or a path into one: ``"a"``, ``"doc"."a"``, ``"doc"['a'][0]``."""
        if isinstance(node, exp.Column) and _is_path(node):
            names = [part.name for part in node.parts]
            if isinstance(node.this, exp.Star):
                _refuse(node.sql(), "select * alone, or name the columns")
            if len(names) > 1 and names[0] == self._table:
                _refuse(
                    f"the qualified name {node.sql()}",
                    f"PartiQL has no qualifiers and reads it as a path inside an attribute "
                    f"{names[0]}; write {'.'.join(names[1:])}",
                )
            return ".".join(_quote(name) for name in names)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            return f"{self._path(node.this)}.{_quote(node.expression.name)}"
        if isinstance(node, exp.Bracket):
            _plain(node, "this", "expressions")
            steps = node.expressions
            if len(steps) == 1 and isinstance(steps[0], exp.Literal):
                step = _string(steps[0].this) if steps[0].is_string else steps[0].this
                return f"{self._path(node.this)}[{step}]"
            _refuse(
                f"the path step in {node.sql()}",
                "write each step as a literal name or number (not a parameter)",
            )
        if _is_value(node):
            _refuse(f"a test of a value ({node.sql()})", "test an attribute")
        if _is_size(node):
            _refuse(
                f"{node.sql()} where an attribute is expected", "compare size() with a value: size(x) > ?"
            )
        _refuse_expression(node)

    def _value(self, node: exp.Expression) -> str:
        """A value as the user wrote it: a ``?`` parameter or a literal, never anything spliced."""
        if isinstance(node, exp.Placeholder):
            return f"\x00{self._parameter(node)}\x00"
        if isinstance(node, exp.Null):
            _refuse("NULL as a value here", "test for it with IS NULL or IS NOT NULL")
        if isinstance(node, exp.Boolean):
            return "true" if node.this else "false"
        if isinstance(node, exp.Literal):
            return _string(node.this) if node.is_string else node.this
        if _is_value(node):  # a negative number
            return f"-{node.this.this}"
        if _is_operand(node):
            _refuse(f"the attribute {node.sql()} where a value is expected", "pass a parameter or a literal")
        _refuse_expression(node)

    def _compared(self, operand: str, node: exp.Expression) -> str:
        """A value compared with ``operand``. One compared with a key attribute must not be
        empty: DynamoDB rejects it even in a filter. A literal is refused here, a parameter
        when the statement runs (Checks)."""
        value = self._value(node)
        attribute = self._key_paths.get(operand)
        if attribute is not None:
            if isinstance(node, exp.Placeholder):
                self._key_values.append((self._parameter(node), attribute))
            elif isinstance(node, exp.Literal) and node.is_string and not node.this:
                _refuse_empty_key(attribute)
        return value

    def _bound(self, node: exp.Expression) -> Bound:
        """A value as a Bound: its parameter, or the literal's Python value."""
        if isinstance(node, exp.Placeholder):
            return Bound(self._parameter(node))
        if isinstance(node, exp.Boolean):
            return Bound(None, bool(node.this))
        if isinstance(node, exp.Literal):
            return Bound(None, node.this if node.is_string else Decimal(node.this))
        if isinstance(node, exp.Neg):
            return Bound(None, -Decimal(node.this.this))
        return Bound(None)  # NULL: refused by _value before this is asked

    def _parameter(self, node: exp.Placeholder) -> int:
        start = node.meta.get("start")
        if start is None:
            _refuse(f"the parameter {node.sql()}", "use ? placeholders")
        return self._index[start]

    # -- INSERT / UPDATE / DELETE ----------------------------------------------------------

    def _insert(self, insert: exp.Insert) -> str:
        _check_clauses(insert, "this", "expression")
        target, names = insert.this, None
        if isinstance(target, exp.Schema):
            target, names = target.this, [self._column_name(c) for c in target.expressions]
        table, _keys = self._source(target, "INSERT")
        source = insert.expression
        if isinstance(source, (exp.Select, exp.SetOperation)):
            _refuse("INSERT ... SELECT", "select the rows first and insert them with executemany")
        if not isinstance(source, exp.Values):
            _refuse("an INSERT without VALUES", "write INSERT INTO t (a, b) VALUES (?, ?)")
        if len(source.expressions) != 1:
            _refuse(
                "a multi-row VALUES clause", "insert one row per statement and pass the rows to executemany()"
            )
        values = source.expressions[0].expressions
        if names is None:
            if len(values) != 1 or not isinstance(values[0], exp.Struct):
                _refuse(
                    "an INSERT without a column list", "name the columns: INSERT INTO t (a, b) VALUES (?, ?)"
                )
            pairs = [self._entry(entry) for entry in values[0].expressions]
        elif len(names) != len(values):
            _refuse(
                f"an INSERT of {len(values)} values into {len(names)} columns", "give one value per column"
            )
        else:
            pairs = list(zip(names, values, strict=True))
        # NULL means "attribute absent": the attribute is left out of the item.
        body = ", ".join(
            f"{_string(name)}: {self._value(v)}" for name, v in pairs if not isinstance(v, exp.Null)
        )
        if not body:
            _refuse("a write without values", "give at least one column a value")
        return f"INSERT INTO {table} VALUE {{{body}}}"

    def _column_name(self, node: exp.Expression) -> str:
        if not isinstance(node, exp.Identifier):
            _refuse(f"the column {node.sql()} in an INSERT", "name each column by its attribute name")
        return node.name

    def _entry(self, node: exp.Expression) -> tuple[str, exp.Expression]:
        """One ``'name': value`` of a PartiQL item literal."""
        if not isinstance(node, exp.PropertyEQ):
            _refuse(f"the item entry {node.sql()}", "write 'name': value")
        return node.this.name, node.expression

    def _update(self, update: exp.Update) -> str:
        _check_clauses(update, "this", "expressions", "where")
        table, keys = self._source(update.this, "UPDATE")
        sets, removes = [], []
        for assignment in update.expressions:
            if not isinstance(assignment, exp.EQ):
                _refuse(f"the assignment {assignment.sql()}", "write SET attribute = value")
            path, value = self._path(assignment.this), assignment.expression
            if path in self._key_paths:
                _refuse(
                    f"an UPDATE of the key attribute {path}",
                    "DynamoDB keys are immutable; delete the item and insert it under the new key",
                )
            if isinstance(value, exp.Null):
                removes.append(f" REMOVE {path}")  # NULL means "attribute absent"
            elif _is_value(value):
                sets.append(f"{path} = {self._value(value)}")
            else:
                _refuse(
                    f"an SQL expression as the value of {path}",
                    "pass a plain value (arithmetic updates are not translated yet)",
                )
        if not sets and not removes:
            _refuse("a write without values", "give at least one column a value")
        where = self._where(self._terms(update.args.get("where"), write=True), keys, "UPDATE")
        return f"UPDATE {table}" + (" SET " + ", ".join(sets) if sets else "") + "".join(removes) + where

    def _delete(self, delete: exp.Delete) -> str:
        _check_clauses(delete, "this", "where", "returning")
        returning = delete.args.get("returning")
        if returning is not None and [e.name for e in returning.expressions] != ["ALL OLD *"]:
            _refuse(f"{returning.sql()} on DELETE", "remove it; the dialect counts the deleted rows itself")
        table, keys = self._source(delete.this, "DELETE")
        where = self._where(self._terms(delete.args.get("where"), write=True), keys, "DELETE")
        # A DELETE of a missing item succeeds silently; the old item tells whether one was deleted.
        return f"DELETE FROM {table}{where} RETURNING ALL OLD *"
