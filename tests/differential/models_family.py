"""The statements of the modeled family (surface_models.py): ORM programs over products with key
templates, a computed key and an attribute bag, and over users, groups and their memberships.
Each step is one piece of ORM code that runs on both sides with their own classes; reads go
through the key templates and indexes on DynamoDB's side and are plain SQL on SQLite's."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.orm import Session

from .judge import Draw, Mismatch, Program, Step, same_rows
from .known_open import is_open
from .surface_models import (
    CATEGORIES,
    FINE_MOMENTS,
    FINE_PRICES,
    GROUPS,
    MOMENTS,
    PRICES,
    RANKS,
    ROLES,
    SKUS,
    USERS,
    base_memberships,
    base_products,
)
from .surface_types import Cond, combine, negate, pages, py

SETUP = """\
import datetime
from decimal import Decimal
from sqlalchemy import *
from sqlalchemy.orm import Session
import sa_dynamo
from tests.differential.models_family import seed
from tests.differential.surface_models import dynamodb_models
from tests.differential.surface_types import pages
engine = create_engine("dynamodb+local://", dynamodb_scan="allow")
m = dynamodb_models("surface_repro")
Product, User, Group, Membership = m.Product, m.User, m.Group, m.Membership
m.Base.metadata.create_all(engine)
seed(engine, m, fine=True)  # fine=False while finding-7 is open
session = Session(engine)
"""

WEIGHTS = {
    "read": 24,
    "count": 5,
    "paginate": 4,
    "add": 8,
    "change": 10,
    "bag": 4,
    "remove": 4,
    "bulk_update": 6,
    "bulk_update_many": 3,
    "bulk_delete": 3,
    "join": 6,
    "leave": 4,
    "replace": 4,
    "role": 4,
    "members": 8,
}
PAGE_SIZES = (1, 2, 3, 5)
SOURCES = ("name", "category", "price", "added", "archived_at", "rank")  # what the templates read
PLAIN = ("stock", "note")  # what no template reads


def seed(engine: Engine, models: SimpleNamespace, fine: bool) -> None:
    """The products, users, groups and memberships every program starts from."""
    with Session(engine) as session:
        session.add_all([models.Product(**models.written(product)) for product in base_products(fine)])
        users = {u: models.User(user_id=u, name=u.upper()) for u in USERS}
        groups = {g: models.Group(group_id=g, title=g.upper()) for g in GROUPS}
        session.add_all([*users.values(), *groups.values()])
        for user, group, role in base_memberships():
            users[user].memberships.append(models.Membership(group=groups[group], role=role))
        session.commit()


def _bag(value: Any) -> Any:
    """A bag's entries as both sides can compare them: DynamoDB gives numbers as Decimal."""
    return {k: Decimal(v) if isinstance(v, int) else v for k, v in sorted((value or {}).items())}


def product_row(product: Any) -> tuple[Any, ...]:
    return (
        product.sku,
        product.name,
        product.category,
        product.price,
        product.added,
        product.archived_at,
        product.rank,
        product.stock,
        product.note,
        _bag(product.extra),
    )


def membership_row(membership: Any) -> tuple[Any, ...]:
    return (membership.user_id, membership.group_id, membership.role)


