"""What the execution finishes in a compiled statement's text: the operator count DynamoDB
limits, NOT IN as a chain of <>, and INSERT/UPDATE templates that leave None attributes out."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from sqlalchemy.exc import CompileError

from ...exc import AttributeBagError

_QUOTED = re.compile(r'"(?:[^"]|"")*"|\'(?:[^\']|\'\')*\'')
_COMPARATORS = re.compile(r"<>|<=|>=|=|<|>")
_WORD_OPERATORS = re.compile(r"\b(?:AND|OR|NOT|IN|IS|BETWEEN)\b")
_CALLS = re.compile(r"\b\w+\(")


def operator_count(statement: str) -> int:
    """Operators and functions in a statement's WHERE, as DynamoDB counts them toward its limit
    of 300 (a BETWEEN's own AND is part of the BETWEEN)."""
    where = _QUOTED.sub(" ", statement).partition(" WHERE ")[2].partition(" ORDER BY ")[0]
    between = where.count("BETWEEN")
    return (
        len(_COMPARATORS.findall(where))
        + len(_WORD_OPERATORS.findall(where))
        - between
        + len(_CALLS.findall(where))
    )


# an attribute, or a path into one: "doc"['a'][0]
_ATTRIBUTE = r'"(?:[^"]|"")*"(?:\[(?:\'(?:[^\']|\'\')*\'|\d+)\])*'
_NOT_IN = re.compile(rf"NOT ({_ATTRIBUTE}) IN \[(\?(?:, \?)*)\]")


def not_in_as_chain(statement: str) -> str:
    """``NOT "x" IN [?, ?]`` as ``("x" <> ? AND "x" <> ?)``: the same test without NOT, which
    DynamoDB Local fails beside ORDER BY. Parameters keep their order."""
    return _NOT_IN.sub(
        lambda m: "(" + " AND ".join(f"{m.group(1)} <> ?" for _ in m.group(2).split(", ")) + ")", statement
    )


_OPERAND = rf"(?:size\({_ATTRIBUTE}\)|{_ATTRIBUTE})"
_EMPTY_IN = re.compile(
    rf"(?P<negated>\(NOT {_OPERAND} IN \[\] AND attribute_exists\({_ATTRIBUTE}\) AND {_ATTRIBUTE} <> NULL\)"
    rf"|NOT {_OPERAND} IN \[\])|{_OPERAND} IN \[\]"
)


_BEGINS_WITH = re.compile(rf"begins_with\(({_ATTRIBUTE}), \?\)")


def empty_lists_decided(statement: str) -> str:
    """Each IN with an empty list (``"x" IN []``, which DynamoDB rejects) as the constant SQL
    says it is: ``x IN ()`` FALSE and ``x NOT IN ()`` TRUE for every item, a missing or NULL x
    included (the guard of a NOT IN goes with it)."""
    return _EMPTY_IN.sub(lambda found: "1 = 1" if found["negated"] else "1 = 2", statement)


def empty_key_prefixes_decided(statement: str, attributes: frozenset[str], values: list[Any]) -> str:
    """``begins_with()`` of a key attribute (one of ``attributes``, quoted) with an empty prefix,
    which DynamoDB rejects (no key value is empty), as ``(? = '')``: TRUE for every item, as
    SQL's ``x LIKE '%'`` is of a key no item lacks. ``values``: the statement's parameters, in
    order; the parameter stays in its place."""

    def decided(found: re.Match[str]) -> str:
        position = _QUOTED.sub("", statement[: found.start()]).count("?")
        empty = found[1] in attributes and values[position] in ("", b"")
        return "(? = '')" if empty else found[0]

    return _BEGINS_WITH.sub(decided, statement)


class Entry(NamedTuple):
    attribute: str  # rendered name: "'a'" in an INSERT tuple, '"a"' in an UPDATE
    value: str  # the value's placeholder


class DMLTemplate(NamedTuple):
    """How to re-render an INSERT/UPDATE when some values are None (attribute absent).

    INSERT omits such attributes; UPDATE REMOVEs them (keeping sparse indexes sparse).
    The value parameters come first in the statement, one per entry, in entry order.
    """

    kind: str  # "INSERT" or "UPDATE"
    head: str
    entries: tuple[Entry, ...]
    tail: str
    bag: int | None = None  # the entry of an attribute bag, whose value (a BagWrite) is expanded
    removes: tuple[str, ...] = ()  # attributes an UPDATE REMOVEs besides the absent entries
    columns: tuple[tuple[str, str], ...] = ()  # (attribute, column key) of each column of the table
    bag_name: str = ""  # the key of the attribute bag's column

    def absent_entries(self, params: Any) -> frozenset[int]:
        """The entries whose value in ``params`` (the statement's positional values) is None."""
        return frozenset(i for i in range(len(self.entries)) if params[i] is None)

    def render(self, absent: frozenset[int] = frozenset()) -> str:
        if self.kind == "INSERT":
            body = ", ".join(
                f"{e.attribute}: {e.value}" for i, e in enumerate(self.entries) if i not in absent
            )
            return f"{self.head} {{{body}}}{self.tail}"
        sets = [f"{e.attribute} = {e.value}" for i, e in enumerate(self.entries) if i not in absent]
        removed = [e.attribute for i, e in enumerate(self.entries) if i in absent] + list(self.removes)
        removes = [f" REMOVE {name}" for name in removed]
        return self.head + (" SET " + ", ".join(sets) if sets else "") + "".join(removes) + self.tail

    def refuse_bag_clashes(self, params: Any) -> None:
        """An attribute bag that names an attribute a column of the table maps (its key, above
        all) would write that attribute behind the column's back (``extra={"pk": "b"}`` stores
        the item under key b): refused, before anything is sent, with the column to set."""
        write = params[self.bag]
        clashes = [(name, key) for name, key in self.columns if name in write.set or name in write.remove]
        if clashes:
            names = ", ".join(repr(name) for name, _ in clashes)
            raise AttributeBagError(
                f"the attribute bag {self.bag_name!r} holds {names}, which the table's columns map: "
                f"give the column its own value ({clashes[0][1]}=...) and leave it out of the bag"
            )

    def with_bag(self, params: Any) -> tuple[DMLTemplate, list[Any]]:
        """The template and values with the bag's entry replaced by the attributes it writes:
        every entry SET (INSERT: every entry), the deleted ones REMOVEd."""
        index = self.bag
        write = params[index]
        names = tuple(write.set)
        quote = _literal if self.kind == "INSERT" else _identifier
        entries = (
            *self.entries[:index],
            *(Entry(quote(name), "?") for name in names),
            *self.entries[index + 1 :],
        )
        removes = tuple(_identifier(name) for name in write.remove if name not in write.set)
        if self.kind == "UPDATE" and len(entries) == 0 and not removes:
            removes = (self.entries[index].attribute,)  # never stored: REMOVE is a no-op
        values = [*params[:index], *(write.set[name] for name in names), *params[index + 1 :]]
        return self._replace(entries=entries, removes=removes, bag=None), values

    def finalized(self, final_text: str) -> DMLTemplate:
        """The same template over the final statement text, whose placeholders are all ``?``."""
        entries = tuple(e._replace(value="?") for e in self.entries)
        prefix = self._replace(entries=entries, tail="").render()
        if not final_text.startswith(prefix):
            raise CompileError(f"internal: unexpected statement text {final_text!r}")
        return self._replace(entries=entries, tail=final_text[len(prefix) :])


def _literal(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
