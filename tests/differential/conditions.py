"""Conditions over the typed table (surface_types.py), drawn by hypothesis: every test the
compiler accepts on every column type, each with what it means in SQL for SQLite's side.

Where SQLite has no such test (DynamoDB's size(), begins_with(), contains() and attribute
functions, a set's membership, a prefix of bytes), its side gets SQL with the same meaning;
where a test has no meaning for a type (size() of a number), SQLite's side is unknown (NULL),
so SQL returns no row either way. A test sa_dynamo should refuse (a bare non-Boolean column, a
LIKE on a number or a set, an ordering of documents) is generated too: SQLite answers it, and
anything but a refusal before sending is a disagreement.

Each condition carries shapes (what it is made of); a shape in ``excluded`` is never drawn,
which is how known_open.py switches off a finding's statements.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Integer,
    Table,
    and_,
    bindparam,
    case,
    exists,
    func,
    literal,
    not_,
    null,
    or_,
    select,
    true,
)
from sqlalchemy.exc import SADeprecationWarning

from .judge import Draw
from .surface_types import (
    COLUMNS,
    JSON_PATHS,
    PARTITIONS,
    POOLS,
    Cond,
    Pool,
    combine,
    flipped,
    make_models,
    negate,
    py,
    same,
    sql_not,
)


def starts_with(column: Any, operand: str | bytes) -> Any:
    """Whether ``column`` starts with the non-empty ``operand``, as SQL means it for text and
    bytes alike. The length is tested first: SQLite's substr of an empty blob is NULL, which
    would make the test of b"" unknown (and its NOT unknown too) where it is false."""
    return and_(func.length(column) >= len(operand), func.substr(column, 1, len(operand)) == literal(operand))


COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}
NULL_TESTS = ("is_null", "is_not_null", "eq_none", "ne_none", "exists", "not_exists", "type")
NULL_PARAMETERS = ("eq_bind_null", "ne_bind_null")
STRING_TESTS = ("startswith", "not_startswith", "like", "not_like", "contains", "not_contains")
FUNCTIONS = ("begins_with_function", "contains_function", "size")
# Prefixes and parts the string tests of each column take (a datetime's prefixes stop before
# the separator of date and time, which SQLite writes as " " and sa_dynamo as "T").
PREFIXES: dict[str, tuple[Any, ...]] = {
    "s": ("", "a", "ab", "A", "é", "b"),
    "i": ("1", "-"),
    "d": ("1", "0."),
    "f": ("0", "1", "-2"),
    "db": ("0", "2", "-"),
    "da": ("0", "1"),
    "b": ("t",),
    "dt": ("2024", "2024-01", "2023-12-31"),
    "ts": ("2024", "2024-01-01", "2023-12-31"),
    "e": ("M", "S", "L"),
    "bin": (b"", b"a", b"\x00", b"\xff"),
    "j": ("{", "x"),
    "jn": ("{", "x"),
    "ss": ("x", "y"),
}
PARTS: dict[str, tuple[Any, ...]] = {
    "s": ("a", "b", "é", "c"),
    "i": ("0",),
    "d": ("5",),
    "f": ("7", "."),
    "db": ("3", "."),
    "da": ("7",),
    "b": ("r",),
    "dt": ("-01", "-02-29"),
    "ts": ("10:00", ".5"),
    "e": ("M", "L"),
    "bin": (b"a", b"\x00"),
    "j": ("x", "1"),
    "jn": ("x", "1"),
    "ss": ("x", "w"),
}
STRING_KINDS = ("string", "date", "enum")
# tests of an index's key attribute that DynamoDB answers otherwise than of other attributes
INDEX_KEY_SHAPES = {
    **dict.fromkeys(("is_null", "is_not_null", "eq_none", "ne_none"), "index-key-is-null"),
    **dict.fromkeys(NULL_PARAMETERS, "index-key-null-parameter"),
    **dict.fromkeys(("exists", "not_exists", "type"), "index-key-exists"),
}  # stored as S: DynamoDB's string functions apply


def present(column: Any) -> Any:
    """TRUE for a value, unknown (NULL) for NULL: a test every value passes, in SQL's logic."""
    return case((column.is_(None), null()), else_=true())


