"""The typed family of the surface differential: one table with a column of every type the docs
list (docs/types.md), a global index on a number, and programs of Core and ORM-bulk statements
over it, drawn by hypothesis.

Values come from small pools, so that filters meet stored values: each nullable column is
absent (NULL in SQLite) on about a third of the rows, floats that are no binary fraction (0.7)
are stored and compared, Numeric(10, 2) is compared with values of more places than it stores,
strings hold LIKE's wildcards. What SQLite cannot say as DynamoDB does (size(), a set's
contains(), attribute_exists() and attribute_type()) is written for each side in its own
words, with SQL's meaning.
"""

from __future__ import annotations

import datetime
import enum
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Date,
    DateTime,
    Double,
    Enum,
    Float,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Table,
    and_,
    bindparam,
    case,
    exists,
    false,
    func,
    literal,
    not_,
    null,
    or_,
    select,
)
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

import sa_dynamo
from sa_dynamo import StringSet

from .judge import Draw

SEED = 20261201
PARTITIONS = ("P0", "P1", "P2")
SORT_KEYS = tuple(range(40))  # a partition of ~34 items: many pages at dynamodb_page_size=3
PRESENT = 0.85  # share of the key space holding an item
ABSENT = 0.3  # share of items where a nullable attribute is None


class Size(enum.Enum):
    S = 1
    M = 2
    L = 3


