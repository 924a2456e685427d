"""The statements of the typed family (surface_types.py): reads by every access path (a
partition, several, a list of keys, the global index, a scan) with ORDER BY, LIMIT and small
pages, COUNT, paginate(), INSERT, UPDATE and DELETE by key and as executemany, the ORM's bulk
UPDATE and DELETE, each drawn for a program that runs inside or outside a transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    Engine,
    Table,
    bindparam,
    delete,
    event,
    false,
    func,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.orm import Session

from .conditions import Conditions
from .judge import Draw, Mismatch, Program, Step, same_rows
from .known_open import is_open
from .surface_types import (
    COLUMNS,
    PARTITIONS,
    POOLS,
    SORT_KEYS,
    Cond,
    base_rows,
    pages,
    py,
    same,
)

SETUP = """\
import datetime
from decimal import Decimal
from sqlalchemy import *
from sqlalchemy.orm import Session
import sa_dynamo
from tests.differential.surface_types import Size, base_rows, make_models, pages
engine = create_engine("dynamodb+local://", dynamodb_scan="allow")
t, Row = make_models("surface_repro")
t.metadata.create_all(engine)
with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
    conn.execute(t.insert(), base_rows())
session = Session(engine)  # mode 'autocommit': Session(engine.execution_options(isolation_level="AUTOCOMMIT"))
"""

# The shapes of the conditions each finding needs (a finding known_open.py lists is not drawn).
SHAPES = {
    "finding-2": "not-in-null",
    "new-ne-null-parameter": "ne-null-parameter",
    "new-bare-non-boolean": "bare-non-boolean",
    "new-string-test-on-document": "string-test-on-document",
    "new-binary-like": "binary-like",
    "new-set-string-test": "string-test-on-set",
    "new-document-ordering": "document-ordering",
    "new-function-on-wrong-type": "function-on-wrong-type",
}
# Where the driver tests a WHERE in Python (inside a transaction, over a list of full keys)
CLIENT_SHAPES = {"finding-1": "float-compare", "new-document-compare-on-the-client": "document-compare"}
WRITE_SHAPES = {"new-json-path-in-write": "json-path"}  # in an UPDATE's or DELETE's WHERE only
READ_SHAPES = {"new-json-path-not-in-ordered": "json-not-in"}  # in a read (that may be ordered)
COUNT_SHAPES = {"finding-3": "reversed-between"}  # in a COUNT only: a WHERE known to match nothing
INDEX_SHAPES = {  # in a read of the index by_i only
    "finding-17": "index-key-is-null",
    "new-index-key-null-parameter": "index-key-null-parameter",
    "new-index-key-exists": "index-key-exists",
}
WEIGHTS = {
    "read": 30,
    "count": 6,
    "paginate": 5,
    "insert": 9,
    "insert_many": 4,
    "update": 12,
    "update_many": 5,
    "delete": 7,
    "delete_many": 3,
    "orm_update": 4,
    "orm_bulk": 3,
    "orm_delete": 3,
    "partial_key": 3,  # under 3, some randomized runs of ~2,000 draws never drew it
}
PAGE_SIZES = (1, 2, 3, 3, 5, 5, 7)


def case_sensitive_like(engine: Engine) -> None:
    """SQLite's LIKE (behind startswith() and contains()) ignores ASCII case unless told."""
    event.listen(engine, "connect", lambda conn, _: conn.execute("PRAGMA case_sensitive_like = ON"))


def dict_text(values: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{name!r}: {py(value)}" for name, value in values.items()) + "}"


def _rows(result: Any, order: str) -> Any:
    """A read's rows with their types: in order under a total ORDER BY; by key otherwise; under
    ORDER BY sk on the index (ties between partitions), the sk sequence and the rows by key."""
    rows = [tuple(row) for row in result]
    if order == "total":
        return rows
    by_key = sorted(rows, key=lambda row: (row[0], row[1]))
    if order == "sk":
        return [row[1] for row in rows], by_key
    return by_key