class ModeledFamily:
    """Programs over the modeled classes; see judge.Family."""

    setup = SETUP

    def __init__(
        self,
        dynamodb_models: SimpleNamespace,
        sqlite_models: SimpleNamespace,
        sqlite: Engine,
        dynamodb: Engine,
        switched_off: frozenset[str] | None = None,
        weights: dict[str, int] | None = None,
        access: dict[str, int] | None = None,
    ):
        """``weights``: how often each statement kind is drawn (WEIGHTS unless given);
        ``access``: how often a read goes by sku, category, listing or scan."""
        self.models = {"dynamodb": dynamodb_models, "sqlite": sqlite_models}
        self.sqlite, self.dynamodb = sqlite, dynamodb
        self.switched_off = switched_off
        self.weights = weights or WEIGHTS  # statement kinds, by how often they are drawn
        self.access = access or {"sku": 2, "category": 5, "listing": 2, "scan": 1}
        self.fine = not self.open("finding-7")
        self.used: set[str] = set()  # the statement kinds drawn

    def open(self, finding: str) -> bool:
        return is_open(finding, self.switched_off)

    # --- the judge's hooks -----------------------------------------------------------------

    def session(self, engine: Engine, mode: str, judge: bool) -> Session:
        return Session(engine)

    def contents(self, engine: Engine, judge: bool) -> list[Any]:
        m = self.models["sqlite" if judge else "dynamodb"]
        with Session(engine) as session:
            products = sorted(product_row(p) for p in session.scalars(select(m.Product)))
            memberships = sorted(membership_row(x) for x in session.scalars(select(m.Membership)))
        return [*products, *memberships]

    def restore(self, keys: set[Any]) -> None:
        """Give the items a program wrote their first values back, on both sides."""
        if not keys:
            return
        skus = {key[1] for key in keys if key[0] == "product"}
        pairs = {key[1:] for key in keys if key[0] == "membership"}
        products = [p for p in base_products(self.fine) if p["sku"] in skus]
        memberships = [x for x in base_memberships() if x[:2] in pairs]
        for side, engine in (("sqlite", self.sqlite), ("dynamodb", self.dynamodb)):
            m = self.models[side]
            with Session(engine) as session:
                for sku in sorted(skus):
                    found = session.get(m.Product, m.product_key(sku))
                    if found is not None:
                        session.delete(found)
                for user, group in sorted(pairs):
                    found = session.get(m.Membership, m.membership_key(user, group))
                    if found is not None:
                        session.delete(found)
                session.flush()
                session.add_all([m.Product(**m.written(product)) for product in products])
                session.add_all([m.Membership(user_id=u, group_id=g, role=r) for u, g, r in memberships])
                session.commit()

    def reset(self) -> None:
        for side, engine in (("sqlite", self.sqlite), ("dynamodb", self.dynamodb)):
            m = self.models[side]
            with Session(engine) as session:
                for entity in (m.Product, m.Membership, m.User, m.Group):
                    for obj in session.scalars(select(entity)):
                        session.delete(obj)
                session.commit()
            seed(engine, m, self.fine)

    def classify(self, program: Program, mismatch: Mismatch) -> str:
        return classify(program, mismatch)

    def draw_step(self, draw: Draw, program: Program) -> Step:
        kind = draw.weighted(self.weights)
        self.used.add(kind)
        return dataclasses.replace(getattr(self, f"_{kind}")(draw, program), kind=kind)

    # --- helpers ---------------------------------------------------------------------------

    def _both(
        self,
        text: str,
        action: Callable[[Session, SimpleNamespace], Any],
        shapes: set[str],
        writes: set[Any] | frozenset[Any],
        program: Program,
        columns: set[str] | frozenset[str] = frozenset(),
    ) -> Step:
        """A step running ``action(session, models)`` on each side with that side's models;
        ``writes``: the items it may write, as ("product", sku) or ("membership", user, group).
        A write ends with a flush (inside a transaction) or a commit (outside one), so that an
        error shows at its step."""
        finish = "session.commit()" if program.mode == "autocommit" else "session.flush()"
        if set(writes) & program.deferred_keys and shapes & {"remove", "bulk-delete", "leave"}:
            shapes = shapes | {"delete-after-dup"}  # finding 5's shape: a duplicate, then its delete

        def on(side: str) -> Callable[[Session], Any]:
            def run(session: Session) -> Any:
                result = action(session, self.models[side])
                if writes:
                    getattr(session, finish.removeprefix("session.").removesuffix("()"))()
                return result

            return run

        return Step(
            f"{text}; {finish}" if writes else text,
            on("dynamodb"),
            on("sqlite"),
            frozenset(shapes),
            frozenset(writes),
            frozenset(columns),
        )

    def _stored_skus(self, program: Program) -> list[str]:
        m = self.models["sqlite"]
        return sorted(program.judged.scalars(select(m.Product.sku)))

    def _avoided(self, program: Program) -> set[Any]:
        """The items of a write SQLite refused as a duplicate in this transaction: left alone
        while finding 5 (a write of a duplicate, then a delete of it) is open."""
        return program.deferred_keys if self.open("finding-5") else set()

    def _sku(self, draw: Draw, program: Program, existing: bool) -> str:
        stored = self._stored_skus(program)
        allowed = [s for s in SKUS if ("product", s) not in self._avoided(program)]
        pool = [s for s in allowed if (s in stored) == existing]
        return draw.choice(pool or allowed)

    def _price(self, draw: Draw) -> Decimal:
        return draw.choice(PRICES + (FINE_PRICES if self.fine else ()))

    def _moment(self, draw: Draw) -> Any:
        return draw.choice(MOMENTS + (FINE_MOMENTS if self.fine else ()))

    def _value(self, draw: Draw, name: str) -> Any:
        if draw.chance(15) and name != "category":
            return None
        return {
            "category": lambda: draw.choice(CATEGORIES),
            "price": lambda: self._price(draw),
            "added": lambda: self._moment(draw),
            "archived_at": lambda: draw.choice(MOMENTS),
            "rank": lambda: draw.choice(RANKS),
            "stock": lambda: draw.integer(0, 9),
            "note": lambda: draw.choice(("new", "old", "sale")),
        }[name]()

    # --- product conditions ----------------------------------------------------------------

    def _test(self, draw: Draw, name: str, negated: bool = False) -> Cond:
        """A test of one product attribute, on both sides' class (``negated``: under an odd
        number of NOTs, where an IN is a NOT IN)."""
        values: tuple[Any, ...]
        if name == "price":
            values = PRICES + (FINE_PRICES if self.fine else ())
        elif name in ("added", "archived_at"):
            values = MOMENTS + (FINE_MOMENTS if self.fine and name == "added" else ())
        elif name in ("rank", "stock"):
            values = RANKS if name == "rank" else (0, 3, 5, 9)
        else:
            values = {
                "note": ("new", "old", "sale"),
                "name": ("anvil-s01", "bolt-s02"),
                "category": CATEGORIES,
            }[name]
        operation = draw.choice(
            ("==", "!=", "<", ">=", ">", "between", "in", "not_in", "is_null", "is_not_null")
        )
        value, other = draw.choice(values), draw.choice(values)
        chosen: list[Any] = []
        build: Callable[[Any], Any]
        if operation == "between":
            text, build = f".between({py(value)}, {py(other)})", lambda c: c.between(value, other)
        elif operation in ("in", "not_in"):
            chosen = draw.some(values, 1, 3)
            under_not = negated != (operation == "not_in")
            if draw.chance(25) and not (under_not and self.open("finding-2")):
                chosen.append(None)
            method = "in_" if operation == "in" else "not_in"
            text, build = f".{method}({py(chosen)})", lambda c: getattr(c, method)(chosen)
        elif operation == "is_null":
            text, build = ".is_(None)", lambda c: c.is_(None)
        elif operation == "is_not_null":
            text, build = ".is_not(None)", lambda c: c.is_not(None)
        else:
            ops = {"==": "__eq__", "!=": "__ne__", "<": "__lt__", ">=": "__ge__", ">": "__gt__"}
            text, build = f" {operation} {py(value)}", lambda c: getattr(c, ops[operation])(value)
        dynamodb, sqlite = (
            build(getattr(self.models[side].Product, name)) for side in ("dynamodb", "sqlite")
        )
        shapes = (
            {("in-null" if operation == "in" else "not-in-null")}
            if operation in ("in", "not_in") and None in chosen
            else set()
        )
        return Cond(f"Product.{name}{text}", dynamodb, sqlite, frozenset(shapes), frozenset({name}))

    def _filter(self, draw: Draw, depth: int, negated: bool = False) -> Cond:
        if depth == 0 or draw.chance(50):
            return self._test(draw, draw.choice(SOURCES + PLAIN), negated)
        kind = draw.choice(("and_", "or_", "not_"))
        if kind == "not_":
            return negate(self._filter(draw, depth - 1, not negated))
        return combine(kind, [self._filter(draw, depth - 1, negated) for _ in range(2)])

    def _access(self, draw: Draw) -> tuple[list[Cond], set[str]]:
        """How a product read reaches its items: by sku, by category (an index sorted by a
        template's source), by the computed listing key, or a scan."""
        d, s = (self.models[side].Product for side in ("dynamodb", "sqlite"))
        how = draw.weighted(self.access)
        if how == "sku":
            chosen = draw.some(SKUS, 1, 4)
            if len(chosen) == 1:
                return [Cond(f"Product.sku == {chosen[0]!r}", d.sku == chosen[0], s.sku == chosen[0])], {
                    "by-sku"
                }
            return [Cond(f"Product.sku.in_({chosen!r})", d.sku.in_(chosen), s.sku.in_(chosen))], {"by-sku"}
        if how == "listing":
            active = draw.chance(60)
            dynamodb, sqlite = (self.models[side].listed(active) for side in ("dynamodb", "sqlite"))
            label = "ACTIVE" if active else "ARCHIVED"
            return [
                Cond(
                    f"Product.gsi1pk == {label!r}", dynamodb, sqlite, frozenset(), frozenset({"archived_at"})
                )
            ], {"listing"}
        if how == "scan":
            return [], {"scan"}
        category = draw.choice(CATEGORIES)
        terms = [Cond(f"Product.category == {category!r}", d.category == category, s.category == category)]
        shapes = {"category"}
        if draw.chance(100 if self.open("finding-10") else 60):
            source = draw.choice(("price", "added", "rank"))
            terms.append(self._range(draw, source))
            shapes.add(f"range-{source}")
        return terms, shapes

    def _range(self, draw: Draw, name: str) -> Cond:
        """A range on the source of a sorted index key: the key condition it becomes may lose
        precision (finding 7) unless its bounds are as coarse as the format."""
        values = {
            "price": PRICES + (FINE_PRICES if self.fine else ()),
            "added": MOMENTS + (FINE_MOMENTS if self.fine else ()),
            "rank": RANKS,
        }[name]
        operation = draw.choice(("==", "<", "<=", ">", ">=", "between", "is_not_null"))
        low, high = sorted((draw.choice(values), draw.choice(values)))
        d, s = (getattr(self.models[side].Product, name) for side in ("dynamodb", "sqlite"))
        fine = any(v in FINE_PRICES + FINE_MOMENTS for v in (low, high))
        shapes = frozenset({"fine-bound"} if fine else set())
        if operation == "between":
            return Cond(
                f"Product.{name}.between({py(low)}, {py(high)})",
                d.between(low, high),
                s.between(low, high),
                shapes,
                frozenset({name}),
            )
        if operation == "is_not_null":
            return Cond(
                f"Product.{name}.is_not(None)", d.is_not(None), s.is_not(None), frozenset(), frozenset({name})
            )
        method = {"==": "__eq__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}[operation]
        return Cond(
            f"Product.{name} {operation} {py(low)}",
            getattr(d, method)(low),
            getattr(s, method)(low),
            shapes,
            frozenset({name}),
        )

    # --- reads -----------------------------------------------------------------------------

    def _where(self, draw: Draw) -> tuple[list[Cond], set[str]]:
        terms, shapes = self._access(draw)
        if not terms or draw.chance(50):
            terms.append(self._filter(draw, draw.integer(0, 2)))
        return terms, shapes

    def _read(self, draw: Draw, program: Program) -> Step:
        terms, shapes = self._where(draw)
        ordering, limit, options = "", None, {}
        if "listing" in shapes and draw.chance(60):
            descending = draw.chance(50)
            ordering = ".order_by(Product.gsi1sk.desc())" if descending else ".order_by(Product.gsi1sk)"
            shapes |= {"ordered", "desc" if descending else "asc"}
            if draw.chance(50):
                limit = draw.integer(1, 10)
                shapes.add("limit")
            if draw.chance(40) and not (descending and self.open("finding-15")):
                options["dynamodb_page_size"] = draw.choice(PAGE_SIZES)
                shapes.add("page-size")
        elif "scan" not in shapes and draw.chance(30) and not self.open("new-bag-client-sort"):
            ordering = ".order_by(Product.price.desc(), Product.sku)"
            options["dynamodb_client_sort"] = 1000
            shapes |= {"ordered", "client-sort"}
            limit = draw.integer(1, 10) if draw.chance(50) else None

        def action(session: Session, m: SimpleNamespace) -> Any:
            side = "dynamodb" if m is self.models["dynamodb"] else "sqlite"
            statement = select(m.Product).where(*(getattr(t, side) for t in terms))
            if ordering.startswith(".order_by(Product.gsi1sk"):
                statement = statement.order_by(m.by_name.desc() if "desc" in shapes else m.by_name)
            elif ordering:
                statement = statement.order_by(m.Product.price.desc(), m.Product.sku)
            if limit is not None:
                statement = statement.limit(limit)
            rows = [product_row(p) for p in session.scalars(statement.execution_options(**options))]
            return rows if ordering else sorted(rows)

        text = (
            f"[p for p in session.scalars(select(Product).where({', '.join(t.text for t in terms)}){ordering}"
        )
        text += f".limit({limit})" if limit is not None else ""
        text += f".execution_options(**{options!r})" if options else ""
        text += ")]"
        return self._both(
            text, action, shapes | {"read"} | _shapes(terms), frozenset(), program, _columns(terms)
        )

    def _count(self, draw: Draw, program: Program) -> Step:
        terms, shapes = self._where(draw)

        def action(session: Session, m: SimpleNamespace) -> Any:
            side = "dynamodb" if m is self.models["dynamodb"] else "sqlite"
            return session.scalar(
                select(func.count()).select_from(m.Product).where(*(getattr(t, side) for t in terms))
            )

        text = f"session.scalar(select(func.count()).select_from(Product).where({', '.join(t.text for t in terms)}))"
        return self._both(
            text, action, shapes | {"count"} | _shapes(terms), frozenset(), program, _columns(terms)
        )

    def _paginate(self, draw: Draw, program: Program) -> Step:
        if program.in_transaction and program.written:  # refused there (docs/transactions.md)
            return self._read(draw, program)
        active, size = draw.chance(60), draw.choice(PAGE_SIZES)
        descending = draw.chance(50) and not self.open("finding-15")
        label = "ACTIVE" if active else "ARCHIVED"
        order = "Product.gsi1sk.desc()" if descending else "Product.gsi1sk"
        text = f"pages(session, select(Product).where(Product.gsi1pk == {label!r}).order_by({order}), {size})"

        def listing(m: SimpleNamespace) -> Any:
            return (
                select(m.Product)
                .where(m.listed(active))
                .order_by(m.by_name.desc() if descending else m.by_name)
            )

        def on_dynamodb(session: Session) -> Any:
            got = pages(session, listing(self.models["dynamodb"]), size)
            return [[product_row(p) for p in page] for page in got]

        def on_sqlite(session: Session) -> Any:
            rows = [product_row(p) for p in session.scalars(listing(self.models["sqlite"]))]
            return [rows[i : i + size] for i in range(0, len(rows), size)] or [[]]

        shapes = {"paginate", "listing", "desc" if descending else "asc"}
        return Step(
            text, on_dynamodb, on_sqlite, frozenset(shapes), frozenset(), frozenset({"name", "archived_at"})
        )

    # --- product writes --------------------------------------------------------------------

    def _add(self, draw: Draw, program: Program) -> Step:
        existing = draw.chance(20)
        sku = self._sku(draw, program, existing)
        fields = {"sku": sku, "name": f"new-{sku}", "category": draw.choice(CATEGORIES)}
        for name in ("price", "added", "archived_at", "rank", "stock", "note"):
            if draw.chance(70):
                fields[name] = self._value(draw, name)
        extra = {"color": draw.choice(("red", "green"))} if draw.chance(40) else {}
        shapes = {"add", "dup-insert"} if sku in self._stored_skus(program) else {"add"}
        fine = (
            {"fine-value"}
            if fields.get("price") in FINE_PRICES or fields.get("added") in FINE_MOMENTS
            else set()
        )

        def action(session: Session, m: SimpleNamespace) -> None:
            session.add(m.Product(**m.written(fields), extra=dict(extra)))

        text = f"session.add(Product(**{_dict(fields)}, extra={extra!r}))"
        return self._both(text, action, shapes | fine, {("product", sku)}, program, set(fields))

    def _change(self, draw: Draw, program: Program) -> Step:
        sku = self._sku(draw, program, existing=True)
        names = sorted(set(draw.some(SOURCES[1:] + PLAIN, 1, 3)))
        values = {name: self._value(draw, name) for name in names}
        fine = (
            {"fine-value"}
            if values.get("price") in FINE_PRICES or values.get("added") in FINE_MOMENTS
            else set()
        )

        def action(session: Session, m: SimpleNamespace) -> None:
            product = session.get(m.Product, m.product_key(sku))
            for name, value in values.items():
                setattr(product, name, m.written({name: value})[name])

        text = f"product = session.get(Product, sa_dynamo.key_of(Product, sku={sku!r})); " + "; ".join(
            f"product.{name} = {py(value)}" for name, value in values.items()
        )
        return self._both(text, action, {"change"} | fine, {("product", sku)}, program, set(values))

    def _bag(self, draw: Draw, program: Program) -> Step:
        sku = self._sku(draw, program, existing=True)
        name, value, remove = draw.choice(("color", "size", "origin")), draw.integer(1, 3), draw.chance(30)

        def action(session: Session, m: SimpleNamespace) -> None:
            product = session.get(m.Product, m.product_key(sku))
            if product.extra is None:
                product.extra = {}
            if remove:
                product.extra.pop(name, None)
            else:
                product.extra[name] = value

        edit = f"product.extra.pop({name!r}, None)" if remove else f"product.extra[{name!r}] = {value}"
        text = f"product = session.get(Product, sa_dynamo.key_of(Product, sku={sku!r})); {edit}"
        return self._both(text, action, {"bag"}, {("product", sku)}, program, {"extra"})

    def _remove(self, draw: Draw, program: Program) -> Step:
        sku = self._sku(draw, program, existing=True)

        def action(session: Session, m: SimpleNamespace) -> None:
            session.delete(session.get(m.Product, m.product_key(sku)))

        text = f"session.delete(session.get(Product, sa_dynamo.key_of(Product, sku={sku!r})))"
        return self._both(text, action, {"remove"}, {("product", sku)}, program)

    def _settable(self) -> tuple[str, ...]:
        """What a bulk UPDATE sets: every attribute but the key's source, or (while finding 9 is
        open) only those no template reads."""
        return PLAIN if self.open("finding-9") else SOURCES[1:] + PLAIN

    def _bulk_update(self, draw: Draw, program: Program) -> Step:
        sku = self._sku(draw, program, existing=draw.chance(85))
        values = {name: self._value(draw, name) for name in sorted(set(draw.some(self._settable(), 1, 2)))}
        extra = [self._filter(draw, 1)] if draw.chance(40) else []
        sources = {"source-update"} if set(values) & set(SOURCES) else set()

        def action(session: Session, m: SimpleNamespace) -> int:
            side = "dynamodb" if m is self.models["dynamodb"] else "sqlite"
            key = m.Product.pk == m.product_key(sku)[0] if side == "dynamodb" else m.Product.sku == sku
            statement = (
                update(m.Product).where(key, *(getattr(t, side) for t in extra)).values(m.written(values))
            )
            return session.execute(statement).rowcount

        where = ", ".join([f"Product.pk == {'PRODUCT#' + sku!r}", *(t.text for t in extra)])
        text = f"session.execute(update(Product).where({where}).values({_dict(values)})).rowcount"
        shapes = {"bulk-update"} | sources | _shapes(extra)
        return self._both(text, action, shapes, {("product", sku)}, program, set(values))

    def _bulk_update_many(self, draw: Draw, program: Program) -> Step:
        skus = sorted(set(draw.some(self._stored_skus(program), 1, 3)))
        name = draw.choice(self._settable())
        rows = [(sku, self._value(draw, name)) for sku in skus]

        def action(session: Session, m: SimpleNamespace) -> None:
            side = "dynamodb" if m is self.models["dynamodb"] else "sqlite"
            key = "pk" if side == "dynamodb" else "sku"
            parameters = [
                {key: m.product_key(sku)[0] if side == "dynamodb" else sku, **m.written({name: v})}
                for sku, v in rows
            ]
            session.execute(update(m.Product), parameters)

        parameters = ", ".join(f"{{'pk': {'PRODUCT#' + sku!r}, {name!r}: {py(v)}}}" for sku, v in rows)
        text = f"session.execute(update(Product), [{parameters}])"
        sources = {"source-update"} if name in SOURCES else set()
        written = {("product", sku) for sku in skus}
        return self._both(text, action, {"bulk-update", "executemany"} | sources, written, program, {name})

    def _bulk_delete(self, draw: Draw, program: Program) -> Step:
        sku = self._sku(draw, program, existing=draw.chance(85))
        extra = [self._filter(draw, 1)] if draw.chance(40) else []

        def action(session: Session, m: SimpleNamespace) -> int:
            side = "dynamodb" if m is self.models["dynamodb"] else "sqlite"
            key = m.Product.pk == m.product_key(sku)[0] if side == "dynamodb" else m.Product.sku == sku
            return session.execute(delete(m.Product).where(key, *(getattr(t, side) for t in extra))).rowcount

        where = ", ".join([f"Product.pk == {'PRODUCT#' + sku!r}", *(t.text for t in extra)])
        text = f"session.execute(delete(Product).where({where})).rowcount"
        return self._both(text, action, {"bulk-delete"} | _shapes(extra), {("product", sku)}, program)

    # --- memberships -----------------------------------------------------------------------

    def _pairs(self, program: Program) -> set[tuple[str, str]]:
        m = self.models["sqlite"]
        return {(x.user_id, x.group_id) for x in program.judged.scalars(select(m.Membership))}

    def _join(self, draw: Draw, program: Program) -> Step:
        user, group, role = draw.choice(USERS), draw.choice(GROUPS), draw.choice(ROLES)
        if ("membership", user, group) in self._avoided(program):
            return self._members(draw, program)
        shapes = {"join", "dup-insert"} if (user, group) in self._pairs(program) else {"join"}

        def action(session: Session, m: SimpleNamespace) -> None:
            member = session.get(m.User, m.user_key(user))  # held: the session holds objects weakly
            member.memberships.append(m.Membership(group=session.get(m.Group, m.group_key(group)), role=role))

        text = (
            f"member = session.get(User, sa_dynamo.key_of(User, user_id={user!r})); member.memberships.append("
            f"Membership(group=session.get(Group, sa_dynamo.key_of(Group, group_id={group!r})), role={role!r}))"
        )
        return self._both(text, action, shapes, {("membership", user, group)}, program, {"role"})

    def _member(self, draw: Draw, program: Program) -> tuple[str, str]:
        pairs = sorted(p for p in self._pairs(program) if ("membership", *p) not in self._avoided(program))
        return draw.choice(pairs) if pairs else (USERS[0], GROUPS[0])

    def _leave(self, draw: Draw, program: Program) -> Step:
        user, group = self._member(draw, program)

        def action(session: Session, m: SimpleNamespace) -> None:
            member = session.get(m.User, m.user_key(user))
            for membership in [x for x in member.memberships if x.group_id == group]:
                member.memberships.remove(membership)

        text = (
            f"member = session.get(User, sa_dynamo.key_of(User, user_id={user!r})); "
            f"[member.memberships.remove(x) for x in list(member.memberships) if x.group_id == {group!r}]"
        )
        return self._both(text, action, {"leave"}, {("membership", user, group)}, program)

    def _replace(self, draw: Draw, program: Program) -> Step:
        """The membership of a pair removed and a new one for the same pair appended, in one
        flush (finding 5's many-to-many shape): SQL sees the new role."""
        if self.open("finding-5") or self.open("new-replace-in-one-flush"):
            return self._role(draw, program)
        user, group = self._member(draw, program)
        role = draw.choice(ROLES)

        def action(session: Session, m: SimpleNamespace) -> None:
            member = session.get(m.User, m.user_key(user))
            for membership in [x for x in member.memberships if x.group_id == group]:
                member.memberships.remove(membership)
            member.memberships.append(m.Membership(group=session.get(m.Group, m.group_key(group)), role=role))

        text = (
            f"member = session.get(User, sa_dynamo.key_of(User, user_id={user!r})); "
            f"[member.memberships.remove(x) for x in list(member.memberships) if x.group_id == {group!r}]; "
            f"member.memberships.append(Membership(group=session.get(Group, sa_dynamo.key_of(Group, group_id={group!r})), "
            f"role={role!r}))"
        )
        written = {("membership", user, group)}
        return self._both(text, action, {"replace", "delete-after-dup"}, written, program, {"role"})

    def _role(self, draw: Draw, program: Program) -> Step:
        user, group = self._member(draw, program)
        role = draw.choice((*ROLES, None))

        def action(session: Session, m: SimpleNamespace) -> None:
            member = session.get(m.User, m.user_key(user))
            for membership in member.memberships:
                if membership.group_id == group:
                    membership.role = role

        text = (
            f"member = session.get(User, sa_dynamo.key_of(User, user_id={user!r})); "
            f"[setattr(x, 'role', {role!r}) for x in member.memberships if x.group_id == {group!r}]"
        )
        return self._both(text, action, {"role"}, {("membership", user, group)}, program, {"role"})

    def _members(self, draw: Draw, program: Program) -> Step:
        """A membership read: of a user (its partition), of a group (the inverted index), by
        role, or a count."""
        how = draw.choice(("user", "group", "role", "count"))
        value = draw.choice(USERS if how == "user" else GROUPS)
        role = draw.choice((*ROLES, None))

        def action(session: Session, m: SimpleNamespace) -> Any:
            x = m.Membership
            if how == "user":
                where = [x.user_id == value]
            elif how == "group":
                where = [x.group_id == value]
            else:
                where = [x.group_id == value, x.role.not_in([role]) if role else x.role.is_(None)]
            if how == "count":
                return session.scalar(select(func.count()).select_from(x).where(x.group_id == value))
            return sorted(membership_row(y) for y in session.scalars(select(x).where(*where)))

        if how == "count":
            text = f"session.scalar(select(func.count()).select_from(Membership).where(Membership.group_id == {value!r}))"
        else:
            where = {
                "user": f"Membership.user_id == {value!r}",
                "group": f"Membership.group_id == {value!r}",
            }.get(
                how,
                f"Membership.group_id == {value!r}, "
                + (f"Membership.role.not_in([{role!r}])" if role else "Membership.role.is_(None)"),
            )
            text = f"[x for x in session.scalars(select(Membership).where({where}))]"
        return self._both(text, action, {"members", how}, frozenset(), program, {"role"})


def _dict(values: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k!r}: {py(v)}" for k, v in values.items()) + "}"


