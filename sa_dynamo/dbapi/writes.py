"""Writes held for one transaction, coalesced per item.

DynamoDB rejects a transaction that touches one item twice, yet a unit of work routinely does
(insert, then update after an autoflush; two updates of a versioned row). Writes in the
canonical forms the dialect emits are parsed into a Write and merged with the earlier write of
the same item, so COMMIT sends one action per item; where the merge decides the outcome (an
UPDATE of an item this transaction deleted, a version check against values it wrote), the
rowcount is known at once. Other statements are sent as written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from .errors import IntegrityError, NotSupportedError, shown

_IDENT = r'"(?:[^"]|"")*"'
# The canonical INSERT/UPDATE forms, also read by the dialect to rewrite None as absent.
INSERT_FORM = re.compile(
    rf"^(?P<head>(?P<verb>INSERT|PUT) INTO (?P<table>{_IDENT}) VALUE) \{{(?P<body>.*)\}}$", re.DOTALL
)
INSERT_ENTRY = re.compile(r"('(?:[^']|'')*'): \?")
UPDATE_FORM = re.compile(
    rf"^(?P<head>UPDATE (?P<table>{_IDENT}))(?: SET (?P<sets>.*?))?(?P<removes>(?: REMOVE {_IDENT})*)"
    rf"(?P<tail> WHERE (?P<where>.*))$",
    re.DOTALL,
)
SET_ENTRY = re.compile(rf"({_IDENT}) = \?")
_REMOVE = re.compile(rf" REMOVE ({_IDENT})")
_DELETE = re.compile(
    rf"^DELETE FROM (?P<table>{_IDENT}) WHERE (?P<where>.*?)(?: RETURNING ALL OLD \*)?$", re.DOTALL
)
_EQUALS = re.compile(rf"^({_IDENT}) = \?$")


def _plain(key_value: dict[str, Any]) -> Any:
    """A key's AttributeValue (S, N or B) as the Python value it was given as."""
    ((kind, inner),) = key_value.items()
    return Decimal(inner) if kind == "N" else inner


def _name(quoted: str) -> str:
    return quoted[1:-1].replace('""', '"')


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def joined(pattern: re.Pattern, text: str, separator: str) -> list[str] | None:
    """The names of ``pattern`` repeated with ``separator``, or None if the text is anything else."""
    matches = list(pattern.finditer(text))
    if separator.join(m.group(0) for m in matches) != text:
        return None
    return [m.group(1) for m in matches]


@dataclass
class Condition:
    """Extra WHERE conditions of an UPDATE/DELETE: the PartiQL text and its parameters. When
    the text is only ``"a" = ? AND "b" = ?`` it can be checked against values in hand."""

    text: str
    parameters: list[dict]

    def equalities(self) -> dict[str, dict] | None:
        names = []
        for part in self.text.split(" AND "):
            match = _EQUALS.match(part.strip())
            if match is None:
                return None
            names.append(_name(match.group(1)))
        return dict(zip(names, self.parameters, strict=True))


@dataclass
class Write:
    """One canonical write: INSERT (values), UPDATE (values set, attributes removed) or DELETE."""

    kind: str
    table: str
    key: tuple[tuple[str, Any], ...]
    values: dict[str, dict] = field(default_factory=dict)
    removes: list[str] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)

    @functools.cached_property
    def identity(self) -> tuple[str, str]:
        """The item written, as a key of dicts: read several times per row of a batch."""
        return self.table, repr(self.key)

    def key_text(self, hidden: bool = False) -> str:
        """The key for messages: {'pk': 'a', 'sk': '1'} (each value cut short), or (pk, sk) when
        the engine hides parameters."""
        if hidden:
            return "(" + ", ".join(name for name, _ in self.key) + ")"
        pairs = (f"{name!r}: {shown(_plain(value), False)}" for name, value in self.key)
        return "{" + ", ".join(pairs) + "}"

    def render(self) -> dict[str, Any]:
        """The ExecuteTransaction statement for this write."""
        key = dict(self.key)
        where = " AND ".join(f"{quote(n)} = ?" for n in key)
        parameters: list[dict] = []
        if self.kind == "INSERT":
            body = ", ".join(f"{_literal(n)}: ?" for n in self.values)
            text = f"INSERT INTO {quote(self.table)} VALUE {{{body}}}"
            parameters += self.values.values()
        else:
            if self.kind == "UPDATE":
                text = f"UPDATE {quote(self.table)}"
                if self.values:
                    text += " SET " + ", ".join(f"{quote(n)} = ?" for n in self.values)
                    parameters += self.values.values()
                text += "".join(f" REMOVE {quote(n)}" for n in self.removes)
            else:
                text = f"DELETE FROM {quote(self.table)}"
            text += " WHERE " + where
            parameters += key.values()
            if len(self.conditions) == 1:
                text += f" AND ({self.conditions[0].text})"
            elif self.conditions:  # each its own group: one may be an OR, which AND binds tighter
                text += " AND (" + " AND ".join(f"({c.text})" for c in self.conditions) + ")"
            for condition in self.conditions:
                parameters += condition.parameters
        return {"Statement": text, "Parameters": parameters} if parameters else {"Statement": text}