class SetAsJSON(TypeDecorator):
    """SQLite's stand-in for a string set: a JSON list, and an empty set is NULL (DynamoDB
    cannot store an empty set, so sa_dynamo stores none: docs/types.md)."""

    impl = JSON(none_as_null=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return sorted(value) if value else None

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return None if value is None else set(value)


@dataclass(frozen=True)
class Pool:
    """A column's kind, the values rows hold, and values filters compare with that no row holds."""

    kind: str  # string, number, float, bool, date, binary, enum, json, set
    stored: tuple[Any, ...]
    probes: tuple[Any, ...] = ()
    code: str = "S"  # the DynamoDB attribute type of its values

    @property
    def operands(self) -> tuple[Any, ...]:
        return self.stored + self.probes


_D = Decimal
POOLS: dict[str, Pool] = {
    "s": Pool("string", ("", "a", "ab", "abc", "b", "é", "A", "a%b", "a_c"), ("aa", "c", "B"), "S"),
    "i": Pool("number", (-5, 0, 1, 2, 7, 100), (3, -1), "N"),
    # stored with at most the column's 2 places (SQLite stores what it is given, unrounded);
    # compared with more
    "d": Pool(
        "number",
        tuple(_D(v) for v in ("-1.50", "0.00", "0.70", "1.00", "12.35", "12.50")),
        tuple(_D(v) for v in ("12.345", "0.7", "12.499", "-1.5", "0.705")),
        "N",
    ),
    "da": Pool("float", (0.7, 0.1, 2.5, -3.25, 12.35), (0.3, 2.0), "N"),  # Numeric(asdecimal=False)
    "f": Pool("float", (0.7, 0.1, 0.2, 1.5, -2.5, 0.001), (0.30000000000000004, 3.0), "N"),
    "db": Pool("float", (0.7, 1 / 3, 2.5, -0.1), (0.3,), "N"),
    "b": Pool("bool", (True, False), (), "BOOL"),
    "dt": Pool(
        "date",
        (datetime.date(2024, 1, 1), datetime.date(2024, 2, 29), datetime.date(2023, 12, 31)),
        (datetime.date(2024, 1, 15),),
    ),
    "ts": Pool(
        "date",
        (
            datetime.datetime(2024, 1, 1, 10, 0),
            datetime.datetime(2024, 1, 1, 10, 0, 0, 500000),
            datetime.datetime(2024, 1, 1, 10, 0, 1),
            datetime.datetime(2023, 12, 31, 23, 59, 59, 999999),
        ),
        (datetime.datetime(2024, 1, 1, 10, 0, 0, 250000),),
    ),
    "bin": Pool("binary", (b"", b"\x00", b"a", b"ab", b"\xff\x00"), (b"b",), "B"),
    "e": Pool("enum", (Size.S, Size.M, Size.L)),
    "j": Pool(
        "json",
        ({"n": 1, "s": "x", "l": [1, 2]}, {"n": 10, "s": "y"}, {"s": "x"}, {"n": -2, "l": [3]}, [1, "x"]),
        (),
        "M",
    ),
    "ss": Pool("set", ({"x"}, {"x", "y"}, {"y", "z"}, set()), (), "SS"),
}
FLOATS = frozenset(name for name, pool in POOLS.items() if pool.kind == "float")
COLUMNS = tuple(POOLS)
# what each path of the JSON column holds, and the values compared with it
JSON_PATHS = {'["n"].as_integer()': (1, 10, -2, 5), '["s"].as_string()': ("x", "y", "z")}


def make_models(name: str) -> tuple[Table, type]:
    """The table, and an ORM class mapped to it (for the ORM's bulk statements)."""

    class Base(DeclarativeBase):
        pass

    table = Table(
        name,
        Base.metadata,
        Column("pk", String, primary_key=True),
        Column("sk", Integer, primary_key=True),
        Column("s", String),
        Column("i", Integer),
        Column("d", Numeric(10, 2)),
        Column("da", Numeric(asdecimal=False)),
        Column("f", Float),
        Column("db", Double),
        Column("b", Boolean),
        Column("dt", Date),
        Column("ts", DateTime),
        Column("bin", LargeBinary),
        Column("e", Enum(Size)),
        Column("j", JSON(none_as_null=True)),
        Column("ss", StringSet().with_variant(SetAsJSON(), "sqlite")),
        Index("by_i", "i", "sk", dynamodb_projection="ALL"),
    )

    class Row(Base):
        __table__ = table

    return table, Row


def base_rows() -> list[dict[str, Any]]:
    """The rows every program starts from (None: NULL in SQLite, absent in DynamoDB)."""
    rng = random.Random(SEED)
    rows = []
    for pk in PARTITIONS:
        for sk in SORT_KEYS:
            if rng.random() < PRESENT:
                rows.append({"pk": pk, "sk": sk, **{c: _value(rng, c) for c in COLUMNS}})
    return rows


def _value(rng: random.Random, column: str) -> Any:
    return None if rng.random() < ABSENT else rng.choice(POOLS[column].stored)


def py(value: Any) -> str:
    """Python text for a value."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (list, tuple)) and any(isinstance(v, enum.Enum) for v in value):
        return "[" + ", ".join(py(v) for v in value) + "]"
    if isinstance(value, set) and value:
        return "{" + ", ".join(repr(v) for v in sorted(value)) + "}"
    return repr(value)


def pages(session: Any, statement: Any, page_size: int) -> list[list[Any]]:
    """Every page sa_dynamo.paginate() gives, in order, as lists of rows (or ORM objects)."""
    result, token = [], None
    while True:
        page = sa_dynamo.paginate(session, statement, page_size=page_size, after=token)
        result.append(list(page.rows))
        token = page.next
        if token is None or len(result) > 200:
            if len(result) > 1 and not result[-1]:
                result.pop()  # a last page that found no more rows: SQL's pages are the same
            return result


# --- conditions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cond:
    """A condition, as DynamoDB's side runs it, as SQLite's side runs it (the same unless SQLite
    has other words for it), and as Python text."""

    text: str
    dynamodb: Any
    sqlite: Any
    shapes: frozenset[str] = frozenset()
    columns: frozenset[str] = frozenset()

    @property
    def portable(self) -> bool:
        """The same expression on both sides (the ORM's evaluate strategy can then run it)."""
        return self.dynamodb is self.sqlite


def same(text: str, clause: Any, shapes: tuple[str, ...] = (), columns: tuple[str, ...] = ()) -> Cond:
    return Cond(text, clause, clause, frozenset(shapes), frozenset(columns))


def combine(kind: str, parts: list[Cond]) -> Cond:
    join = and_ if kind == "and_" else or_
    dynamodb = join(*(p.dynamodb for p in parts))
    sqlite = dynamodb if all(p.portable for p in parts) else join(*(p.sqlite for p in parts))
    return Cond(
        f"{kind}({', '.join(p.text for p in parts)})",
        dynamodb,
        sqlite,
        frozenset().union(*(p.shapes for p in parts)) | ({"or"} if kind == "or_" else set()),
        frozenset().union(*(p.columns for p in parts)),
    )


_NEGATED_SHAPES = {
    "in-null": "not-in-null",
    "not-in-null": "in-null",
    "eq-null-parameter": "ne-null-parameter",
    "ne-null-parameter": "eq-null-parameter",
}


def negate(cond: Cond) -> Cond:
    dynamodb = not_(cond.dynamodb)
    return Cond(
        f"not_({cond.text})",
        dynamodb,
        dynamodb if cond.portable else not_(cond.sqlite),
        frozenset(_NEGATED_SHAPES.get(s, s) for s in cond.shapes) | {"not"},
        cond.columns,
    )


_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
# tests of the index's key attribute that DynamoDB answers otherwise than other attributes
INDEX_KEY_SHAPES = {
    **dict.fromkeys(("is_null", "is_not_null", "eq_none", "ne_none"), "index-key-is-null"),
    **dict.fromkeys(("eq_bind_null", "ne_bind_null"), "index-key-null-parameter"),
    **dict.fromkeys(("exists", "not_exists", "type"), "index-key-exists"),
}
_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}


@dataclass
class Conditions:
    """Draws conditions over the typed table's columns.

    ``floats``: whether Float/Double/Numeric(asdecimal=False) values may be compared (finding 1
    leaves them out inside a transaction while it is open); ``nulls_in_not_in``: whether a NULL
    may stand in a list that ends up under NOT (finding 2)."""

    draw: Draw
    table: Table
    floats: bool = True
    nulls_in_not_in: bool = True
    index_excluded: frozenset[str] = frozenset()  # operations left out on i, the index's key
    lists: bool = True  # IN lists (an executemany cannot expand them)
    keys: bool = True  # tests of the key attributes
    ne_null_parameters: bool = True  # x != a parameter that is None, or NOT (x == it)
    entity: Any = None  # an ORM class: conditions on its attributes, not on the table's columns
    used: set[str] = field(default_factory=set)  # the operators drawn (test_surface_finds.py)

    def column(self, name: str) -> Any:
        return self.table.c[name] if self.entity is None else getattr(self.entity, name)

    @property
    def prefix(self) -> str:
        return "t.c" if self.entity is None else self.entity.__name__

    def condition(self, depth: int, negated: bool = False) -> Cond:
        """A test, or AND/OR/NOT over conditions, at most ``depth`` deep; ``negated``: under an
        odd number of NOTs (an IN there is a NOT IN)."""
        draw = self.draw
        if depth == 0 or draw.chance(35):
            return self.test(draw.choice(self._testable()), negated)
        kind = draw.weighted({"and_": 3, "or_": 3, "not_": 2})
        if kind == "not_":
            return negate(self.condition(depth - 1, not negated))
        return combine(kind, [self.condition(depth - 1, negated) for _ in range(draw.integer(2, 3))])

    def _testable(self) -> list[str]:
        keys = ["pk", "sk"] if self.keys else []
        return [*keys, *COLUMNS, *COLUMNS]  # the typed columns twice as often as the keys

    def test(self, name: str, negated: bool = False) -> Cond:
        """One test of one column."""
        if name in ("pk", "sk"):
            return self.key_test(name)
        pool = POOLS[name]
        operations = self._operations(name, pool)
        if name == "i":
            operations = tuple(o for o in operations if o not in self.index_excluded)
        if not self.lists:
            operations = tuple(o for o in operations if o not in ("in", "not_in", "json_in"))
        operation = self.draw.choice(operations)
        if not self.ne_null_parameters and (
            operation == "ne_bind_null" or (operation == "eq_bind_null" and negated)
        ):
            operation = "is_null"  # new-ne-null-parameter is open
        self.used.add(f"{pool.kind}:{operation}")
        cond = self._build(name, pool, operation, negated)
        if name == "i" and operation in INDEX_KEY_SHAPES:  # the index's key, when the read is on by_i
            shape = INDEX_KEY_SHAPES[operation]
            cond = Cond(cond.text, cond.dynamodb, cond.sqlite, cond.shapes | {shape}, cond.columns)
        return cond

    def _operations(self, name: str, pool: Pool) -> tuple[str, ...]:
        nulls = ("is_null", "is_not_null", "eq_none", "ne_none", "exists", "not_exists", "type")
        if pool.kind == "float" and not self.floats:
            return nulls
        if pool.kind == "bool":
            return ("==", "!=", "in", "not_in", "bare", "not_bare", "is_true", *nulls)
        if pool.kind == "json":
            return ("json", "json", "json_in", "json_is_null", "is_null", "is_not_null", "type")
        if pool.kind == "set":
            return ("set_contains", "size", *nulls)
        ordered = (
            *_COMPARISONS,
            "in",
            "not_in",
            "between",
            "not_between",
            "eq_bind_null",
            "ne_bind_null",
            *nulls,
        )
        if pool.kind == "string":
            return (
                *ordered,
                *("startswith", "not_startswith", "like", "not_like", "like_escape"),
                *("contains", "not_contains", "startswith_auto", "contains_auto", "size"),
            )
        if pool.kind == "binary":
            return (*ordered, "size")
        return ordered

    def _value(self, pool: Pool) -> Any:
        return self.draw.choice(pool.operands)

    def _list(self, pool: Pool, negated_in: bool) -> list[Any]:
        values = self.draw.some(pool.operands, 1, 4)
        if (self.nulls_in_not_in or not negated_in) and self.draw.chance(30):
            values.insert(self.draw.integer(0, len(values)), None)
        return values

    def _build(self, name: str, pool: Pool, operation: str, negated: bool) -> Cond:
        column, text = self.column(name), f"{self.prefix}.{name}"
        columns = (name,)
        floaty = ("float-compare",) if pool.kind == "float" else ()
        if operation in _OPERATORS:
            value = self._value(pool)
            return same(
                f"{text} {operation} {py(value)}", _OPERATORS[operation](column, value), floaty, columns
            )
        if operation in ("in", "not_in"):
            values = self._list(pool, negated != (operation == "not_in"))
            clause = column.in_(values) if operation == "in" else column.not_in(values)
            shapes = floaty + (
                (("in-null",) if operation == "in" else ("not-in-null",)) if None in values else ()
            )
            method = "in_" if operation == "in" else "not_in"
            return same(f"{text}.{method}({py(values)})", clause, shapes, columns)
        if operation in ("between", "not_between"):
            low, high = self._value(pool), self._value(pool)
            clause = column.between(low, high)
            body = f"{text}.between({py(low)}, {py(high)})"
            if operation == "between":
                return same(body, clause, floaty, columns)
            return same(f"not_({body})", not_(clause), floaty, columns)
        if operation == "eq_bind_null":  # a comparison with a parameter that is None: unknown
            clause = column == bindparam("nothing", None)
            return same(f"{text} == bindparam('nothing', None)", clause, ("eq-null-parameter",), columns)
        if operation == "ne_bind_null":
            clause = column != bindparam("nothing", None)
            return same(f"{text} != bindparam('nothing', None)", clause, ("ne-null-parameter",), columns)
        if operation in ("is_null", "eq_none"):
            body = f"{text}.is_(None)" if operation == "is_null" else f"{text} == None"
            return same(body, column.is_(None), (), columns)
        if operation in ("is_not_null", "ne_none"):
            body = f"{text}.is_not(None)" if operation == "is_not_null" else f"{text} != None"
            return same(body, column.is_not(None), (), columns)
        if operation in ("exists", "not_exists"):
            function = "attribute_exists" if operation == "exists" else "attribute_not_exists"
            judged = column.is_not(None) if operation == "exists" else column.is_(None)
            return Cond(
                f"func.{function}({text})",
                getattr(func, function)(column),
                judged,
                frozenset(),
                frozenset(columns),
            )
        if operation == "type":
            code = self.draw.choice(("S", "N", "B", "BOOL", "M", "L", "SS"))
            return Cond(
                f"func.attribute_type({text}, {code!r})",
                func.attribute_type(column, code),
                self._has_type(name, pool, code),
                frozenset(),
                frozenset(columns),
            )
        return self._special(name, pool, operation, column, text)

    def _has_type(self, name: str, pool: Pool, code: str) -> Any:
        column = self.column(name)
        if pool.kind == "json":
            return func.json_type(column) == ("object" if code == "M" else "array" if code == "L" else "-")
        return column.is_not(None) if code == pool.code else false()

    def _special(self, name: str, pool: Pool, operation: str, column: Any, text: str) -> Cond:
        draw, columns = self.draw, (name,)
        if operation == "bare":
            return same(text, column, (), columns)
        if operation == "not_bare":
            return same(f"not_({text})", not_(column), (), columns)
        if operation == "is_true":
            value = draw.choice((True, False))
            return same(f"{text}.is_({value})", column.is_(value), (), columns)
        if operation in ("startswith", "not_startswith", "like", "not_like"):
            prefix = draw.choice(("", "a", "ab", "A", "é", "b"))
            if operation.endswith("startswith"):
                body, clause = f"{text}.startswith({prefix!r})", column.startswith(prefix)
            else:
                body, clause = f"{text}.like({prefix + '%'!r})", column.like(prefix + "%")
            if operation.startswith("not_"):
                return same(f"not_({body})", not_(clause), (), columns)
            return same(body, clause, (), columns)
        if operation == "like_escape":
            return same(f"{text}.like('a/%%', escape='/')", column.like("a/%%", escape="/"), (), columns)
        if operation in ("contains", "not_contains"):
            part = draw.choice(("a", "b", "é", "c"))
            body, clause = f"{text}.contains({part!r})", column.contains(part)
            if operation == "not_contains":
                return same(f"not_({body})", not_(clause), (), columns)
            return same(body, clause, (), columns)
        if operation in ("startswith_auto", "contains_auto"):
            part = draw.choice(("%", "_", "a%", "a_"))
            method = operation.removesuffix("_auto")
            clause = getattr(column, method)(part, autoescape=True)
            return same(f"{text}.{method}({part!r}, autoescape=True)", clause, (), columns)
        if operation == "size":
            op, n = draw.choice(_COMPARISONS), draw.integer(0, 3)
            measured = func.json_array_length(column) if pool.kind == "set" else func.length(column)
            return Cond(
                f"func.size({text}) {op} {n}",
                _OPERATORS[op](func.size(column), n),
                _OPERATORS[op](measured, n),
                frozenset(),
                frozenset(columns),
            )
        if operation == "set_contains":
            member = draw.choice(("x", "y", "w"))
            members = func.json_each(column).table_valued("value")
            found = exists(select(literal(1)).select_from(members).where(members.c.value == member))
            judged = case((column.is_(None), null()), else_=found)  # unknown for a missing set
            return Cond(
                f"{text}.contains({member!r})",
                column.contains(member),
                judged,
                frozenset(),
                frozenset(columns),
            )
        if operation in ("json", "json_in"):
            path = draw.choice(tuple(JSON_PATHS))
            element = column["n"].as_integer() if "n" in path else column["s"].as_string()
            if operation == "json_in":
                values = draw.some(JSON_PATHS[path], 1, 3)
                return same(f"{text}{path}.in_({values!r})", element.in_(values), (), columns)
            op, value = draw.choice(_COMPARISONS), draw.choice(JSON_PATHS[path])
            return same(f"{text}{path} {op} {value!r}", _OPERATORS[op](element, value), (), columns)
        if operation == "json_is_null":
            return same(
                f"{text}['n'].as_integer().is_(None)", column["n"].as_integer().is_(None), (), columns
            )
        raise AssertionError(operation)

    def key_test(self, name: str) -> Cond:
        """A test of a key attribute (in a filter, or as the sort-key condition)."""
        draw, column, text = self.draw, self.column(name), f"{self.prefix}.{name}"
        if name == "pk":
            operation = draw.choice(
                ("==", "!=", "<", ">=", "startswith", "between", *(("in",) if self.lists else ()))
            )
            values = (*PARTITIONS, "P", "P9")
            self.used.add(f"key:{operation}")
            if operation == "in":
                chosen = draw.some(values, 1, 3)
                return same(f"{text}.in_({chosen!r})", column.in_(chosen), (), ("pk",))
            if operation == "startswith":
                return same(f"{text}.startswith('P')", column.startswith("P"), (), ("pk",))
            if operation == "between":
                low, high = draw.choice(values), draw.choice(values)
                return same(f"{text}.between({low!r}, {high!r})", column.between(low, high), (), ("pk",))
            value = draw.choice(values)
            return same(f"{text} {operation} {value!r}", _OPERATORS[operation](column, value), (), ("pk",))
        operation = draw.choice((*_COMPARISONS, "between", *(("in", "not_in") if self.lists else ())))
        self.used.add(f"key:{operation}")
        values = (0, 1, 5, 17, 20, 33, 39, 40, -1)
        if operation == "between":
            low, high = draw.choice(values), draw.choice(values)
            shapes = ("reversed-between",) if low > high else ()
            return same(f"{text}.between({low}, {high})", column.between(low, high), shapes, ("sk",))
        if operation in ("in", "not_in"):
            chosen = draw.some(values, 1, 4)
            method = "in_" if operation == "in" else "not_in"
            return same(f"{text}.{method}({chosen!r})", getattr(column, method)(chosen), (), ("sk",))
        value = draw.choice(values)
        return same(f"{text} {operation} {value}", _OPERATORS[operation](column, value), (), ("sk",))
