"""The tables of a SELECT computed on the client. Each FROM element (a table, or an alias of one:
the ORM aliases a table it joins to itself or loads eagerly) is a side, read by a statement of
its own; the joins between them run left to right, each with its kind and its ON condition; a
clause reads some sides, and a clause of one side is rewritten over its table to be sent."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

from sqlalchemy.sql import elements, visitors
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.selectable import Join, TableClause

from ...exc import refuse
from ...sqlalchemy_private import plain
from ..compiler.normal_form import described, table_of, terms_of


@dataclass(frozen=True)
class Side:
    """One FROM element. ``number``: its place in the joined row; ``join``: "from" for the
    first, else "inner" or "left" (LEFT OUTER JOIN, this side's columns NULL where nothing
    matches); ``on``: the ON condition's AND terms."""

    number: int
    source: Any
    table: Table
    join: str
    on: tuple[Any, ...] = ()

    @property
    def name(self) -> str:
        """The side as a message names it: its table, and the alias the statement gives it."""
        alias = getattr(self.source, "name", None)
        if alias in (None, self.table.name):
            return self.table.name
        # an anonymous alias (the ORM's, loading a relationship) is named when compiled, not here
        return f"{self.table.name} (an alias)" if "%(" in alias else f"{self.table.name} (as {alias})"

    def column(self, name: str) -> Any:
        """The table's column of that name (an alias's column is sent as its table's)."""
        return next(c for c in self.table.columns if c.name == name)


def sides_of(froms: list[Any]) -> list[Side]:
    """The sides of a SELECT's FROM, left to right; a FROM they cannot be is refused."""
    if len(froms) != 1:
        refuse(
            "a SELECT over several tables without a JOIN",
            "join them with .join(other, onclause) (or select from one table)",
        )
    sides: list[Side] = []

    def add(source: Any, join: str, on: tuple[Any, ...] = ()) -> None:
        table = table_of(plain(source))
        if isinstance(table, TableClause) and not isinstance(table, Table):
            refuse(
                f"a JOIN with the table {table.name} as a name only (SQL text, or table())",
                "join the Table objects or models that declare its keys, with SQLAlchemy's join(): the "
                "other table is fetched by its key",
            )
        if not isinstance(table, Table):
            refuse(
                f"a JOIN with a {described(table)}",
                "join tables (run a subquery as its own statement and pass its rows as parameters)",
            )
        sides.append(Side(len(sides), plain(source), table, join, on))

    def walk(from_: Any) -> None:
        if not isinstance(from_, Join):
            add(from_, "from")
            return
        walk(from_.left)
        if isinstance(from_.right, Join):
            refuse("a JOIN nested on its right side", "write the joins one after the other, left to right")
        if from_.full:
            refuse("FULL OUTER JOIN", "use an inner or a LEFT OUTER JOIN")
        add(from_.right, "left" if from_.isouter else "inner", tuple(terms_of([from_.onclause])))

    walk(froms[0])
    return sides


class Reader:
    """Which sides a clause reads: each column is matched to the FROM element it belongs to."""

    def __init__(self, sides: list[Side]):
        self.sides = sides
        self._by_source = {id(side.source): side for side in sides}

    def side_of(self, column: Any) -> Side | None:
        return self._by_source.get(id(plain(getattr(column, "table", None))))

    def columns(self, clauses: Iterable[Any]) -> list[tuple[Side, str]]:
        """(side, attribute) of each column the clauses read, each once, in order."""
        found: dict[tuple[int, str], tuple[Side, str]] = {}
        for clause in clauses:
            for element in visitors.iterate(clause):
                if isinstance(element, elements.ColumnClause) and not element.is_literal:
                    side = self.side_of(element)
                    if side is None:
                        self._refuse_outside(element)
                    found.setdefault((side.number, element.name), (side, element.name))
        return list(found.values())

    def _refuse_outside(self, column: Any) -> NoReturn:
        """A column of no FROM element: of a table the FROM joins only as an alias (a condition
        written for the table, not the alias), or of no table the statement joins."""
        table = table_of(plain(column.table)) if column.table is not None else None
        aliases = [side.name for side in self.sides if side.table is table and side.source is not table]
        if aliases:
            refuse(
                f"the column {column.name} of the table {table.name}, which the FROM joins only as "
                f"{aliases[0]}",
                "a condition names the table where the statement joins only its alias: name the alias's "
                "columns (the aliased class's attributes, or alias.c.<column>)",
            )
        refuse(
            f"the column {column.name} of no table in the FROM",
            "name columns of the tables the statement joins (a subquery may name the outer query's "
            "columns only in EXISTS, compared by ==)",
        )

    def sides_read(self, clause: Any) -> frozenset[int]:
        return frozenset(side.number for side, _ in self.columns([clause]))

    def rebased(self, clause: Any, side: Side) -> Any:
        """``clause`` (of ``side`` alone) over the side's table, to be sent in its read."""

        def replace(element: Any) -> Any:
            if isinstance(element, elements.ColumnClause) and not element.is_literal:
                return side.column(element.name)
            return None

        return visitors.replacement_traverse(clause, {}, replace)
