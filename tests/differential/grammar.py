"""The oracle's table, its rows, and a seeded generator of random SELECTs over them.

Values come from small pools so that filters meet real rows: comparisons hit equal values,
IN lists and prefixes match some rows and miss others, and every nullable column is absent
(NULL in SQLite) on about a third of the rows. Each generated statement carries the Python
text that rebuilds it, so a disagreement can be reproduced by copy and paste.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    ColumnElement,
    Integer,
    MetaData,
    Numeric,
    Select,
    String,
    Table,
    and_,
    or_,
    select,
    tuple_,
)
from sqlalchemy.dialects.sqlite.base import SQLiteCompiler, SQLiteDialect

SEED = 20250101  # the rows both databases hold
PARTITIONS = ("P0", "P1", "P2", "P3")
# Zero-padded, so byte order (DynamoDB) is SQL order (SQLite).
SORT_KEYS = tuple(f"{i:03}" for i in range(50))
ABSENT = 0.3  # share of rows where a nullable attribute is None (absent in DynamoDB)
# An empty string compared with a key is refused (no key is empty): kept, but rare.
EMPTY_KEY_SHARE = 0.2
CLIENT_SORT = {"dynamodb_client_sort": 1000}  # the opt-in for a Query sorted on the client
# Items evaluated a request for some reads of several partitions, so that they span pages: a
# list of partitions in any order must page right (DynamoDB Local resumes it by key order).
SMALL_PAGES = (5, 9, 23)


@dataclass(frozen=True)
class Attribute:
    """A column, the values rows hold in it, and the extra values filters compare it with."""

    name: str
    stored: tuple[Any, ...]
    unmatched: tuple[Any, ...] = ()  # values no row holds
    prefixes: tuple[str, ...] = ()  # startswith() arguments (string columns only)
    key: bool = False

    @property
    def boolean(self) -> bool:
        return isinstance(self.stored[0], bool)

    @property
    def operands(self) -> tuple[Any, ...]:
        return self.stored + self.unmatched


ATTRIBUTES = (
    Attribute("pk", PARTITIONS, ("P", "P9", "Q", ""), ("P", "P1", "Q", ""), key=True),
    Attribute(
        "sk", SORT_KEYS, ("0", "01", "050", "1", ""), ("0", "00", "01", "02", "04", "049", ""), key=True
    ),
    Attribute(
        "s",
        ("", "a", "ab", "abc", "a%d", "b", "a_", "A", "Ab", "é"),  # % and _ held literally
        ("aa", "c", "B"),
        ("", "a", "ab", "A", "b", "é"),
    ),
    Attribute("n", (-1000, -7, -1, 0, 1, 2, 3, 5, 8, 42, 1000), (-2, 4, 100)),
    # Binary fractions: SQLite stores Numeric as a float, and these survive that exactly.
    Attribute(
        "d",
        tuple(Decimal(v) for v in ("-2.5", "-0.125", "0", "0.5", "1", "1.5", "3.75", "100.25")),
        (Decimal("-1"), Decimal("0.25")),
    ),
    Attribute("b", (True, False)),
    Attribute("t", ("", "x", "x y", "xy", "xyz", "y", "Y"), ("xz",), ("", "x", "xy", "y")),
)
# LIKE patterns and startswith(autoescape=True) values drawn over joined rows, which the client
# tests: wildcards anywhere, an escape character, values that hold % and _.
JOINED_PATTERNS = ("a%", "%", "a_", "_%", "%d", "%b%", "A%", "", "a/%%", "a/_", "x%", "x_", "%y")
LITERAL_PREFIXES = ("a%", "a_", "a", "", "A", "x", "%")
_BY_NAME = {a.name: a for a in ATTRIBUTES}
_KEY_CONDITIONS = ("==", "<", "<=", ">", ">=", "between", "startswith", "like")
_SORTABLE = ("s", "n", "d", "b", "t")  # ORDER BY attributes the client sorts
_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def make_table(name: str) -> Table:
    """The model both databases hold: a composite string key and one nullable column per type."""
    return Table(
        name,
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("s", String),
        Column("n", Integer),
        Column("d", Numeric),
        Column("b", Boolean),
        Column("t", String),
    )


def make_rows(seed: int) -> list[dict[str, Any]]:
    """200 items: 4 partitions x 50 sort keys, values drawn with repeats and frequent None."""
    rng = random.Random(seed)
    return [
        {
            "pk": pk,
            "sk": sk,
            **{
                a.name: None if rng.random() < ABSENT else rng.choice(a.stored)
                for a in ATTRIBUTES
                if not a.key
            },
        }
        for pk in PARTITIONS
        for sk in SORT_KEYS
    ]


@dataclass(frozen=True)
class Grammar:
    """Which constructs the generator uses. The default is everything the issue lists; each
    flag switched off drops one family of statements (test_oracle.py says why)."""

    keys_in_filters: bool = True  # pk/sk tests inside the filter, beyond the pin and sort-key condition
    empty_key_strings: bool = True  # '' compared with a key or as a key prefix
    reversed_between: bool = True  # between(high, low), which matches no row
    negation_with_order_by: bool = True  # !=, NOT IN, IS NOT NULL, ~ in a statement with ORDER BY
    nesting_under_or_not: bool = True  # below an OR or NOT: startswith(), NOT, and nesting deeper than one
    boolean_ne_under_not: bool = True  # b != True with a NOT above it


@dataclass(frozen=True)
class Case:
    """One generated statement, the Python that builds it, and how to compare its rows."""

    statement: Select[Any]
    text: str
    ordered: bool  # a total ORDER BY: rows must match in order; otherwise compared as sorted lists
    options: dict[str, Any] = field(default_factory=dict)  # execution options, for SQL text too
    as_text: bool = True  # False: SQL text cannot say it (tuple IN), compiled only


@dataclass(frozen=True)
class Scope:
    """Where in a filter a condition is generated, as far as the grammar cares."""

    under_or: bool = False
    under_not: bool = False
    negation: bool = True  # negated tests and NOT allowed


Condition = tuple[ColumnElement[bool], str]


class Generator:
    """Random SELECTs: a tenth read a list of full keys (a batch of GetItems), three in ten pin
    the partition key by ==, IN or OR (a DynamoDB Query, sometimes with a sort-key condition),
    the rest are scans with a nested filter. Ordered reads end their ORDER BY with the key, so
    that the order is total; LIMIT comes with ORDER BY only. Partitions are listed in any order,
    and half the reads of several partitions evaluate a few items a request (SMALL_PAGES)."""

    def __init__(self, table: Table, seed: int, grammar: Grammar):
        self.table = table
        self.rng = random.Random(seed)
        # Paging draws from its own stream: the other statements of a seed stay as they were.
        self.paging = random.Random(seed + 1)
        self.grammar = grammar
        self.filtered = [a for a in ATTRIBUTES if grammar.keys_in_filters or not a.key]

    def case(self) -> Case:
        roll = self.rng.random()
        if roll < 0.1:
            return self._key_list()
        if roll < 0.4:
            return self._query()
        clause, text = self.condition(self.rng.randint(1, 3), Scope())
        return Case(select(self.table).where(clause), f"select(t).where({text})", ordered=False)

    def joined(self) -> Case:
        """t joined with itself (u: the rows of another partition, or of none, at the same sort
        key), LEFT OUTER four times in five: a LIKE, NOT LIKE or startswith(autoescape=True) of
        u's strings, alone or in an OR with a test of t. The client tests them over the joined
        rows, and the outer side is NULL where no row joined."""
        rng, t = self.rng, self.table
        u = t.alias("u")
        partition, other = rng.choice(PARTITIONS), rng.choice((*PARTITIONS, "P9"))
        outer = rng.random() < 0.8
        on = and_(u.c.pk == other, u.c.sk == t.c.sk)
        source = t.join(u, on, isouter=outer)
        tested, text = self._string_test(u, rng.choice(("s", "t")))
        if rng.random() < 0.5:
            other_test, other_text = (
                self._string_test(t, "s")
                if rng.random() < 0.5
                else self.test(_BY_NAME["n"], ("==", ">", "is_"))
            )
            tested, text = or_(tested, other_test), f"or_({text}, {other_text})"
        statement = (
            select(t.c.pk, t.c.sk, u.c.s, u.c.t).select_from(source).where(t.c.pk == partition, tested)
        )
        how = "outerjoin" if outer else "join"
        return Case(
            statement,
            f"u = t.alias('u'); select(t.c.pk, t.c.sk, u.c.s, u.c.t).select_from(t.{how}(u, "
            f"and_(u.c.pk == {other!r}, u.c.sk == t.c.sk))).where(t.c.pk == {partition!r}, {text})",
            ordered=False,
            as_text=False,
        )

    def _string_test(self, table: Any, name: str) -> Condition:
        """A LIKE-family test of one string column, as ``table``'s name writes it."""
        rng, column, where = (
            self.rng,
            table.c[name],
            f"{table.name if table is not self.table else 't'}.c.{name}",
        )
        kind = rng.choice(("like", "not_like", "startswith", "not_startswith"))
        if kind in ("like", "not_like"):
            pattern = rng.choice(JOINED_PATTERNS)
            escape = "/" if "/" in pattern else None
            return (
                getattr(column, kind)(pattern, escape=escape),
                f"{where}.{kind}({pattern!r}" + (f", escape={escape!r})" if escape else ")"),
            )
        prefix = rng.choice(LITERAL_PREFIXES)
        test, text = (
            column.startswith(prefix, autoescape=True),
            f"{where}.startswith({prefix!r}, autoescape=True)",
        )
        return (~test, f"~{text}") if kind == "not_startswith" else (test, text)

    def _pin(self) -> tuple[Condition, bool]:
        """The partition key pinned by ==, IN or an OR of ==; whether it is one partition."""
        rng, pk = self.rng, self.table.c.pk
        how = rng.choices(("==", "in_", "or_"), weights=(6, 2, 2))[0]
        if how == "==":
            partition = rng.choice(PARTITIONS)
            return (pk == partition, f"t.c.pk == {partition!r}"), True
        partitions = rng.sample(PARTITIONS, rng.randint(2, 3))
        if how == "in_":
            return (pk.in_(partitions), f"t.c.pk.in_({partitions!r})"), False
        texts = ", ".join(f"t.c.pk == {p!r}" for p in partitions)
        return (or_(*(pk == p for p in partitions)), f"or_({texts})"), False

    def _query(self) -> Case:
        rng, columns = self.rng, self.table.c
        ordered, descending = rng.random() < 0.5, rng.random() < 0.5
        limit = rng.randint(1, 60) if ordered and rng.random() < 0.5 else None
        pin, single = self._pin()
        by_sort_key = ordered and single and rng.random() < 0.6  # the one ORDER BY DynamoDB serves
        terms = [pin]
        if rng.random() < 0.6:
            terms.append(self.test(_BY_NAME["sk"], _KEY_CONDITIONS))
        if rng.random() < 0.8:
            scope = Scope(negation=self.grammar.negation_with_order_by or not by_sort_key)
            terms.append(self.condition(rng.randint(1, 3), scope))
        rng.shuffle(terms)
        options: dict[str, Any] = {}
        if not single and self.paging.random() < 0.5:
            # several partitions over small pages, half of them by the bare list
            options = {"dynamodb_page_size": self.paging.choice(SMALL_PAGES)}
            terms = [pin] if self.paging.random() < 0.5 else terms
        statement = select(self.table).where(*(clause for clause, _ in terms))
        text = f"select(t).where({', '.join(text for _, text in terms)})"
        if by_sort_key:
            statement = statement.order_by(columns.sk.desc() if descending else columns.sk)
            text += ".order_by(t.c.sk.desc())" if descending else ".order_by(t.c.sk)"
        elif ordered:
            statement, text = self._client_order(statement, text)
            options = {**options, **CLIENT_SORT}
        if options:
            statement, text = statement.execution_options(**options), f"{text}.execution_options(**{options})"
        if limit is not None:
            statement, text = statement.limit(limit), f"{text}.limit({limit})"
        return Case(statement, text, ordered, options)

    def _key_list(self) -> Case:
        """tuple_(pk, sk).in_(keys): stored keys, absent ones and repeats; a filter; an order."""
        rng, columns = self.rng, self.table.c
        keys = [(rng.choice(PARTITIONS), rng.choice(SORT_KEYS)) for _ in range(rng.randint(1, 40))]
        keys += [("P9", "001"), ("P1", "050")][: rng.randint(0, 2)] + keys[: rng.randint(0, 2)]
        terms = [(tuple_(columns.pk, columns.sk).in_(keys), f"tuple_(t.c.pk, t.c.sk).in_({keys!r})")]
        if rng.random() < 0.7:
            terms.append(self.condition(rng.randint(1, 2), Scope()))
        statement = select(self.table).where(*(clause for clause, _ in terms))
        text = f"select(t).where({', '.join(text for _, text in terms)})"
        ordered = rng.random() < 0.5
        if ordered:
            statement, text = self._client_order(statement, text)
            if rng.random() < 0.5:
                limit = rng.randint(1, 20)
                statement, text = statement.limit(limit), f"{text}.limit({limit})"
        return Case(statement, text, ordered, as_text=False)

    def _client_order(self, statement: Select[Any], text: str) -> tuple[Select[Any], str]:
        """ORDER BY one or two attributes, each either way, then the key: an order the client applies."""
        rng, columns = self.rng, self.table.c
        clauses, texts = [], []
        for name in rng.sample(_SORTABLE, rng.randint(1, 2)):
            descending = rng.random() < 0.5
            clauses.append(columns[name].desc() if descending else columns[name])
            texts.append(f"t.c.{name}.desc()" if descending else f"t.c.{name}")
        clauses += [columns.pk, columns.sk]
        texts += ["t.c.pk", "t.c.sk"]
        return statement.order_by(*clauses), f"{text}.order_by({', '.join(texts)})"

    def condition(self, depth: int, scope: Scope) -> Condition:
        """A test, or AND/OR/NOT over conditions, nested at most ``depth`` deep."""
        rng = self.rng
        kinds: tuple[str, ...] = ("and_", "or_", "not") if scope.negation else ("and_", "or_")
        if (scope.under_or or scope.under_not) and not self.grammar.nesting_under_or_not:
            depth, kinds = min(depth, 1), ("and_", "or_")
        if depth == 0 or rng.random() < 0.25:
            attribute = rng.choice(self.filtered)
            return self.test(attribute, self._kinds(attribute, scope))
        kind = rng.choice(kinds)
        inner = Scope(scope.under_or or kind == "or_", scope.under_not or kind == "not", scope.negation)
        if kind == "not":
            clause, text = self.condition(depth - 1, inner)
            return ~clause, f"~({text})"
        parts = [self.condition(depth - 1, inner) for _ in range(rng.randint(2, 3))]
        combine = and_ if kind == "and_" else or_
        return combine(*(c for c, _ in parts)), f"{kind}({', '.join(t for _, t in parts)})"

    def test(self, attribute: Attribute, kinds: tuple[str, ...]) -> Condition:
        """One test of one attribute, of a kind drawn from ``kinds``."""
        rng, column = self.rng, self.table.c[attribute.name]
        kind = rng.choice(kinds)
        name = f"t.c.{attribute.name}"
        if kind in _COMPARISONS:
            value = self._operand(attribute)
            return _COMPARISONS[kind](column, value), f"{name} {kind} {value!r}"
        if kind in ("in_", "not_in"):
            values = [self._operand(attribute) for _ in range(rng.randint(1, 4))]
            return getattr(column, kind)(values), f"{name}.{kind}({values!r})"
        if kind == "between":
            low, high = self._operand(attribute), self._operand(attribute)
            if not self.grammar.reversed_between and low > high:
                low, high = high, low
            return column.between(low, high), f"{name}.between({low!r}, {high!r})"
        if kind == "startswith":
            prefix = rng.choice(self._allowed(attribute, attribute.prefixes))
            return column.startswith(prefix), f"{name}.startswith({prefix!r})"
        if kind == "like":
            pattern = rng.choice(self._allowed(attribute, attribute.prefixes)) + "%"
            return column.like(pattern), f"{name}.like({pattern!r})"
        if kind == "is_":
            return column.is_(None), f"{name}.is_(None)"
        if kind == "is_not":
            return column.is_not(None), f"{name}.is_not(None)"
        return column, name  # "bare": a Boolean column is a condition by itself

    def _kinds(self, attribute: Attribute, scope: Scope) -> tuple[str, ...]:
        grammar, nested = self.grammar, scope.under_or or scope.under_not
        if attribute.boolean:
            kinds: tuple[str, ...] = ("==", "!=", "in_", "not_in", "is_", "is_not", "bare")
            if scope.under_not and not grammar.boolean_ne_under_not:
                kinds = tuple(k for k in kinds if k != "!=")
        else:
            kinds = (*_COMPARISONS, "in_", "not_in", "between", "is_", "is_not")
            if attribute.prefixes and (grammar.nesting_under_or_not or not nested):
                kinds += ("startswith", "like")
        if not scope.negation:
            kinds = tuple(k for k in kinds if k not in ("!=", "not_in", "is_not"))
        return kinds

    def _allowed(self, attribute: Attribute, values: tuple[Any, ...]) -> tuple[Any, ...]:
        if attribute.key and (not self.grammar.empty_key_strings or self.rng.random() >= EMPTY_KEY_SHARE):
            return tuple(v for v in values if v != "")
        return values

    def _operand(self, attribute: Attribute) -> Any:
        return self.rng.choice(self._allowed(attribute, attribute.operands))


