"""What a statement cost: the capacity units DynamoDB consumed, table and each index apart, the
requests sent, the items DynamoDB returned, the rows handed to the caller, the items of unknown
kinds skipped between the two, and the time the driver spent on it.

Every data-plane request asks for ``ReturnConsumedCapacity="INDEXES"`` (``asking``); the
connection adds each answer to the record of the statement running (``Consumed.add``, fed by
the transport's observers, so every transport gives the same figures). DynamoDB Local answers
no PartiQL request with ConsumedCapacity (docs/partiql-findings.md): ``reported`` says whether
any answer carried it, so a 0 is never mistaken for a figure.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import statement as stmt
from .request import kind_of

log = logging.getLogger("sa_dynamo.dbapi")

# The requests that read or write items, each of which can report its consumed capacity (an
# UpdateItem: an autoincrement counter's block, counters.py).
DATA_PLANE = frozenset(
    {
        "ExecuteStatement",
        "BatchExecuteStatement",
        "ExecuteTransaction",
        "BatchWriteItem",
        "BatchGetItem",
        "UpdateItem",
    }
)
_WRITES = frozenset({"ExecuteTransaction", "BatchWriteItem", "UpdateItem"})
# The unknown kinds a statement's line names at most: a partition of 10,000 items of one
# unknown kind is one line that names it once (paging.Discriminator).
NAMED_KINDS = 3


def asking(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` asking DynamoDB for its consumed capacity, table and indexes apart."""
    return dict(body, ReturnConsumedCapacity="INDEXES")


@dataclass
class Consumed:
    """The cost of one statement (``Cursor.consumed``), or of several summed (``+``).

    ``reads`` and ``writes`` are capacity units by table ("app") and index ("app/gsi1");
    ``requests`` counts the requests sent (a read's pages, a batch's calls); ``skipped`` the
    items of unknown kinds dropped (paging.Discriminator) and ``unknown_kinds`` the first few
    of their kinds (none with hide_parameters: they are values); ``filtered`` the items the
    driver's own filter discarded (paging.ItemFilter); ``milliseconds`` the time
    spent in the driver on the statement (its requests and rows), not the caller's between
    fetches."""

    operation: str = ""
    source: str = ""
    requests: int = 0
    items: int = 0
    rows: int = 0
    skipped: int = 0
    filtered: int = 0
    unknown_kinds: tuple[str, ...] = ()
    milliseconds: float = field(default=0.0, compare=False)  # differs run to run: not in ==
    reported: bool = False
    reads: dict[str, float] = field(default_factory=dict)
    writes: dict[str, float] = field(default_factory=dict)

    @property
    def read_units(self) -> float:
        return sum(self.reads.values(), 0.0)

    @property
    def write_units(self) -> float:
        return sum(self.writes.values(), 0.0)

    def add(self, operation: str, body: dict[str, Any], answer: Any) -> None:
        """Count one request and its answer (an error, not a dict, counts the request only)."""
        self.operation = self.operation or operation
        self.source = self.source or ",".join(stmt.tables(body))
        self.requests += 1
        if not isinstance(answer, dict):
            return
        self.items += _items(answer)
        found = answer.get("ConsumedCapacity")
        if not found:  # DynamoDB Local's PartiQL answers, or a request that did not ask
            return
        entries = [found] if isinstance(found, dict) else found
        writing = operation in _WRITES or _writes(body)
        for entry in entries:
            self.reported = True
            table = entry.get("TableName", "")
            parts: list[tuple[str, Mapping[str, Any]]] = [(table, entry.get("Table", entry))]
            for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                parts += [(f"{table}/{name}", units) for name, units in entry.get(group, {}).items()]
            for name, units in parts:
                self._count(name, units, writing)

    def _count(self, name: str, units: Mapping[str, Any], writing: bool) -> None:
        read, write = units.get("ReadCapacityUnits"), units.get("WriteCapacityUnits")
        if read is None and write is None:  # on-demand tables report the total only
            read, write = (
                (None, units.get("CapacityUnits", 0.0))
                if writing
                else (units.get("CapacityUnits", 0.0), None)
            )
        if read is not None:
            self.reads[name] = self.reads.get(name, 0.0) + float(read)
        if write is not None:
            self.writes[name] = self.writes.get(name, 0.0) + float(write)

    def include(self, other: Consumed) -> None:
        """Count ``other``'s requests and units in this record too (requests sent for this
        statement before it started, such as an autoincrement block's)."""
        self.requests += other.requests
        self.items += other.items
        self.reported = self.reported or other.reported
        self.reads = _summed(self.reads, other.reads)
        self.writes = _summed(self.writes, other.writes)
        self.milliseconds += other.milliseconds

    def __add__(self, other: Consumed) -> Consumed:
        return Consumed(
            requests=self.requests + other.requests,
            items=self.items + other.items,
            rows=self.rows + other.rows,
            skipped=self.skipped + other.skipped,
            filtered=self.filtered + other.filtered,
            milliseconds=self.milliseconds + other.milliseconds,
            reported=self.reported or other.reported,
            reads=_summed(self.reads, other.reads),
            writes=_summed(self.writes, other.writes),
        )