@dataclass(frozen=True)
class Shape:
    """What a canonical statement's text says, before its parameters: the kind, the table, the
    attributes written (an INSERT's values, an UPDATE's SET), removed, and the WHERE text."""

    kind: str
    table: str
    names: tuple[str, ...]
    removes: tuple[str, ...] = ()
    where: str | None = None


@functools.lru_cache(maxsize=1024)
def shape(operation: str) -> Shape | None:
    """The shape of a canonical INSERT/PUT/UPDATE/DELETE, None for any other statement. Cached:
    an executemany reads one text for every row, SQLAlchemy sends the same texts again."""
    text = operation.strip()
    if (match := INSERT_FORM.match(text)) is not None:
        names = joined(INSERT_ENTRY, match.group("body"), ", ")
        if names is None:
            return None
        unquoted = tuple(n[1:-1].replace("''", "'") for n in names)
        return Shape(match.group("verb"), _name(match.group("table")), unquoted)
    if (match := UPDATE_FORM.match(text)) is not None:
        sets = joined(SET_ENTRY, match.group("sets") or "", ", ")
        removes = joined(_REMOVE, match.group("removes"), "")
        if sets is None or removes is None:
            return None
        table = _name(match.group("table"))
        return Shape(
            "UPDATE", table, tuple(map(_name, sets)), tuple(map(_name, removes)), match.group("where")
        )
    if (match := _DELETE.match(text)) is not None:
        return Shape("DELETE", _name(match.group("table")), (), (), match.group("where"))
    return None


def value_names(operation: str) -> tuple[str, ...]:
    """The attributes whose values are the first parameters of a canonical INSERT or UPDATE (for
    messages about a value); none for any other statement."""
    found = shape(operation)
    return found.names if found is not None else ()


def parse(operation: str, parameters: list[dict], key_names: Any) -> Write | None:
    """The Write a canonical statement performs, or None for any other statement.

    ``key_names(table)`` gives the table's key attribute names (from DescribeTable).
    """
    found = shape(operation)
    if found is None:
        return None
    if found.where is None:  # INSERT or PUT
        if len(found.names) != len(parameters):
            return None
        values = dict(zip(found.names, parameters, strict=True))
        key = tuple((k, values[k]) for k in key_names(found.table) if k in values)  # validate: all there
        return Write(found.kind, found.table, key, values)
    keys = key_names(found.table)
    rest = _condition(found.where, tuple(keys))
    if rest is None:
        return None
    sets = len(found.names)
    values = dict(zip(found.names, parameters[:sets], strict=True))
    key_values = parameters[sets : sets + len(keys)]
    condition_parameters = parameters[sets + len(keys) :]
    if len(key_values) != len(keys) or len(condition_parameters) != rest.count("?"):
        return None
    conditions = [Condition(rest[1:-1], condition_parameters)] if rest else []
    key = tuple(zip(keys, key_values, strict=True))
    return Write(found.kind, found.table, key, values, list(found.removes), conditions)


@functools.lru_cache(maxsize=1024)
def _condition(where: str, keys: tuple[str, ...]) -> str | None:
    """The WHERE's conditions beyond the key (``"(...)"`` or ""), None unless the WHERE starts
    with an equality on each key attribute, in order."""
    terms = where.split(" AND ", len(keys))
    names = [_EQUALS.match(t) for t in terms[: len(keys)]]
    if any(m is None for m in names) or [_name(m.group(1)) for m in names] != list(keys):
        return None
    rest = terms[len(keys)] if len(terms) > len(keys) else ""
    if rest and not (rest.startswith("(") and rest.endswith(")")):
        return None
    return rest


