"""How the sides of a join are read: the driving side by its own plan, every other side fetched
by key for the rows joined so far (its whole key: BatchGetItem, 100 keys a request; or
the partition key of its table or of a global index: Queries of at most 50 partitions). A side
no key reaches is refused with the index that would reach it: a join is never scan x scan.

Items are read as stored (no column type's processing), so that the client compares them as
DynamoDB does and hands the rows on as the driver would."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, tuple_, type_coerce
from sqlalchemy.sql import elements, operators
from sqlalchemy.sql.sqltypes import NullType, TupleType

from ...dbapi.limits import MAX_PARTITION_KEYS
from ...exc import cannot_express
from ..compiler.predicate import Test, Values
from ..key_schema import index_key_schema, key_schema
from ..operators import canonical
from .sides import Reader, Side
from .steps import Step, run, step

KEYS = "sa_dynamo_keys"
Row = list[dict[str, Any]]  # one item per side, {} for a side not joined (or NULL-extended)


@dataclass(frozen=True)
class Read:
    """A side read by its own statement: ``names`` are the attributes it projects."""

    side: int
    step: Step
    names: tuple[str, ...]

    def items(self, context: Any, fresh: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The items it reads, as stored: an attribute absent (or NULL) is left out; ``fresh``:
        the values of the parameters the computation gives it (the keys to fetch)."""
        names = self.names
        rows = run(context, self.step, 0, [fresh] if fresh else None).all()  # not a fetch per row
        return [{n: v for n, v in zip(names, r, strict=True) if v is not None} for r in rows]


@dataclass(frozen=True)
class Fetch:
    """A side fetched by key for the rows joined so far.

    ``by``: each key attribute of the side, with the (side, attribute) of the joined rows that
    gives its value; ``pinned``: each other key attribute, with the parameter the side's own
    condition compares it to with ==; ``key``: the key's attributes in the order the statement
    lists them. ``chunk``: keys per statement (0: all of them in one, a batch of key reads
    read by BatchGetItem, 100 a request). ``kind``: "inner" or "left" (NULL-extended where nothing
    matches). ``match``: the ON condition over the row with a candidate in its place, None when
    the key equality is all of it."""

    read: Read
    by: tuple[tuple[str, tuple[int, str]], ...]
    chunk: int
    kind: str
    match: Test | None
    pinned: tuple[tuple[str, Any], ...] = ()
    key: tuple[str, ...] = ()

    def join(self, context: Any, rows: list[Row], values: Values) -> list[Row]:
        """The rows joined with this side's items."""
        fixed = {name: values(bind) for name, bind in self.pinned}
        found = [self._values_of_row(joined) for joined in rows]
        hashed = [None if each is None else _hashable(each) for each in found]  # each row's, once
        wanted = {}
        if None not in fixed.values():  # == NULL matches no item
            names = [name for name, _ in self.by]
            for each, key in zip(found, hashed, strict=True):
                if key is not None and key not in wanted:
                    named = {**dict(zip(names, each, strict=True)), **fixed}
                    wanted[key] = tuple(named[name] for name in self.key or names)
        fetched: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
        keys = list(wanted.values())
        size = self.chunk or max(len(keys), 1)
        for start in range(0, len(keys), size):
            chunk = keys[start : start + size]
            listed = chunk if len(chunk[0]) > 1 else [key[0] for key in chunk]
            for item in self.read.items(context, {KEYS: listed}):
                fetched[_hashable(item.get(name) for name, _ in self.by)].append(item)
        return self._joined(rows, hashed, fetched, values)

    def _values_of_row(self, joined: Row) -> list[Any] | None:
        values = [joined[side].get(name) for _, (side, name) in self.by]
        return None if any(v is None for v in values) else values

    def _joined(
        self,
        rows: list[Row],
        keys: list[tuple | None],
        fetched: dict[tuple, list[dict[str, Any]]],
        values: Values,
    ) -> list[Row]:
        out: list[Row] = []
        side = self.read.side
        for joined, key in zip(rows, keys, strict=True):
            matched = []
            for candidate in fetched.get(key, ()) if key is not None else ():
                extended = [*joined[:side], candidate, *joined[side + 1 :]]
                if self.match is None or self.match(extended, values):
                    matched.append(extended)
            out += matched or ([joined] if self.kind == "left" else [])
        return out


def _hashable(values: Any) -> tuple:
    """Key values as one hashable tuple in which DynamoDB's equal values are equal."""
    return tuple(canonical(v) for v in values)


def read_of(compiler: Any, reader: Reader, side: Side, names: list[str], terms: list[Any], role: str) -> Read:
    """The statement that reads ``names`` of ``side`` where its own ``terms`` hold."""
    statement = select(*(type_coerce(side.column(name), NullType()) for name in names)).where(
        *(reader.rebased(term, side) for term in terms)
    )
    return Read(side.number, step(compiler, statement, role), tuple(names))