def _summed(first: Mapping[str, float], second: Mapping[str, float]) -> dict[str, float]:
    total = dict(first)
    for name, units in second.items():
        total[name] = total.get(name, 0.0) + units
    return total


def _items(answer: dict[str, Any]) -> int:
    """Items in an answer: a read's page, a batch's single-item reads, BatchGetItem's tables."""
    responses = answer.get("Responses")
    if isinstance(responses, list):
        return sum(1 for response in responses if "Item" in response)
    if isinstance(responses, dict):
        return sum(len(items) for items in responses.values())
    return len(answer.get("Items", ()))


def _writes(body: dict[str, Any]) -> bool:
    """Whether a PartiQL request writes (its first statement is not a SELECT)."""
    statements = body.get("Statements") or [body]
    text = statements[0].get("Statement", "") if statements else ""
    return kind_of(text) not in ("SELECT", "")


def report(consumed: Consumed) -> None:
    """Log a statement's figures at INFO; the line is built only when INFO is on. A statement
    that sent nothing (a write held for the commit) has no line: its cost is the commit's."""
    if consumed.requests and log.isEnabledFor(logging.INFO):
        log.info(line(consumed))


def line(consumed: Consumed) -> str:
    """The INFO line of a statement: no values, only counts and units."""
    parts = [
        f"{consumed.operation or 'nothing sent'} {consumed.source or '?'}: {consumed.requests:,} "
        f"{'request' if consumed.requests == 1 else 'requests'}, {consumed.items:,} items read, "
        f"{consumed.rows:,} rows"
    ]
    if consumed.skipped:
        parts.append(f"{consumed.skipped:,} of unknown kinds skipped{_named(consumed.unknown_kinds)}")
    if consumed.filtered:
        parts.append(f"{consumed.filtered:,} discarded by the driver's filter")
    if not consumed.reported:
        parts.append("capacity not reported")
    for unit, by_name in (("RCU", consumed.reads), ("WCU", consumed.writes)):
        if by_name:
            parts.append(f"{sum(by_name.values()):,.1f} {unit} ({_apart(by_name)})")
    parts.append(f"{consumed.milliseconds:,.1f} ms")
    return ", ".join(parts)


def _named(kinds: tuple[str, ...]) -> str:
    """The unknown kinds of a line: the first few, "..." for more."""
    if not kinds:
        return ""
    shown = ", ".join(map(repr, kinds[:NAMED_KINDS]))
    return f" ({shown}, ...)" if len(kinds) > NAMED_KINDS else f" ({shown})"


def _apart(by_name: Mapping[str, float]) -> str:
    """Units by table and index, an index by its own name: "app 1.0 gsi1 1.0"."""
    return " ".join(f"{name.rpartition('/')[2]} {units:,.1f}" for name, units in sorted(by_name.items()))
