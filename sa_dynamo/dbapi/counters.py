"""Integer ids the way PostgreSQL's sequences give them: an atomic counter, taken in blocks.

Each counter is one item of the table ``sa_dynamo_counters`` (key: the table's name and the
column's), apart from the user's tables so that no read of theirs can ever meet it. One
UpdateItem (``ADD value :n``, ``ReturnValues=UPDATED_NEW``) reserves the next ``n`` values;
DynamoDB applies ADDs one at a time, so two processes never receive the same block. The values
of a block are handed out here, in order, so a request is sent once per ``n`` ids. As with a
PostgreSQL sequence whose CACHE is ``n``: values are never reused, gaps are allowed (a process
that ends leaves the rest of its block unused), and ids from several processes interleave.
"""

from __future__ import annotations

import bisect
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from . import capacity, control_plane
from .errors import Error, InterfaceError
from .own_tables import COUNTERS_TABLE
from .transport import Transport

log = logging.getLogger("sa_dynamo.dbapi")

# 20 ids per request: the counter's write adds a twentieth of a write to each insert, and a
# process that stops wastes at most 19 ids.
DEFAULT_BLOCK = 20

COUNTERS_TABLE_REQUEST: dict[str, Any] = {
    "TableName": COUNTERS_TABLE,
    "KeySchema": [
        {"AttributeName": "table", "KeyType": "HASH"},
        {"AttributeName": "column", "KeyType": "RANGE"},
    ],
    "AttributeDefinitions": [
        {"AttributeName": "table", "AttributeType": "S"},
        {"AttributeName": "column", "AttributeType": "S"},
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def counter_key(table: str, column: str) -> dict[str, Any]:
    return {"table": {"S": table}, "column": {"S": column}}


def block_size(size: Any) -> int:
    """A block size as given to create_engine(), checked: a whole number of at least 1."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InterfaceError(
            f"dynamodb_autoincrement_block must be a whole number of at least 1, not {size!r}"
        )
    return size


def ensure_table(transport: Transport) -> None:
    """Create the counters table unless it exists, and wait until it takes writes (another
    process creating it at the same time is fine)."""
    described = control_plane.describe_table(transport, COUNTERS_TABLE)
    if described is not None and described["TableStatus"] == "ACTIVE":
        return
    if described is None:
        try:
            control_plane.create_table(transport, COUNTERS_TABLE_REQUEST)
            return
        except Error as error:
            if error.code != "ResourceInUseException":
                raise
    control_plane.wait_active(transport, COUNTERS_TABLE)


def reset_request(table: str, column: str) -> dict[str, Any]:
    """The DeleteItem that removes a counter: the next value it gives is 1 again."""
    return {"TableName": COUNTERS_TABLE, "Key": counter_key(table, column)}


@dataclass
class _Counter:
    """The values of one counter that this process holds: blocks of [next, last], in order."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    blocks: list[list[int]] = field(default_factory=list)

    def take(self) -> int | None:
        with self.lock:
            if not self.blocks:
                return None
            block = self.blocks[0]
            value = block[0]
            block[0] += 1
            if block[0] > block[1]:
                self.blocks.pop(0)
            return value

    def add(self, first: int, last: int) -> None:
        """Hold a reserved block; blocks reserved at once by several threads are kept in order."""
        with self.lock:
            bisect.insort(self.blocks, [first, last])


class Counters:
    """The counters an engine takes ids from, ``block`` values per request.

    A counter's lock guards its blocks and is never held while a request is out: the asyncio
    driver's connections share one thread, and a lock held across a request would stop them all.
    Threads that find a counter empty at once each reserve a block; every block is used in turn,
    so the requests still come to one per ``block`` ids.
    """

    def __init__(self, block: int = DEFAULT_BLOCK):
        self.block = block_size(block)
        self._lock = threading.Lock()
        self._counters: dict[tuple[str, str], _Counter] = {}

    def _counter(self, table: str, column: str) -> _Counter:
        with self._lock:
            return self._counters.setdefault((table, column), _Counter())

    def next_value(self, transport: Transport, table: str, column: str) -> int:
        """The next id of ``table.column``, reserving a block when none is held."""
        counter = self._counter(table, column)
        while (value := counter.take()) is None:
            last = self._reserve(transport, table, column)
            counter.add(last - self.block + 1, last)
        return value

    def _reserve(self, transport: Transport, table: str, column: str) -> int:
        request = capacity.asking(
            {
                "TableName": COUNTERS_TABLE,
                "Key": counter_key(table, column),
                "UpdateExpression": "ADD #value :block",
                "ExpressionAttributeNames": {"#value": "value"},
                "ExpressionAttributeValues": {":block": {"N": str(self.block)}},
                "ReturnValues": "UPDATED_NEW",
            }
        )
        try:
            answer = transport.send("UpdateItem", request)
        except Error as error:
            if error.code != "ResourceNotFoundException":
                raise
            ensure_table(transport)  # a table created before counters, or by other means
            answer = transport.send("UpdateItem", request)
        last = int(answer["Attributes"]["value"]["N"])
        # the count, not the ids: they are key values, which hide_parameters keeps out of logs
        log.info(
            "a block of %d ids of %s.%s reserved (UpdateItem on %s)",
            self.block,
            table,
            column,
            COUNTERS_TABLE,
        )
        return last

    def forget(self, table: str) -> None:
        """Drop the blocks held for ``table``'s counters (the table was dropped or created anew,
        its counters reset)."""
        with self._lock:
            for key in [key for key in self._counters if key[0] == table]:
                del self._counters[key]

    def reset(self, transport: Transport, table: str, column: str) -> None:
        """Start ``table.column`` at 1 again: its counter item deleted and its blocks forgotten."""
        self.forget(table)
        try:
            transport.send("DeleteItem", reset_request(table, column))
        except Error as error:
            if error.code != "ResourceNotFoundException":  # no counters table: nothing to reset
                raise