def _state_after(write: Write) -> dict[str, dict | None]:
    """What an earlier write of this transaction fixes about the item: attribute -> value
    (None = absent). An INSERT fixes everything; an UPDATE what it sets and removes."""
    state: dict[str, dict | None] = dict(write.values)
    state.update(dict.fromkeys(write.removes))
    return state


def _check(
    conditions: list[Condition], state: dict[str, dict | None], complete: bool
) -> tuple[bool, list[Condition]]:
    """Decide the conditions the earlier write settles: (all settled ones hold, the rest)."""
    remaining = []
    for condition in conditions:
        equalities = condition.equalities()
        settled = equalities is not None and (complete or all(n in state for n in equalities))
        if not settled:
            if complete or (equalities is None and any(f'"{n}"' in condition.text for n in state)):
                raise NotSupportedError(
                    f"a condition ({condition.text}) on an item this transaction already wrote cannot be "
                    "combined into one DynamoDB action: commit before this statement"
                )
            remaining.append(condition)
        elif any(state.get(n) != v for n, v in equalities.items()):
            return False, []
    return True, remaining


def while_present(write: Write) -> Write:
    """``write`` on condition that its item still exists when the transaction commits (a DELETE
    of a missing item succeeds silently; DynamoDB fails this condition on a missing item)."""
    present = Condition(f"{quote(write.key[0][0])} IS NOT MISSING", [])
    return replace(write, conditions=[*write.conditions, present])


def settled(later: Write, earlier: Write) -> Write:
    """``later`` with the conditions dropped that were decided on the item as ``earlier`` leaves
    it; those on attributes ``earlier`` leaves alone stay, for the commit to check against the
    committed item."""
    if earlier.kind == "INSERT":
        return replace(later, conditions=[])
    state = _state_after(earlier)
    kept = [c for c in later.conditions if not any(quote(name) in c.text for name in state)]
    return replace(later, conditions=kept)


def reinserted(deleted: Write, inserted: Write, committed: dict[str, Any] | None) -> Write:
    """The one write that deletes an item and inserts it anew (``committed``: the item as stored,
    None when there is none): an UPDATE that sets every attribute the INSERT writes and removes
    the others, under the DELETE's conditions; or the INSERT itself when nothing is stored."""
    if committed is None:
        return inserted
    key = dict(inserted.key)
    values = {name: value for name, value in inserted.values.items() if name not in key}
    removes = [name for name in committed if name not in inserted.values]
    return Write("UPDATE", inserted.table, inserted.key, values, removes, deleted.conditions)


def stored_twice(deleted: Write, hidden: bool = False) -> IntegrityError:
    """The error of a DELETE that would cancel an INSERT of an item already stored: SQL fails
    that INSERT, and a DELETE after it cannot make it succeed."""
    return IntegrityError(
        f"duplicate key {deleted.key_text(hidden)} in table {deleted.table!r}: this transaction "
        "inserted an item that is already stored, so its INSERT fails at commit and this DELETE "
        "cannot undo that. Delete the stored item before inserting it anew (with the ORM: flush "
        "the removal before adding the new object), or update it instead"
    )


def merge(earlier: Write, later: Write, hidden: bool = False) -> tuple[Write | None, int]:
    """The single write that has the effect of ``earlier`` then ``later`` on one item, and
    ``later``'s rowcount (-1 when only the commit can tell)."""
    if later.kind == "INSERT":  # after a DELETE of the item, see reinserted()
        raise IntegrityError(
            f"duplicate key {later.key_text(hidden)} in table "
            f"{later.table!r}: this transaction already wrote that item"
        )
    if earlier.kind == "DELETE":
        return earlier, 0  # the item is gone: the later UPDATE or DELETE matches nothing
    holds, conditions = _check(later.conditions, _state_after(earlier), complete=earlier.kind == "INSERT")
    if not holds:
        return earlier, 0
    if later.kind == "DELETE":
        if earlier.kind == "INSERT":
            return None, 1  # inserted and deleted: nothing to send (unless it was stored: stored_twice)
        return replace(later, conditions=earlier.conditions + conditions), 1
    values = {**earlier.values, **later.values}
    if earlier.kind == "INSERT":
        for name in later.removes:
            values.pop(name, None)
        return replace(earlier, values=values), 1
    removes = [n for n in earlier.removes if n not in later.values] + [
        n for n in later.removes if n not in earlier.removes
    ]
    for name in later.removes:
        values.pop(name, None)
    return replace(earlier, values=values, removes=removes, conditions=earlier.conditions + conditions), 1
