"""The order in which a SELECT's sides are read: one drives, read by its own plan; each other
side is fetched by key for the rows joined so far (fetches.py). The WHERE's and the ON's terms
of one side go into that side's statement; a term across sides is tested on the client as soon
as the sides it reads are joined (an inner join), or where SQL puts it (a LEFT OUTER JOIN's ON
while joining, the WHERE after). With inner joins only, any side may drive: one that a key
condition reads (no scan) is preferred, in the FROM's order; with an outer join the FROM's
order is kept, its right side fetched for its left."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import CompileError

from ...exc import cannot_express
from ..compiler.predicate import Resolve, Test, predicate_of
from ..key_schema import key_schema
from .fetches import Fetch, Read, equalities_of, fetch_of, read_of
from .semi_joins import SemiDriver
from .sides import Reader, Side


@dataclass(frozen=True)
class JoinPlan:
    driver: Read | SemiDriver
    fetches: tuple[Fetch, ...]
    after: list[Any]  # terms tested on the joined rows once every side is joined


def test_of(terms: list[Any], resolve: Resolve, what: str) -> Test | None:
    """The client's test of ``terms`` (None for none); refused when a term cannot be tested."""
    if not terms:
        return None
    test = predicate_of(terms, resolve)
    if test is None:
        raise CompileError(
            cannot_express(what, "compare columns and values with the operators a WHERE takes on one table")
        )
    return test


class Planner:
    """The plan of a SELECT's sides: which terms each side's statement carries, and the order."""

    def __init__(
        self,
        compiler: Any,
        reader: Reader,
        needed: dict[int, list[str]],
        where: list[Any],
        resolve: Resolve,
        semi_keys: dict[int, list[tuple[int, dict[str, tuple[int, str]]]]] | None = None,
    ):
        self.compiler, self.reader, self.needed, self.resolve = compiler, reader, needed, resolve
        self.semi_keys = semi_keys or {}
        sides = reader.sides
        self.all_inner = all(s.join in ("from", "inner") for s in sides)
        self.own: dict[int, list[Any]] = defaultdict(list)  # terms of one side, sent in its statement
        self.pool: list[Any] = []  # terms across sides, tested as soon as their sides are joined
        self.after: list[Any] = []
        for term in where:
            read = reader.sides_read(term)
            if len(read) == 1 and sides[next(iter(read))].join in ("from", "inner"):
                self.own[next(iter(read))].append(term)
            elif self.all_inner and read:
                self.pool.append(term)
            else:
                self.after.append(term)
        self.on: dict[int, list[Any]] = defaultdict(list)  # ON terms across sides, tested joining
        for side in sides:
            for term in side.on:
                read = reader.sides_read(term)
                if read == {side.number}:
                    self.own[side.number].append(term)
                elif self.all_inner and side.join != "left":
                    self.pool.append(term)
                else:
                    self.on[side.number].append(term)
        # the attributes of the terms tested on the client are read too; a side read for no
        # attribute projects its partition key
        tested = [*self.pool, *self.after, *(term for terms in self.on.values() for term in terms)]
        for side, name in reader.columns(tested):
            if name not in needed[side.number]:
                needed[side.number].append(name)
        for side in sides:
            needed[side.number] = needed[side.number] or [key_schema(side.table).hash_key.name]

    def plan(self) -> JoinPlan:
        sides = self.reader.sides
        drivers = [s for s in sides if s.join in ("from", "inner")] if self.all_inner else sides[:1]
        reads = {s.number: self._driving(s) for s in drivers}
        failures = []
        for keyed in (True, False):  # a driver read by a key condition first
            for side in drivers:
                if (reads[side.number].step.plan.operation != "Scan") == keyed:
                    found = self._chain(reads[side.number])
                    if isinstance(found, JoinPlan):
                        return found
                    failures.append(found)
        raise CompileError(failures[0])

    def _driving(self, side: Side) -> Read | SemiDriver:
        """The side's own read; or, where that would be a scan, the side fetched by key for the
        values of an IN or EXISTS subquery that compares its key (semi_joins.py)."""
        read = self._read(side)
        if read.step.plan.operation != "Scan":
            return read
        for semi, by in self.semi_keys.get(side.number, ()):
            fetch = self._keyed(side, by, "inner", None, "for the values the subquery read")
            if not isinstance(fetch, str):
                return SemiDriver(side.number, semi, fetch)
        return read

    def _read(self, side: Side) -> Read:
        return read_of(
            self.compiler,
            self.reader,
            side,
            self.needed[side.number],
            self.own[side.number],
            f"{side.name} read by its own plan",
        )

    def _chain(self, driver: Read | SemiDriver) -> JoinPlan | str:
        joined = {driver.side}
        pool = list(self.pool)
        remaining = [s for s in self.reader.sides if s.number != driver.side]
        fetches = []
        while remaining:
            candidates = remaining if self.all_inner else remaining[:1]
            failure = None
            for side in candidates:
                fetch = self._fetch(side, joined, pool)
                if isinstance(fetch, str):
                    failure = failure or fetch
                    continue
                fetches.append(fetch)
                joined.add(side.number)
                remaining.remove(side)
                break
            else:
                return failure or cannot_express("this JOIN", "join each table on a key of the other")
        return JoinPlan(driver, tuple(fetches), self.after + pool)

    def _fetch(self, side: Side, joined: set[int], pool: list[Any]) -> Fetch | str:
        """``side`` fetched by key for the ``joined`` sides' rows; the pool's terms that the
        join covers are tested while joining, and taken from the pool."""
        terms = pool + self.on[side.number]
        equalities = equalities_of(terms, self.reader, side, joined)
        covered = [t for t in terms if self.reader.sides_read(t) <= joined | {side.number}]
        kind = side.join if side.join != "from" else "inner"
        match = test_of(covered, self.resolve, f"the ON condition of the JOIN of {side.name}")
        fetch = self._keyed(side, equalities, kind, match, "for the rows joined so far")
        if not isinstance(fetch, str):
            pool[:] = [t for t in pool if not any(t is c for c in covered)]
        return fetch

    def _keyed(
        self, side: Side, by: dict[str, tuple[int, str]], kind: str, match: Test | None, purpose: str
    ) -> Fetch | str:
        """``side`` with its own terms, fetched by the key ``by`` reaches (fetches.fetch_of)."""
        needed, own = self.needed[side.number], self.own[side.number]
        return fetch_of(self.compiler, self.reader, side, needed, own, by, kind, match, purpose)
