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
import warnings
from collections.abc import Callable
from dataclasses import dataclass
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
    not_,
    null,
    or_,
)
from sqlalchemy.exc import NotSupportedError, SADeprecationWarning
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.sql.elements import Null
from sqlalchemy.types import TypeDecorator

import sa_dynamo
from sa_dynamo import StringSet

from .judge import Refused

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
    nulls: tuple[Any, ...] = (None,)  # what a row holds for NULL (a JSON column: both nulls)

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
        (*(_D(v) for v in ("12.345", "0.7", "12.499", "-1.5", "0.705")), 12.35, 0.7),  # floats too
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
    # JSON(): None is JSON's null (a value, stored as DynamoDB's NULL), null() SQL's NULL
    "jn": Pool("json", ({"n": 1, "s": "x"}, {"n": 10}, [1, "x"], []), (), "M", nulls=(None, null())),
}
COLUMNS = tuple(POOLS)
# what each path of the JSON column holds, and the values compared with it
JSON_PATHS: dict[str, tuple[Callable[[Any], Any], tuple[Any, ...]]] = {
    '["n"].as_integer()': (lambda c: c["n"].as_integer(), (1, 10, -2, 5)),
    '["s"].as_string()': (lambda c: c["s"].as_string(), ("x", "y", "z")),
    '[("l", 0)].as_integer()': (lambda c: c[("l", 0)].as_integer(), (1, 3)),
}


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
        Column("jn", JSON),
        Column("ss", StringSet().with_variant(SetAsJSON(), "sqlite")),
        Index("by_i", "i", "sk", dynamodb_projection="ALL"),
    )

    class Row(Base):
        __table__ = table

    return table, Row


def base_rows() -> list[dict[str, Any]]:
    """The rows every program starts from (None: NULL in SQLite, absent in DynamoDB; in the
    JSON() column, JSON's null, and null() SQL's NULL)."""
    rng = random.Random(SEED)
    rows = []
    for pk in PARTITIONS:
        for sk in SORT_KEYS:
            if rng.random() < PRESENT:
                rows.append({"pk": pk, "sk": sk, **{c: _value(rng, c) for c in COLUMNS}})
    return rows


def _value(rng: random.Random, column: str) -> Any:
    pool = POOLS[column]
    if rng.random() < ABSENT:
        return pool.nulls[0] if len(pool.nulls) == 1 else rng.choice(pool.nulls)
    return rng.choice(pool.stored)


def py(value: Any) -> str:
    """Python text for a value."""
    if isinstance(value, Null):
        return "null()"
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (list, tuple)) and any(isinstance(v, enum.Enum) for v in value):
        return "[" + ", ".join(py(v) for v in value) + "]"
    if isinstance(value, set) and value:
        return "{" + ", ".join(repr(v) for v in sorted(value)) + "}"
    return repr(value)


def pages(session: Any, statement: Any, page_size: int) -> list[list[Any]]:
    """Every page sa_dynamo.paginate() gives, in order, as lists of rows (or ORM objects).
    Inside a transaction that wrote, paginate() refuses (docs/transactions.md): Refused."""
    result, token = [], None
    while True:
        try:
            page = sa_dynamo.paginate(session, statement, page_size=page_size, after=token)
        except NotSupportedError as error:
            if "paginate() cannot see the writes" in str(error):
                raise Refused("paginate() in a transaction that wrote") from error
            raise
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
    "json-in": "json-not-in",
    "json-not-in": "json-in",
}


def flipped(shapes: frozenset[str]) -> frozenset[str]:
    """The shapes of a condition once negated: an IN with a NULL becomes a NOT IN with one."""
    return frozenset(_NEGATED_SHAPES.get(s, s) for s in shapes)


def sql_not(clause: Any) -> Any:
    """``not_(clause)``, also of a bare non-boolean column (``NOT ts``: SQL's edge case the
    programs test on purpose), whose operator SQLAlchemy 2.1 deprecates for such types."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", "Type object .* does not include operator 'inv'", SADeprecationWarning
        )
        return not_(clause)


def negate(cond: Cond) -> Cond:
    dynamodb = sql_not(cond.dynamodb)
    return Cond(
        f"not_({cond.text})",
        dynamodb,
        dynamodb if cond.portable else sql_not(cond.sqlite),
        flipped(cond.shapes) | {"not"},
        cond.columns,
    )