class _TextCompiler(SQLiteCompiler):
    """SQLite's compiler, writing the SQL a person would type for one table: bare column names,
    ``true``/``false`` and ``LIKE 'prefix%'``, which SQLite runs as it is and sa_dynamo's
    SQL-text translator reads (it refuses qualified names, as PartiQL reads them as paths, and
    a LIKE pattern that is a parameter or a concatenation)."""

    def visit_column(self, column: Any, include_table: bool = True, **kw: Any) -> str:
        return super().visit_column(column, include_table=False, **kw)

    def visit_true(self, expr: Any, **kw: Any) -> str:
        return "true"

    def visit_false(self, expr: Any, **kw: Any) -> str:
        return "false"

    def visit_startswith_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        return f"{self.process(binary.left, **kw)} LIKE {self._prefix_pattern(binary)}"

    def visit_not_startswith_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        return f"{self.process(binary.left, **kw)} NOT LIKE {self._prefix_pattern(binary)}"

    def visit_like_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        return f"{self.process(binary.left, **kw)} LIKE {self._prefix_pattern(binary, '')}"

    def visit_not_like_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        return f"{self.process(binary.left, **kw)} NOT LIKE {self._prefix_pattern(binary, '')}"

    def limit_clause(self, select: Any, **kw: Any) -> str:
        # SQLite's own adds OFFSET 0 to every LIMIT.
        if select._limit_clause is None:
            return ""
        return " LIMIT " + self.process(select._limit_clause, **kw)

    @staticmethod
    def _prefix_pattern(binary: Any, wildcard: str = "%") -> str:
        """'prefix%' of a startswith() prefix, or of a LIKE pattern that ends in % already."""
        pattern = binary.right.value + wildcard
        prefix = pattern.removesuffix("%")
        assert not {"%", "_"} & set(prefix), f"a wildcard in the prefix {prefix!r} needs ESCAPE"
        return "'" + pattern.replace("'", "''") + "'"


class _TextDialect(SQLiteDialect):
    statement_compiler = _TextCompiler
    supports_native_boolean = True  # b = true, NOT b: a 1 would be a number to DynamoDB


@dataclass(frozen=True)
class SqlText:
    """A statement as hand-written SQL text, the parameters it takes, and which form it is in."""

    sql: str
    parameters: dict[str, Any]
    form: str  # "parameters" (:name placeholders) or "literals" (values written into the text)


def sql_text(statement: Select[Any], literals: bool) -> SqlText:
    """The statement as plain SQL, with ``:name`` parameters or with the values in the text."""
    compiled = statement.compile(
        dialect=_TextDialect(paramstyle="named"),
        compile_kwargs={"render_postcompile": True, "literal_binds": literals},
    )
    sql = " ".join(str(compiled).split())  # one line, as a person writes it
    return SqlText(sql, {} if literals else dict(compiled.params), "literals" if literals else "parameters")