def fetch_of(
    compiler: Any,
    reader: Reader,
    side: Side,
    names: list[str],
    terms: list[Any],
    equalities: dict[str, tuple[int, str]],
    kind: str,
    match: Test | None,
    purpose: str,
) -> Fetch | str:
    """The fetch of ``side`` by the first key its ``equalities`` (attribute -> the joined
    rows' (side, attribute)) reach: its whole key, its table's partition key, a global
    index's partition key; or, when none does, the refusal that says which index to add."""
    keys = key_schema(side.table)
    candidates: list[tuple[list[Any], int, str]] = [(list(keys.columns), 0, "by its whole key")]
    if keys.range_key is not None:
        candidates.append(([keys.hash_key], MAX_PARTITION_KEYS, "by its partition key"))
    for index in sorted(side.table.indexes, key=lambda i: i.name or ""):
        if not index.dialect_options["dynamodb"]["local"]:
            candidates.append(
                ([index_key_schema(index).hash_key], MAX_PARTITION_KEYS, f"on index {index.name}")
            )
    own = [reader.rebased(term, side) for term in terms]
    pinned = _pinned(terms)  # the statement's own parameters, whose values the execution has
    for columns, chunk, how in candidates:
        reached = [c for c in columns if c.name in equalities]
        if not reached or not all(c.name in equalities or c.name in pinned for c in columns):
            continue
        fixed = {c.name: pinned[c.name] for c in columns if c.name not in equalities}
        # the keys carry a pinned value: the statement need not test it again
        kept = [t for n, t in enumerate(own) if n not in {number for number, _ in fixed.values()}]
        listed = [n for n in names]
        listed += [c.name for c in columns if c.name not in listed]
        statement = select(*(type_coerce(side.column(n), NullType()) for n in listed)).where(
            _key_list(columns), *kept
        )
        fetch = step(compiler, statement, f"{side.name} fetched {how} {purpose}", frozenset({KEYS}))
        if fetch.plan.operation != "Scan":
            return Fetch(
                Read(side.number, fetch, tuple(listed)),
                tuple((c.name, equalities[c.name]) for c in reached),
                chunk,
                kind,
                match,
                tuple((name, bind) for name, (_, bind) in fixed.items()),
                tuple(c.name for c in columns),
            )
    return _unreachable(side, equalities, reader)


def _pinned(terms: list[Any]) -> dict[str, tuple[int, Any]]:
    """The attributes the side's own terms compare with == to one parameter: each with its
    term's place and the parameter."""
    found: dict[str, tuple[int, Any]] = {}
    for number, term in enumerate(terms):
        if not (isinstance(term, elements.BinaryExpression) and term.operator is operators.eq):
            continue
        for column, value in ((term.left, term.right), (term.right, term.left)):
            if (
                isinstance(column, elements.ColumnClause)
                and not column.is_literal
                and isinstance(value, elements.BindParameter)
                and not value.expanding
            ):
                found.setdefault(column.name, (number, value))
    return found


def _key_list(columns: list[Any]) -> Any:
    if len(columns) == 1:
        return columns[0].in_(bindparam(KEYS, expanding=True, type_=NullType()))
    keys = bindparam(KEYS, expanding=True, type_=TupleType(*(NullType() for _ in columns)))
    return tuple_(*columns).in_(keys)


def _unreachable(side: Side, equalities: dict[str, tuple[int, str]], reader: Reader) -> str:
    keys = key_schema(side.table)
    reachable = [keys.hash_key.name] + [
        index_key_schema(i).hash_key.name
        for i in side.table.indexes
        if not i.dialect_options["dynamodb"]["local"]
    ]
    compared = sorted(equalities)
    fix = (
        f"declare {side.table.name}.{compared[0]} with index=True (a global secondary index that projects "
        f"what the query reads), so that {side.name} is fetched by it"
        if compared
        else f"join on {' or '.join(dict.fromkeys(reachable))} with ==, so that {side.name} is fetched by key"
    )
    return cannot_express(
        f"a JOIN of {side.name} on {', '.join(compared) or 'no equality'}",
        f"DynamoDB reaches {side.name} by key only through {', '.join(dict.fromkeys(reachable))}; {fix}. "
        "A join is never run by reading both tables whole",
    )


def equalities_of(
    terms: list[Any], reader: Reader, side: Side, joined: set[int]
) -> dict[str, tuple[int, str]]:
    """The attributes of ``side`` the terms compare with == to an attribute of a joined side."""
    found: dict[str, tuple[int, str]] = {}
    for term in terms:
        if not (isinstance(term, elements.BinaryExpression) and term.operator is operators.eq):
            continue
        ends = [term.left, term.right]
        if not all(isinstance(e, elements.ColumnClause) and not e.is_literal for e in ends):
            continue
        sides = [reader.side_of(e) for e in ends]
        for (mine, their), (own, other) in ((ends, sides), (ends[::-1], sides[::-1])):
            if own is side and other is not None and other.number in joined:
                found.setdefault(mine.name, (other.number, their.name))
    return found