def _shapes(terms: list[Cond]) -> set[str]:
    return set().union(*(t.shapes for t in terms))


def _columns(terms: list[Cond]) -> set[str]:
    return set().union(*(t.columns for t in terms))


def classify(program: Program, mismatch: Mismatch) -> str:
    shapes = mismatch.step.shapes if mismatch.step is not None else frozenset()
    everything = program.shapes
    got, expected = mismatch.dynamodb, mismatch.sqlite
    if mismatch.dynamodb is not None and mismatch.dynamodb.kind == "refused":
        return "NEW: a refusal after the statement was sent"
    if mismatch.phase == "deferred":
        if "delete-after-dup" in everything:
            return "finding-5"
        return "NEW: a duplicate key inside a transaction is not an IntegrityError by the commit"
    if "replace" in shapes or (
        "replace" in everything and ("members" in shapes or mismatch.phase == "table")
    ):
        return "finding-5"
    if mismatch.phase == "table":
        return "NEW: the final tables differ"
    assert got is not None and expected is not None
    if "client-sort" in shapes and (
        "SELECT *," in got.message or "cannot test this statement's WHERE" in got.message
    ):
        return "new-bag-client-sort"
    if "not-in-null" in shapes:
        return "finding-2"
    reordered = got.kind == expected.kind == "ok" and same_rows(expected.value, got.value)
    if (
        "desc" in shapes
        and ("page-size" in shapes or "paginate" in shapes)
        and (reordered or "limit" in shapes)
    ):
        return "finding-15"
    if "source-update" in everything and ({"category", "listing"} & shapes):
        return "finding-9"
    if "category" in shapes and not any(s.startswith("range-") for s in shapes):
        return "finding-10"
    if {"fine-bound", "fine-value"} & everything and any(s.startswith("range-") for s in shapes):
        return "finding-7"
    what = next((s for s in ("read", "count", "paginate", "members") if s in shapes), "write")
    answer = got.kind if got.kind != "ok" else "another answer"
    return f"NEW: {what}: {answer}{' ' + str(got.value) if got.kind != 'ok' else ''}"