class TypedFamily:
    """Programs over the typed table; see judge.Family."""

    setup = SETUP

    def __init__(
        self,
        table: Table,
        row: type,
        sqlite: Engine,
        dynamodb: Engine,
        switched_off: frozenset[str] | None = None,
        weights: dict[str, int] | None = None,
        focus: tuple[str, ...] = (),
    ):
        """``weights``: how often each statement kind is drawn (WEIGHTS unless given);
        ``focus``: condition operations drawn half the time (test_surface_finds.py)."""
        self.t, self.Row = table, row
        self.focus = focus
        self.sqlite, self.dynamodb = sqlite, dynamodb
        self.switched_off = switched_off
        self.weights = weights or WEIGHTS  # statement kinds, by how often they are drawn
        self.rows = base_rows()
        self.base = {(r["pk"], r["sk"]): r for r in self.rows}
        self.used: set[str] = set()  # the statement kinds drawn

    def open(self, finding: str) -> bool:
        return is_open(finding, self.switched_off)

    # --- the judge's hooks -----------------------------------------------------------------

    def session(self, engine: Engine, mode: str, judge: bool) -> Session:
        bind = engine.execution_options(isolation_level="AUTOCOMMIT") if mode == "autocommit" else engine
        return Session(bind)

    def contents(self, engine: Engine, judge: bool) -> list[Any]:
        with engine.connect() as conn:
            return _rows(conn.execute(select(self.t)), "key")

    def restore(self, keys: set[Any]) -> None:
        """Give the keys a program wrote their first rows back, on both sides."""
        if keys:
            for engine in (self.sqlite, self.dynamodb):
                self._rewrite(engine, keys)

    def reset(self) -> None:
        """Both tables back to the first rows, whatever a disagreement left in them."""
        for engine in (self.sqlite, self.dynamodb):
            with engine.connect() as conn:
                stored = {tuple(row) for row in conn.execute(select(self.t.c.pk, self.t.c.sk))}
            self._rewrite(engine, stored | set(self.base))

    def _rewrite(self, engine: Engine, keys: set[Any]) -> None:
        t = self.t
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            by_key = delete(t).where(t.c.pk == bindparam("p_"), t.c.sk == bindparam("k_"))
            conn.execute(by_key, [{"p_": pk, "k_": sk} for pk, sk in sorted(keys)])
            rows = [self.base[key] for key in sorted(keys) if key in self.base]
            if rows:
                conn.execute(insert(t), rows)

    def draw_step(self, draw: Draw, program: Program) -> Step:
        kind = draw.weighted(self.weights)
        self.used.add(kind)
        return dataclasses.replace(getattr(self, f"_{kind}")(draw, program), kind=kind)

    # --- drawing helpers -------------------------------------------------------------------

    def _conditions(self, draw: Draw, program: Program, where: dict[str, str] | None = None) -> Conditions:
        """Conditions of the shapes this program may have: none of an open finding's
        (``where``: the shapes of findings of the statement at hand)."""
        shapes = {**SHAPES, **(CLIENT_SHAPES if program.in_transaction else {}), **(where or {})}
        excluded = frozenset(shape for finding, shape in shapes.items() if self.open(finding))
        return Conditions(draw, self.t, excluded=excluded, focus=self.focus)

    def _stored(self, program: Program) -> set[tuple[str, int]]:
        t = self.t
        return {tuple(row) for row in program.judged.execute(select(t.c.pk, t.c.sk))}

    def _key(self, draw: Draw, program: Program, existing: bool) -> tuple[str, int]:
        """A stored key, or a free one; never (while finding 5 is open) the key of an INSERT
        SQLite refused as a duplicate in this transaction."""
        stored = self._stored(program)
        avoided = program.deferred_keys if self.open("finding-5") else set()
        every = [(p, k) for p in PARTITIONS for k in SORT_KEYS if (p, k) not in avoided]
        pool = sorted(stored - avoided) if existing else [key for key in every if key not in stored]
        return draw.choice(pool or every)

    def _row(self, draw: Draw, key: tuple[str, int]) -> dict[str, Any]:
        row: dict[str, Any] = {"pk": key[0], "sk": key[1]}
        for name in COLUMNS:
            if draw.chance(70):
                row[name] = draw.choice(POOLS[name].stored)
            elif draw.chance(30):
                row[name] = None  # said, not left out
        return row

    def _values(self, draw: Draw) -> dict[str, Any]:
        names = draw.some(COLUMNS, 1, 3)
        return {name: None if draw.chance(20) else draw.choice(POOLS[name].stored) for name in names}

    def _current(self, draw: Draw, program: Program, key: tuple[str, int], orm: bool = False) -> list[Cond]:
        """A test that a column holds the value it holds now (SQLite's side knows it), as an
        application checks what it read before it writes: [] when the key holds no item."""
        name = draw.choice(COLUMNS)
        t = self.t
        found = program.judged.execute(select(t.c[name]).where(t.c.pk == key[0], t.c.sk == key[1])).first()
        conditions = self._conditions(draw, program)
        conditions.entity = self.Row if orm else None
        cond = None if found is None else conditions.equals(name, found[0])
        return [] if cond is None else [cond]

    def _extra(
        self, draw: Draw, program: Program, percent: int, orm: bool = False, lists: bool = True
    ) -> list[Cond]:
        """A condition beside the key of an UPDATE or DELETE (``orm``: on the ORM class's
        attributes, the same on both sides; ``lists``: IN lists allowed, which an executemany
        cannot expand)."""
        if not draw.chance(percent):
            return []
        conditions = self._conditions(draw, program, WRITE_SHAPES)
        conditions.lists = lists
        conditions.entity = self.Row if orm else None
        portable = orm
        conditions.keys = not self.open("new-write-key-retest")
        for _ in range(10):
            cond = conditions.condition(draw.integer(0, 1))
            if cond.portable or not portable:
                return [cond]
        return []

    def _key_terms(self, key: tuple[str, int], orm: bool = False) -> list[Cond]:
        pk, sk = (self.Row.pk, self.Row.sk) if orm else (self.t.c.pk, self.t.c.sk)
        prefix = "Row" if orm else "t.c"
        return [
            same(f"{prefix}.pk == {key[0]!r}", pk == key[0], (), ("pk",)),
            same(f"{prefix}.sk == {key[1]!r}", sk == key[1], (), ("sk",)),
        ]

    @staticmethod
    def _where(terms: list[Cond], side: str) -> list[Any]:
        return [getattr(term, side) for term in terms]

    @staticmethod
    def _where_text(terms: list[Cond]) -> str:
        return ", ".join(term.text for term in terms)

    def _step(
        self,
        text: str,
        build: Callable[[str], Any],
        observe: Callable[[Any, Any], Any],
        terms: list[Cond],
        shapes: set[str],
        keys: frozenset[Any] = frozenset(),
        columns: set[str] | frozenset[str] = frozenset(),
    ) -> Step:
        """A step that builds its statement for each side and observes what executing it gives."""
        dynamodb, sqlite = build("dynamodb"), build("sqlite")
        all_shapes = frozenset(shapes).union(*(term.shapes for term in terms))
        all_columns = frozenset(columns).union(*(term.columns for term in terms))
        return Step(
            text,
            lambda s: observe(s, dynamodb),
            lambda s: observe(s, sqlite),
            all_shapes,
            keys,
            all_columns,
        )

    # --- reads -----------------------------------------------------------------------------

    def _access(self, draw: Draw, program: Program, conditions: Conditions) -> tuple[str, list[Cond]]:
        """How the read reaches its items, as the conditions that say so."""
        t = self.t
        access = draw.weighted({"pin": 5, "partitions": 2, "keys": 1, "index": 2, "scan": 2})
        terms: list[Cond] = []
        if access == "pin":
            partition = draw.choice(PARTITIONS)
            terms.append(same(f"t.c.pk == {partition!r}", t.c.pk == partition, (), ("pk",)))
            if draw.chance(50):
                terms.append(conditions.test("sk"))
        elif access == "partitions":
            chosen = list(dict.fromkeys(draw.some(PARTITIONS, 2, 3)))  # in any order
            if draw.chance(50):
                terms.append(same(f"t.c.pk.in_({chosen!r})", t.c.pk.in_(chosen), (), ("pk",)))
            else:
                text = ", ".join(f"t.c.pk == {p!r}" for p in chosen)
                terms.append(same(f"or_({text})", or_(*(t.c.pk == p for p in chosen)), (), ("pk",)))
        elif access == "keys":  # a batch of GetItems: the rest of the WHERE is tested in Python
            conditions.excluded |= {shape for finding, shape in CLIENT_SHAPES.items() if self.open(finding)}
            keys = [(draw.choice(PARTITIONS), draw.choice(SORT_KEYS)) for _ in range(draw.integer(1, 8))]
            keys += [("P9", 1)] if draw.chance(30) else []
            clause = tuple_(t.c.pk, t.c.sk).in_(keys)
            terms.append(same(f"tuple_(t.c.pk, t.c.sk).in_({keys!r})", clause, (), ("pk", "sk")))
        elif access == "index":
            value = draw.choice(POOLS["i"].stored)
            terms.append(same(f"t.c.i == {value!r}", t.c.i == value, ("index",), ("i",)))
            if draw.chance(40):
                terms.append(conditions.test("sk"))
        return access, terms

    def _read(self, draw: Draw, program: Program) -> Step:
        t, conditions = self.t, self._conditions(draw, program, {**INDEX_SHAPES, **READ_SHAPES})
        access, terms = self._access(draw, program, conditions)
        if draw.chance(75 if access == "scan" else 60):
            terms.append(conditions.condition(draw.integer(0, 2)))
        if program.written and draw.chance(30):  # read back what this program wrote
            terms += self._current(draw, program, draw.choice(sorted(program.written)))
        shown = [] if draw.chance(60) else sorted(set(draw.some(COLUMNS, 1, 3)))
        shapes: set[str] = set()
        order, ordering, ordering_text, options = "key", [], [], {}
        if access in ("pin", "index") and draw.chance(60):
            descending = draw.chance(50)
            order = "total" if access == "pin" else "sk"
            ordering, ordering_text = (
                [t.c.sk.desc() if descending else t.c.sk],
                ["t.c.sk.desc()" if descending else "t.c.sk"],
            )
            shapes.add("desc" if descending else "asc")
        elif (access != "scan" and draw.chance(40)) or (access == "scan" and draw.chance(5)):
            order = "total"
            for name in sorted(
                set(draw.some([c for c in COLUMNS if POOLS[c].kind not in ("json", "set")], 1, 2))
            ):
                descending = draw.chance(50)
                ordering.append(t.c[name].desc() if descending else t.c[name])
                ordering_text.append(f"t.c.{name}.desc()" if descending else f"t.c.{name}")
            ordering += [t.c.pk, t.c.sk]
            ordering_text += ["t.c.pk", "t.c.sk"]
            options["dynamodb_client_sort"] = 1000
            shapes.add("client-sort")
        if access == "index" and "desc" in shapes and shown and self.open("new-index-desc-projection"):
            shown = sorted({*shown, "i"})  # the index's partition key, projected
        limit = draw.integer(1, 40) if order == "total" and draw.chance(50) else None
        paged = access in ("pin", "index", "partitions") and draw.chance(35)
        if paged and not ("desc" in shapes and self.open("finding-15")):
            options["dynamodb_page_size"] = draw.choice(PAGE_SIZES)
            shapes.add("page-size")
        if limit is not None:
            shapes.add("limit")
        projection = [t] if not shown else [t.c.pk, t.c.sk, *(t.c[name] for name in shown)]
        projection_text = "t" if not shown else ", ".join(["t.c.pk", "t.c.sk", *(f"t.c.{n}" for n in shown)])

        def build(side: str) -> Any:
            statement = select(*projection).where(*self._where(terms, side))
            if ordering:
                statement = statement.order_by(*ordering)
            if limit is not None:
                statement = statement.limit(limit)
            return statement.execution_options(**options) if options else statement

        text = f"session.execute(select({projection_text}).where({self._where_text(terms)})"
        text += f".order_by({', '.join(ordering_text)})" if ordering else ""
        text += f".limit({limit})" if limit is not None else ""
        text += f".execution_options(**{options!r})" if options else ""
        text += ").all()"
        return self._step(
            text,
            build,
            lambda s, st: _rows(s.execute(st), order),
            terms,
            shapes | {"read", access},
            columns=set(shown),
        )

    def _count(self, draw: Draw, program: Program) -> Step:
        t, conditions = self.t, self._conditions(draw, program, {**COUNT_SHAPES, **INDEX_SHAPES})
        access, terms = self._access(draw, program, conditions)
        shapes = {"count", access}
        if draw.chance(60):
            terms.append(conditions.condition(draw.integer(0, 2)))
        if draw.chance(25) and not self.open("finding-3"):
            empty = draw.choice(("between", "pk_null", "false"))
            shapes.add("known-empty")
            if empty == "between":
                terms.append(same("t.c.sk.between(30, 5)", t.c.sk.between(30, 5), (), ("sk",)))
            elif empty == "pk_null":
                terms.append(same("t.c.pk.is_(None)", t.c.pk.is_(None), (), ("pk",)))
            else:
                terms.append(same("false()", false()))

        def build(side: str) -> Any:
            return select(func.count()).select_from(t).where(*self._where(terms, side))

        text = f"session.execute(select(func.count()).select_from(t).where({self._where_text(terms)})).all()"
        return self._step(text, build, lambda s, st: [tuple(r) for r in s.execute(st)], terms, shapes)

    def _paginate(self, draw: Draw, program: Program) -> Step:
        if program.in_transaction and program.written:  # refused there (docs/transactions.md)
            return self._read(draw, program)
        t, conditions = self.t, self._conditions(draw, program, READ_SHAPES)
        partition = draw.choice(PARTITIONS)
        terms = [same(f"t.c.pk == {partition!r}", t.c.pk == partition, (), ("pk",))]
        if draw.chance(50):
            terms.append(conditions.condition(draw.integer(0, 1)))
        shapes = {"paginate"}
        directions = ("none", "asc") if self.open("finding-15") else ("none", "asc", "desc")
        direction = draw.choice(directions)
        ordering = {"none": [], "asc": [t.c.sk], "desc": [t.c.sk.desc()]}[direction]
        ordering_text = {"none": "", "asc": ".order_by(t.c.sk)", "desc": ".order_by(t.c.sk.desc())"}[
            direction
        ]
        if direction != "none":
            shapes.add(direction)
        limit = draw.integer(1, 12) if draw.chance(30) and not self.open("finding-16") else None
        if limit is not None:
            shapes.add("paginate-limit")
        size = draw.choice(PAGE_SIZES)

        def build(side: str) -> Any:
            statement = select(t).where(*self._where(terms, side))
            statement = statement.order_by(*ordering) if ordering else statement
            return statement.limit(limit) if limit is not None else statement

        def on_dynamodb(session: Any, statement: Any) -> Any:
            return [_rows(page, "total") for page in pages(session, statement, size)]

        def on_sqlite(session: Any, statement: Any) -> Any:
            rows = [tuple(row) for row in session.execute(statement)]
            if direction == "none":
                rows.sort(key=lambda row: row[1])  # DynamoDB's order of a partition
            chunks = [rows[i : i + size] for i in range(0, len(rows), size)] or [[]]
            return [_rows(page, "total") for page in chunks]

        dynamodb, sqlite = build("dynamodb"), build("sqlite")
        text = f"pages(session, select(t).where({self._where_text(terms)}){ordering_text}"
        text += f".limit({limit})" if limit is not None else ""
        text += f", {size})"
        return Step(
            text,
            lambda s: on_dynamodb(s, dynamodb),
            lambda s: on_sqlite(s, sqlite),
            frozenset(shapes).union(*(term.shapes for term in terms)),
            frozenset(),
            frozenset().union(*(term.columns for term in terms)),
        )

    # --- writes ----------------------------------------------------------------------------

    def _insert(self, draw: Draw, program: Program) -> Step:
        existing = draw.chance(25)
        key = self._key(draw, program, existing)
        row = self._row(draw, key)
        statement = insert(self.t).values(row)
        shapes = {"insert", "dup-insert"} if key in self._stored(program) else {"insert"}
        return Step(
            f"session.execute(insert(t).values({dict_text(row)})).rowcount",
            lambda s: s.execute(statement).rowcount,
            lambda s: s.execute(statement).rowcount,
            frozenset(shapes),
            frozenset({key}),
            frozenset(row) - {"pk", "sk"},
        )

    def _insert_many(self, draw: Draw, program: Program) -> Step:
        stored = self._stored(program)
        keys = {self._key(draw, program, existing=False) for _ in range(draw.integer(2, 4))}
        if program.in_transaction and draw.chance(25):
            keys.add(self._key(draw, program, existing=True))
        rows = [self._row(draw, key) for key in sorted(keys)]
        names = sorted({name for row in rows for name in row})
        rows = [{name: row.get(name) for name in names} for row in rows]  # executemany: one shape
        shapes = {"insert", "executemany"} | ({"dup-insert"} if keys & stored else set())
        statement = insert(self.t)
        return Step(
            f"session.execute(insert(t), [{', '.join(dict_text(r) for r in rows)}]).rowcount",
            lambda s: s.execute(statement, rows).rowcount,
            lambda s: s.execute(statement, rows).rowcount,
            frozenset(shapes),
            frozenset(keys),
            frozenset(names) - {"pk", "sk"},
        )

    def _target(self, draw: Draw, program: Program, percent: int) -> tuple[tuple[str, int], set[str]]:
        """The key an UPDATE or DELETE names: mostly a stored one; after an INSERT that SQLite
        refused as a duplicate (DynamoDB's side still runs), often that key."""
        if program.deferred_keys and draw.chance(60) and not self.open("finding-5"):
            return draw.choice(sorted(program.deferred_keys)), {"after-dup"}
        return self._key(draw, program, existing=draw.chance(percent)), set()

    def _update(self, draw: Draw, program: Program) -> Step:
        return self._by_key(draw, program, "update", orm=False)

    def _delete(self, draw: Draw, program: Program) -> Step:
        return self._by_key(draw, program, "delete", orm=False)

    def _orm_update(self, draw: Draw, program: Program) -> Step:
        return self._by_key(draw, program, "update", orm=True)

    def _orm_delete(self, draw: Draw, program: Program) -> Step:
        return self._by_key(draw, program, "delete", orm=True)

    def _by_key(self, draw: Draw, program: Program, kind: str, orm: bool) -> Step:
        """An UPDATE or DELETE of one key, with a condition beside it: Core's on the table, or
        the ORM's on Row with a synchronize_session strategy."""
        key, shapes = self._target(draw, program, 85 if kind == "update" else 80)
        if kind == "delete" and key in program.deferred_keys:
            shapes.add("delete-after-dup")
        percent = 50 if kind == "update" else 40
        extra = (
            self._current(draw, program, key, orm)
            if draw.chance(30)
            else self._extra(draw, program, percent, orm=orm)
        )
        terms = self._key_terms(key, orm) + extra
        values = self._values(draw) if kind == "update" else {}
        synchronize = self._synchronize(draw) if orm else None
        target, name = (self.Row, "Row") if orm else (self.t, "t")

        def build(side: str) -> Any:
            where = self._where(terms, side)
            statement = (
                update(target).where(*where).values(values) if values else delete(target).where(*where)
            )
            return statement.execution_options(synchronize_session=synchronize) if orm else statement

        text = f"session.execute({kind}({name}).where({self._where_text(terms)})"
        text += f".values({dict_text(values)})" if values else ""
        text += f".execution_options(synchronize_session={synchronize!r})" if orm else ""
        text += ").rowcount"
        return self._step(
            text,
            build,
            lambda s, st: s.execute(st).rowcount,
            terms,
            shapes | {kind, *(("orm",) if orm else ())},
            frozenset({key}),
            set(values),
        )

    def _many_keys(self, draw: Draw, program: Program) -> tuple[list[tuple[str, int]], bool]:
        """Keys of an executemany UPDATE/DELETE, and whether it may add a condition: while
        findings 4 and 6 are open, one in a transaction names stored keys only, unconditionally."""
        careful = program.in_transaction and (self.open("finding-6") or self.open("finding-4"))
        keys = [
            self._key(draw, program, existing=careful or draw.chance(70)) for _ in range(draw.integer(2, 4))
        ]
        return sorted(set(keys)), not careful

    def _update_many(self, draw: Draw, program: Program) -> Step:
        return self._many(draw, program, "update")

    def _delete_many(self, draw: Draw, program: Program) -> Step:
        if program.in_transaction and self.open("finding-4"):
            return self._delete(draw, program)
        return self._many(draw, program, "delete")

    def _many(self, draw: Draw, program: Program, kind: str) -> Step:
        """An executemany UPDATE or DELETE: one statement with the key as parameters, run for
        2 to 4 keys, with a condition beside the key."""
        t = self.t
        keys, conditional = self._many_keys(draw, program)
        if kind == "delete" and not conditional and self.open("finding-4"):
            keys = sorted(set(keys) & self._stored(program)) or keys
        extra = self._extra(draw, program, 30, lists=False) if conditional else []
        terms = [
            same("t.c.pk == bindparam('p_')", t.c.pk == bindparam("p_")),
            same("t.c.sk == bindparam('k_')", t.c.sk == bindparam("k_")),
            *extra,
        ]
        name = draw.choice(COLUMNS) if kind == "update" else None
        parameters = [
            {"p_": pk, "k_": sk, **({"v_": draw.choice(POOLS[name].stored)} if name else {})}
            for pk, sk in keys
        ]
        shapes = {kind, "executemany"}
        if kind == "delete" and set(keys) & program.deferred_keys:
            shapes.add("delete-after-dup")

        def build(side: str) -> Any:
            where = self._where(terms, side)
            return (
                update(t).where(*where).values({name: bindparam("v_")}) if name else delete(t).where(*where)
            )

        values = f".values({name}=bindparam('v_'))" if name else ""
        text = f"session.execute({kind}(t).where({self._where_text(terms)}){values}, "
        text += "[" + ", ".join(dict_text(p) for p in parameters) + "]).rowcount"
        return self._step(
            text,
            build,
            lambda s, st: s.execute(st, parameters).rowcount,
            terms,
            shapes,
            frozenset(keys),
            {name} if name else set(),
        )

    def _synchronize(self, draw: Draw) -> Any:
        return draw.choice(("evaluate", "fetch", False))

    def _orm_bulk(self, draw: Draw, program: Program) -> Step:
        """The ORM's bulk UPDATE by primary key: a list of dicts, one UPDATE per item
        (SQLAlchemy gives no rowcount for it; the final table is compared)."""
        stored = sorted(self._stored(program))
        keys = sorted({draw.choice(stored) for _ in range(draw.integer(1, 3))}) if stored else []
        name = draw.choice(COLUMNS)
        parameters = [{"pk": pk, "sk": sk, name: draw.choice(POOLS[name].stored)} for pk, sk in keys]
        statement = update(self.Row)

        def run(session: Any) -> None:
            session.execute(statement, parameters)

        return Step(
            f"session.execute(update(Row), [{', '.join(dict_text(p) for p in parameters)}])",
            run,
            run,
            frozenset({"update", "orm", "executemany"}),
            frozenset(keys),
            frozenset({name}),
        )

    def _partial_key(self, draw: Draw, program: Program) -> Step:
        """An UPDATE or DELETE without the whole key: refused before anything is sent."""
        t, partition = self.t, draw.choice(PARTITIONS)
        if draw.chance(50):
            statement: Any = update(t).where(t.c.pk == partition).values(s="z")
            text = f"session.execute(update(t).where(t.c.pk == {partition!r}).values(s='z')).rowcount"
        else:
            statement = delete(t).where(t.c.pk == partition, t.c.s == "a")
            text = f"session.execute(delete(t).where(t.c.pk == {partition!r}, t.c.s == 'a')).rowcount"
        keys = frozenset((partition, k) for k in SORT_KEYS)
        return Step(
            text,
            lambda s: s.execute(statement).rowcount,
            lambda s: s.execute(statement).rowcount,
            frozenset({"partial-key"}),
            keys,
        )

    # --- what a disagreement is ------------------------------------------------------------

    def classify(self, program: Program, mismatch: Mismatch) -> str:
        """The finding of issue 26 a disagreement is an instance of, or NEW and what it is."""
        return classify(program, mismatch)