@functools.cache
def takes_string_test(name: str, test: str) -> bool:
    """Whether SQLAlchemy gives the column's type the string test (startswith(), LIKE,
    contains()): 2.1 deprecates most of them on types that are not strings, 2.0 does not."""
    column = make_models("string_tests")[0].c[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SADeprecationWarning)
        try:
            getattr(column, test.removeprefix("not_"))("a")
        except SADeprecationWarning:
            return False
    return True


@dataclass
class Conditions:
    """Draws conditions over the typed table's columns (or an ORM class mapped to it)."""

    draw: Draw
    table: Table
    excluded: frozenset[str] = frozenset()  # shapes never drawn (known_open.py)
    lists: bool = True  # IN lists (an executemany cannot expand them)
    keys: bool = True  # tests of the key attributes
    entity: Any = None  # an ORM class: conditions on its attributes, not on the table's columns
    focus: tuple[str, ...] = ()  # operations drawn half the time where a column has them

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
            keys = ["pk", "sk"] if self.keys else []
            return self.test(draw.choice([*keys, *COLUMNS, *COLUMNS]), negated)
        kind = draw.weighted({"and_": 3, "or_": 3, "not_": 2})
        if kind == "not_":
            return negate(self.condition(depth - 1, not negated))
        return combine(kind, [self.condition(depth - 1, negated) for _ in range(draw.integer(2, 3))])

    def test(self, name: str, negated: bool = False) -> Cond:
        """One test of one column, of a shape not excluded (as it will stand: under a NOT, an
        IN is a NOT IN)."""
        for _ in range(20):
            cond = self.key_test(name) if name in ("pk", "sk") else self._test(name, negated)
            if not (flipped(cond.shapes) if negated else cond.shapes) & self.excluded:
                return cond
        fallback = self.equals(name if name not in ("pk", "sk") else "s", None)  # IS NULL: no shape
        assert fallback is not None
        return fallback

    def equals(self, name: str, value: Any) -> Cond | None:
        """``name == value`` (IS NULL for None), as an application tests a value it read or
        wrote; None when that shape is excluded."""
        column, text, kind = self.column(name), f"{self.prefix}.{name}", POOLS[name].kind
        if value is None:
            return same(f"{text}.is_(None)", column.is_(None), (), (name,))
        shapes = {"float": ("float-compare",), "json": ("document-compare",), "set": ("document-compare",)}
        compared = ("float-compare",) if isinstance(value, float) else shapes.get(kind, ())
        cond = same(f"{text} == {py(value)}", column == value, compared, (name,))
        return None if cond.shapes & self.excluded else cond

    def _test(self, name: str, negated: bool) -> Cond:
        operations = self.operations(name)
        focused = [operation for operation in operations if operation in self.focus]
        operation = self.draw.choice(focused if focused and self.draw.chance(50) else operations)
        if not self.lists and operation in ("in", "not_in", "json_in", "document_in", "document_not_in"):
            operation = "is_null"
        return self.build(name, operation)

    def build(self, name: str, operation: str) -> Cond:
        """The test ``operation`` (one of ``operations(name)``) of the column ``name``."""
        pool = POOLS[name]
        cond = self._build(name, pool, operation)
        shapes = set(cond.shapes)
        if (pool.kind == "float" or "float-operand" in shapes) and operation not in (
            *NULL_TESTS,
            *NULL_PARAMETERS,
        ):
            shapes.add("float-compare")  # the predicate compares the stored Decimal with the float
        if name == "i" and operation in INDEX_KEY_SHAPES:  # the index's key, when a read is on by_i
            shapes.add(INDEX_KEY_SHAPES[operation])
        if name == "i" and {"in-null", "not-in-null"} & shapes:  # a NULL in a list, the same
            shapes.add("index-key-null-parameter")
        return Cond(cond.text, cond.dynamodb, cond.sqlite, frozenset(shapes), frozenset({name}))

    @staticmethod
    def operations(name: str) -> tuple[str, ...]:
        """Every test the generator knows for the column ``name``."""
        kind = POOLS[name].kind
        common = (*NULL_TESTS, *FUNCTIONS, "bare")
        if kind == "bool":
            return ("==", "!=", "in", "not_in", "not_bare", "is_true", *NULL_PARAMETERS, *common)
        if kind in ("json", "set"):
            documents = (
                "document",
                "document_in",
                "document_not_in",
                "document_ordering",
                "document_between",
            )
            own = ("json", "json", "json_in", "json_is_null") if kind == "json" else ("set_contains",)
            strings = tuple(test for test in STRING_TESTS if takes_string_test(name, test))
            return (*own, *documents, *strings, *common)
        ordered = (*COMPARISONS, "in", "not_in", "between", "not_between", *NULL_PARAMETERS, *common)
        if kind == "string":
            return (*ordered, *STRING_TESTS, "like_escape", "startswith_auto", "contains_auto")
        if kind in ("number", "float"):  # the compiler refuses them (2.0), SQLAlchemy deprecates them (2.1)
            return ordered
        return (*ordered, *(test for test in STRING_TESTS if takes_string_test(name, test)))

    def _build(self, name: str, pool: Pool, operation: str) -> Cond:
        draw, column, text = self.draw, self.column(name), f"{self.prefix}.{name}"
        if operation in OPERATORS:
            value = draw.choice(pool.operands)
            floats = ("float-operand",) if isinstance(value, float) else ()
            return same(f"{text} {operation} {py(value)}", OPERATORS[operation](column, value), floats)
        if operation in ("in", "not_in"):
            values = draw.some(pool.operands, 1, 4)
            if draw.chance(30):
                values.insert(draw.integer(0, len(values)), None)
            clause = column.in_(values) if operation == "in" else column.not_in(values)
            shape = ("in-null",) if operation == "in" else ("not-in-null",)
            method = "in_" if operation == "in" else "not_in"
            floats = ("float-operand",) if any(isinstance(v, float) for v in values) else ()
            return same(
                f"{text}.{method}({py(values)})", clause, (*(shape if None in values else ()), *floats)
            )
        if operation in ("between", "not_between"):
            low, high = draw.choice(pool.operands), draw.choice(pool.operands)
            body = f"{text}.between({py(low)}, {py(high)})"
            floats = ("float-operand",) if isinstance(low, float) or isinstance(high, float) else ()
            if operation == "between":
                return same(body, column.between(low, high), floats)
            return same(f"not_({body})", not_(column.between(low, high)), floats)
        if operation in NULL_PARAMETERS:  # compared with a parameter that is None: unknown
            if operation == "eq_bind_null":
                return same(
                    f"{text} == bindparam('nothing', None)",
                    column == bindparam("nothing", None),
                    ("eq-null-parameter",),
                )
            return same(
                f"{text} != bindparam('nothing', None)",
                column != bindparam("nothing", None),
                ("ne-null-parameter",),
            )
        if operation in NULL_TESTS:
            return self._null_test(name, pool, operation, column, text)
        if operation in STRING_TESTS:
            return self._string_test(name, pool, operation, column, text)
        if operation in FUNCTIONS:
            return self._function(name, pool, operation, column, text)
        return self._special(name, pool, operation, column, text)

    def _null_test(self, name: str, pool: Pool, operation: str, column: Any, text: str) -> Cond:
        if operation in ("is_null", "eq_none"):
            return same(
                f"{text}.is_(None)" if operation == "is_null" else f"{text} == None", column.is_(None)
            )
        if operation in ("is_not_null", "ne_none"):
            return same(
                f"{text}.is_not(None)" if operation == "is_not_null" else f"{text} != None",
                column.is_not(None),
            )
        if operation in ("exists", "not_exists"):
            function = "attribute_exists" if operation == "exists" else "attribute_not_exists"
            judged = column.is_not(None) if operation == "exists" else column.is_(None)
            return Cond(f"func.{function}({text})", getattr(func, function)(column), judged)
        code = self.draw.choice(("S", "N", "B", "BOOL", "M", "L", "SS"))
        if pool.kind == "json":
            judged = func.json_type(column) == {"M": "object", "L": "array"}.get(code, "-")
        else:
            judged = column.is_not(None) if code == pool.code else column.is_(None) & column.is_not(None)
        return Cond(f"func.attribute_type({text}, {code!r})", func.attribute_type(column, code), judged)

    def _string_test(self, name: str, pool: Pool, operation: str, column: Any, text: str) -> Cond:
        """startswith(), LIKE 'p%' and contains(), and their negations, on any column the
        compiler takes them on; bytes are judged byte by byte, the others as SQLite's text."""
        method = operation.removeprefix("not_")
        operand = self.draw.choice(PARTS[name] if method == "contains" else PREFIXES[name])
        argument = operand + (b"%" if isinstance(operand, bytes) else "%") if method == "like" else operand
        clause = getattr(column, method)(argument)
        if pool.kind == "set" and method == "contains":
            judged = self._member(column, operand, "set")
        elif pool.kind == "binary" and not operand:
            judged = present(column)
        elif pool.kind == "binary":
            judged = func.instr(column, operand) > 0 if method == "contains" else starts_with(column, operand)
        else:
            judged = clause
        body = f"{text}.{method}({py(argument)})"
        shapes = {
            "set": ("string-test-on-set",),
            "json": ("string-test-on-document",),  # SQLAlchemy 2.0 only: 2.1 has no such test
        }.get(pool.kind, ())
        if pool.kind == "set" and method == "contains":
            shapes = ()
        if pool.kind == "binary" and method == "like":  # SQLAlchemy 2.0 only: 2.1 has no such test
            shapes = ("binary-like",)
        if operation.startswith("not_"):
            return Cond(f"not_({body})", not_(clause), not_(judged), frozenset(shapes))
        return Cond(body, clause, judged, frozenset(shapes))

    def _function(self, name: str, pool: Pool, operation: str, column: Any, text: str) -> Cond:
        """DynamoDB's size(), begins_with() and contains(), written as functions; where SQL has
        no such test for the column's type, unknown."""
        draw, kind = self.draw, pool.kind
        if operation == "size":
            op, n = draw.choice(COMPARISONS), draw.integer(0, 3)
            if kind in (*STRING_KINDS, "binary"):
                measured: Any = func.length(column)
            elif kind in ("json", "set"):
                entries = func.json_each(column).table_valued("key")
                count = select(func.count()).select_from(entries).scalar_subquery()
                # JSON's null is a value SQLite's json_each() counts, but has no size (as a number)
                no_size = column.is_(None)
                if kind == "json":
                    no_size = or_(no_size, func.json_type(column) == "null")
                measured = case((no_size, null()), else_=count)
            else:
                measured = literal(None, Integer)  # no size: unknown
            shapes = () if kind in (*STRING_KINDS, "binary", "json", "set") else ("function-on-wrong-type",)
            return Cond(
                f"func.size({text}) {op} {n}",
                OPERATORS[op](func.size(column), n),
                OPERATORS[op](measured, n),
                frozenset(shapes),
            )
        function = operation.removesuffix("_function")
        if kind in (
            *STRING_KINDS,
            "binary",
        ):  # S or B: a prefix, a part, as SQLite's substr and instr find them
            operand = draw.choice(PREFIXES[name] if function == "begins_with" else PARTS[name])
            if not operand:  # every value starts with "" (SQLite's substr of an empty blob is NULL)
                judged: Any = present(column)
            elif function == "begins_with":
                judged = starts_with(column, operand)
            else:
                judged = func.instr(column, literal(operand)) > 0
            shapes: tuple[str, ...] = ()
        elif function == "contains" and kind in ("json", "set"):
            operand = draw.choice(PARTS[name])
            judged = self._member(column, operand, kind)
            shapes = ()
        else:
            operand = draw.choice(PREFIXES.get(name, ("1",)))
            judged = null()  # no such test of this type: unknown
            shapes = ("function-on-wrong-type",)
        return Cond(
            f"func.{function}({text}, {py(operand)})",
            getattr(func, function)(column, operand),
            judged,
            frozenset(shapes),
        )

    @staticmethod
    def _member(column: Any, member: Any, kind: str) -> Any:
        """SQL for DynamoDB's contains() of a set or a list: membership; false for a map,
        unknown for a missing attribute."""
        members = func.json_each(column).table_valued("value")
        found = exists(select(literal(1)).select_from(members).where(members.c.value == member))
        if kind == "json":
            found = found & (func.json_type(column) == "array")
        return case((column.is_(None), null()), else_=found)

    def _special(self, name: str, pool: Pool, operation: str, column: Any, text: str) -> Cond:
        draw = self.draw
        if operation == "bare":
            shapes = () if pool.kind == "bool" else ("bare-non-boolean",)
            return same(text, column, shapes)
        if operation == "not_bare":
            return same(f"not_({text})", sql_not(column))
        if operation == "is_true":
            value = draw.choice((True, False))
            return same(f"{text}.is_({value})", column.is_(value))
        if operation == "like_escape":
            return same(f"{text}.like('a/%%', escape='/')", column.like("a/%%", escape="/"))
        if operation in ("startswith_auto", "contains_auto"):
            part = draw.choice(("%", "_", "a%", "a_"))
            method = operation.removesuffix("_auto")
            return same(
                f"{text}.{method}({part!r}, autoescape=True)", getattr(column, method)(part, autoescape=True)
            )
        if operation == "set_contains":
            member = draw.choice(("x", "y", "w"))
            return Cond(
                f"{text}.contains({member!r})", column.contains(member), self._member(column, member, "set")
            )
        if operation in ("json", "json_in"):
            path = draw.choice(tuple(JSON_PATHS))
            element, values = JSON_PATHS[path][0](column), JSON_PATHS[path][1]
            if operation == "json_in":
                chosen = draw.some(values, 1, 3)
                return same(f"{text}{path}.in_({chosen!r})", element.in_(chosen), ("json-path", "json-in"))
            op, value = draw.choice(COMPARISONS), draw.choice(values)
            return same(f"{text}{path} {op} {value!r}", OPERATORS[op](element, value), ("json-path",))
        if operation == "json_is_null":
            clause = column["n"].as_integer().is_(None)
            return same(f"{text}['n'].as_integer().is_(None)", clause, ("json-path",))
        documents = [v for v in pool.stored if v]
        if operation == "document":
            op, value = draw.choice(("==", "!=")), draw.choice(documents)
            return same(f"{text} {op} {py(value)}", OPERATORS[op](column, value), ("document-compare",))
        if operation in ("document_in", "document_not_in"):
            chosen = draw.some(documents, 1, 2)
            method = "in_" if operation == "document_in" else "not_in"
            return same(
                f"{text}.{method}({py(chosen)})", getattr(column, method)(chosen), ("document-compare",)
            )
        if operation == "document_ordering":  # no order of maps, lists or sets: refused in SQL
            low, high = draw.choice(documents), draw.choice(documents)
            how = draw.choice(COMPARISONS[2:])
            return same(f"{text} {how} {py(low)}", OPERATORS[how](column, low), ("document-ordering",))
        if operation == "document_between":
            low, high = draw.choice(documents), draw.choice(documents)
            body, clause = f"{text}.between({py(low)}, {py(high)})", column.between(low, high)
            if draw.chance(50):
                return same(f"not_({body})", not_(clause), ("document-ordering",))
            return same(body, clause, ("document-ordering",))
        raise AssertionError(operation)

    def key_test(self, name: str) -> Cond:
        """A test of a key attribute (in a filter, or as the sort-key condition)."""
        draw, column, text = self.draw, self.column(name), f"{self.prefix}.{name}"
        lists = ("in", "not_in") if self.lists else ()
        if name == "pk":
            operation = draw.choice(("==", "!=", "<", ">=", "startswith", "between", *lists[:1]))
            values = (*PARTITIONS, "P", "P9")
            if operation == "in":
                chosen = draw.some(values, 1, 3)
                return same(f"{text}.in_({chosen!r})", column.in_(chosen), (), ("pk",))
            if operation == "startswith":
                return same(f"{text}.startswith('P')", column.startswith("P"), (), ("pk",))
            if operation == "between":
                low, high = draw.choice(values), draw.choice(values)
                shapes = ("reversed-between",) if low > high else ()
                return same(f"{text}.between({low!r}, {high!r})", column.between(low, high), shapes, ("pk",))
            value = draw.choice(values)
            return same(f"{text} {operation} {value!r}", OPERATORS[operation](column, value), (), ("pk",))
        operation = draw.choice((*COMPARISONS, "between", *lists))
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
        return same(f"{text} {operation} {value}", OPERATORS[operation](column, value), (), ("sk",))