def classify(program: Program, mismatch: Mismatch) -> str:
    """The finding a disagreement is an instance of (by the shapes of its statement and what
    DynamoDB's side answered), or NEW and what it is."""
    shapes = mismatch.step.shapes if mismatch.step is not None else frozenset()
    everything = program.shapes
    got, expected = mismatch.dynamodb, mismatch.sqlite
    if got is not None and got.kind == "refused":
        return "NEW: a refusal after the statement was sent"
    if mismatch.phase == "deferred":
        if "delete-after-dup" in everything:
            return "finding-5"
        return "NEW: a duplicate key inside a transaction is not an IntegrityError by the commit"
    if mismatch.phase == "table":
        for finding, shape in CLIENT_SHAPES.items():
            if shape in everything and program.in_transaction:
                return finding
        return "NEW: the final tables differ"
    assert got is not None and expected is not None
    message = got.message
    if got.kind == "ok" and got.value == -1:
        return "finding-4"
    if "schema type" in message or "InternalFailure" in message or "schema:" in message:
        for finding, shape in INDEX_SHAPES.items():  # the planner may read by_i for i == x anywhere
            if shape in shapes:
                return finding
    for finding, shape in SHAPES.items():  # a test that should be refused, or NULL's meaning
        if shape in shapes:
            return finding
    if (
        {"update", "delete"} & shapes
        and "json-path" in shapes
        and ("well formed" in message or "path component" in message)
    ):
        return "new-json-path-in-write"
    if "json-not-in" in shapes and "InternalFailure" in message:
        return "new-json-path-not-in-ordered"
    if program.in_transaction or "keys" in shapes:
        for finding, shape in CLIENT_SHAPES.items():
            if shape in shapes:
                return finding
    if "count" in shapes and got.kind == "ok" and got.value == [] and expected.value == [(0,)]:
        return "finding-3"
    if program.in_transaction and "executemany" in shapes and got.kind == expected.kind == "ok":
        return "finding-6"  # every parameter set counted, the ones that match nothing too
    if got.value == "StaleDataError" and "executemany" in everything:
        return "finding-6"
    if "paginate-limit" in shapes:
        return "finding-16"
    reordered = same_rows(expected.value, got.value)
    if (
        "desc" in shapes
        and ("page-size" in shapes or "paginate" in shapes)
        and (reordered or "limit" in shapes)
    ):
        return "finding-15"
    if "Multiple conditions on same key" in message:
        return "new-write-key-retest"
    if {"index", "desc"} <= shapes and "InternalFailure" in message:
        return "new-index-desc-projection"
    kinds = ("read", "count", "paginate", "insert", "update", "delete", "partial-key")
    what = next((kind for kind in kinds if kind in shapes), "commit")
    answer = got.kind if got.kind != "ok" else "another answer"
    return f"NEW: {what}: {answer}{' ' + str(got.value) if got.kind != 'ok' else ''}"
