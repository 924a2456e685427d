"""Reading a SELECT: NextToken paging, LIMIT as a row count, COUNT, one page of rows, streaming.

Rows are read lazily: one request per page, the next page only when the caller has consumed
the previous one. DynamoDB's ``Limit`` counts items evaluated, not rows returned, so the
number of rows is bounded by the cursor's ``max_rows`` on the client instead.

A read ordered by its sort key descending is the exception where the server may page it
wrongly: DynamoDB returns the pages from the largest key down, DynamoDB Local reads the key
range upwards a page at a time and reverses each page (docs/partiql-findings.md). A transport
judges its server by the first such read that spans pages, reading on until two items of
different pages tell; where the pages come upwards, every page of such a read is read and the
items sorted here, and ``paginate()`` cuts its pages from that sorted whole.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from . import capacity
from . import statement as stmt
from .errors import DataError, ProgrammingError
from .ordering import sort_key
from .transport import WIRE_ITEMS, Transport
from .values import collector_paused, deserialize, deserialize_wire

log = logging.getLogger("sa_dynamo.dbapi")


# The driver reads a statement's projection from its text. SQLAlchemy sends the same text again
# and again (its statement cache), so each text is read once.
@functools.lru_cache(maxsize=1024)
def projection(operation: str) -> tuple[str, ...] | None:
    names = stmt.projection(operation)
    return None if names is None else tuple(names)


_covering = functools.lru_cache(maxsize=1024)(stmt.covering)
_order_by = functools.lru_cache(maxsize=1024)(stmt.order_by)

# A resume token of a page cut from a sorted whole: the rows of the pages before it follow the
# prefix. No NextToken holds a ":" (DynamoDB's are base64).
SORTED_PAGE = "sa_dynamo:sorted:"


def _at(item: dict[str, Any], path: tuple[stmt.Step, ...]) -> Any:
    """The AttributeValue at ``path`` in an item, or None where the path leads nowhere."""
    value = item.get(path[0])
    for step in path[1:]:
        if value is None:
            return None
        if isinstance(step, int):
            elements = value.get("L")
            value = elements[step] if elements is not None and step < len(elements) else None
        else:
            value = (value.get("M") or {}).get(step)
    return value


def keys_of(items: list[dict[str, Any]], first: Sequence[str] = ()) -> list[str]:
    """``first``, then the other attribute names of the items in first-seen order."""
    names: dict[str, None] = dict.fromkeys(first)
    for item in items:
        names.update(dict.fromkeys(item))
    return list(names)


class Discriminator(NamedTuple):
    """What to do with items whose discriminator names no known kind (written by someone else).

    ``policy`` is "skip" (drop them, counted in ``Cursor.skipped`` and the statement's log line,
    which names the first few kinds: ``capacity.NAMED_KINDS``), "raise" (a
    DataError naming the value) or "base" (present them as ``base``, the loading class's kind).
    ``mapped`` names the attributes each kind's class maps: an attribute bag of an item holds
    every other attribute, whatever columns the result has for the other kinds.
    """

    attribute: str
    known: frozenset[str]
    policy: str
    base: str
    mapped: Mapping[str, frozenset[str]] = MappingProxyType({})

    def sort_out(self, items: list[dict[str, Any]], unknown: dict[str, None]) -> list[dict[str, Any]]:
        """The items to keep; the kinds of those skipped are added to ``unknown``, the first
        ``capacity.NAMED_KINDS`` + 1 distinct ones (one more tells that there are more)."""
        kept = []
        for item in items:
            typed = item.get(self.attribute)
            if typed is None or "NULL" in typed:  # no kind at all: SQLAlchemy's rule, as on SQLite
                kept.append(item)
                continue
            value = typed.get("S")
            if value is None:  # a number or any other type: no mapped kind is one
                value = str(next(iter(typed.values())))
            if value in self.known:
                kept.append(item)
            elif self.policy == "raise":
                raise DataError(
                    f"an item has {self.attribute} = {value!r}, which no mapped class uses (known: "
                    f"{', '.join(sorted(self.known))}); map a class for it, or load with "
                    "dynamodb_unknown_type='skip' or 'base'"
                )
            elif self.policy == "base":
                kept.append({**item, self.attribute: {"S": self.base}})
            elif len(unknown) <= capacity.NAMED_KINDS:
                unknown[value] = None
        return kept


class ItemFilter(NamedTuple):
    """A test the driver applies to the items a read returns, in DynamoDB's place (the dialect's
    predicate of tests it took out of the statement): ``test`` takes the item's ``attributes``
    as Python values, those it has."""

    attributes: tuple[str, ...]
    test: Callable[[dict[str, Any]], bool]

    def keeps(self, item: dict[str, Any], value: Callable[[Any], Any]) -> bool:
        return self.test({name: value(item[name]) for name in self.attributes if name in item})


def counted(items: Sequence[Mapping[str, Any]], how: str, attribute: str) -> int:
    """SQL's COUNT of ``items``: "rows" counts them all; "values" (COUNT(column)) those whose
    attribute is present and not NULL; "present" those that have it, a stored NULL included
    (a JSON column's, which is JSON's null: a value)."""
    if how == "rows":
        return len(items)
    if how == "present":
        return sum(1 for item in items if attribute in item)
    return sum(1 for item in items if attribute in item and "NULL" not in item[attribute])


class Pages:
    """The pages of one statement's result, and what reading them cost.

    ``names`` are the result's columns; ``request`` is the ExecuteStatement request while more
    pages may follow, None once the result is read or no more rows are wanted.
    """

    def __init__(
        self,
        transport: Transport,
        discriminator: Discriminator | None = None,
        star_order: Sequence[str] = (),
        item_filter: ItemFilter | None = None,
    ):
        self.transport = transport
        self.discriminator = discriminator
        self.item_filter = item_filter
        self.filtered = 0  # items the item filter discarded
        self.star_order = star_order  # SELECT *: the columns that come first
        self.pages = 0
        self.skipped = 0
        self.unknown: dict[str, None] = {}  # the kinds of the skipped items (Discriminator.sort_out)
        self.names: Sequence[str] = ()
        self.paths: list[tuple[stmt.Step, ...]] | None = None  # set for a covered projection
        self.rest: str | None = None  # the column holding every attribute the other names do not
        self.request: dict[str, Any] | None = None
        self.next_token: str | None = None
        self.wire = False  # whether the items last read are DynamoDB's JSON (values.WIRE_ITEMS)
        self.descending: str | None = None  # the attribute of an ORDER BY ... DESC
        self._last: dict[str, Any] | None = None  # the last item read, while the server is judged

    def prepare(
        self,
        operation: str,
        body: dict[str, Any],
        page_size: int | None,
        consistent_read: bool,
        hidden_columns: int,
    ) -> tuple[str, ...] | None:
        """Complete a SELECT's request; the projected names (None for ``SELECT *``) without the
        ``hidden_columns`` trailing ones, which are read but not returned."""
        if page_size is not None:
            if int(page_size) < 1:
                raise ProgrammingError(
                    f"page_size (DynamoDB's Limit: items evaluated per request) must be 1 or more, not {page_size!r}"
                )
            body["Limit"] = int(page_size)
        if consistent_read:
            body["ConsistentRead"] = True
        order = _order_by(operation)
        self.descending = order[0] if order is not None and order[1] else None
        names = projection(operation)
        covered = _covering(operation)
        if covered is not None:  # paths DynamoDB refuses side by side: read from their attributes
            body["Statement"], self.paths = covered[0], covered[1]
            log.info(
                "sent %s: its paths overlap or share a result key, so each is read from its attribute",
                covered[0],
            )
        if names is not None and hidden_columns:
            names = names[:-hidden_columns]
            self.paths = self.paths and self.paths[:-hidden_columns]
        return names

    def first_rows(self, body: dict[str, Any], names: Sequence[str] | None) -> list[tuple]:
        """The rows of the first page; ``request`` is set when more pages follow."""
        items = self.read(body)
        if names is None:
            # SELECT * has no column list: the first non-empty page names the columns. Pages can
            # be empty yet have a successor, so read on until one has items.
            while not items and self.next_token:
                items = self.read(body)
        if self.descending is not None and self.next_token:
            items = self._descending(body, items)
        self.names = keys_of(items, self.star_order) if names is None else names
        self.request = body if self.next_token else None
        return self.rows(items)

    def _descending(self, body: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The first items of a descending read that spans pages, in its order: read on until
        the server is judged; from a server that pages upwards, every item, sorted."""
        while self.transport.descending_pages is None and self.next_token:
            items = items + self.read(body)
        if self.transport.descending_pages is False:
            items = self._sorted(items + self._rest(body))
        return items

    def _rest(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The items of every page after ``next_token``, in as few requests as DynamoDB allows."""
        body.pop("Limit", None)
        items: list[dict[str, Any]] = []
        while self.next_token:
            items += self.read(body)
        return items

    def _sorted(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The items in the order of the read's ORDER BY ... DESC."""
        return sorted(items, key=self._sort_key, reverse=True)

    def _sort_key(self, item: dict[str, Any]) -> Any:
        value = item.get(self.descending)
        if value is None:
            raise ProgrammingError(
                f"ORDER BY {self.descending!r} DESC over several pages needs {self.descending!r} in the "
                "select list: DynamoDB Local returns such pages out of order, and the driver puts them "
                "in order by it"
            )
        return sort_key((deserialize_wire if self.wire else deserialize)(value))

    def _judge(self, items: list[dict[str, Any]]) -> None:
        """Judge the server by a page of a descending read (see the module's docstring): its
        first item against the last item of the page before. Equal keys (an index's sort key
        repeats) do not tell."""
        if not items:
            return
        if self._last is not None:
            first, last = self._sort_key(items[0]), self._sort_key(self._last)
            if first != last:
                self.transport.descending_pages = first < last
        self._last = items[-1]

    def next_rows(self) -> list[tuple]:
        """The rows of the next page of ``request``."""
        rows = self.rows(self.read(self.request))
        if not self.next_token:
            self.request = None
        return rows

    def one_page(
        self, body: dict[str, Any], names: Sequence[str] | None, size: int, start_token: str | None
    ) -> list[tuple]:
        """``size`` rows, resuming at ``start_token``; ``next_token`` continues right after them:
        each request's Limit is the number of rows still missing, so DynamoDB never reads past
        the last row returned; it is None when no row follows."""
        self.next_token = start_token
        self.names = names or ()
        rows: list[tuple] = []
        if size < 1:  # a LIMIT 0, or the end of a LIMIT: nothing to read
            self.next_token = None
            return rows
        if self.descending is not None and (
            (start_token or "").startswith(SORTED_PAGE)
            or (start_token is None and self.transport.descending_pages is False)
        ):
            return self._sorted_page(body, size, start_token)
        while True:
            missing = size - len(rows)
            items = self.read(dict(body, Limit=min(missing, body.get("Limit", missing))))
            if names is None and items and not self.names:
                self.names = keys_of(items, self.star_order)
            rows += self.rows(items)
            if len(rows) >= size or not self.next_token:
                break
        if self.descending is not None and start_token is None:  # the first page judges the server
            resume = self.next_token
            while self.transport.descending_pages is None and self.next_token:
                self.read(dict(body, Limit=min(size, body.get("Limit", size))))
            self.next_token = resume
            if self.transport.descending_pages is False:
                return self._sorted_page(body, size, None)
        if self.next_token and not self._row_follows(body, size):
            self.next_token = None  # a full last page: no token to a page of nothing
        return rows

    def _row_follows(self, body: dict[str, Any], size: int) -> bool:
        """Whether a row follows ``next_token``, read ahead (one item evaluated, then ``size`` a
        request while the items read do not match) without moving the token or counting the
        items it reads as skipped or filtered: DynamoDB hands out a NextToken whenever a page
        ends at its Limit, even when nothing follows."""
        resume, counts = self.next_token, (self.filtered, self.skipped, dict(self.unknown))
        limit = 1
        try:
            while self.next_token:
                if self.rows(self.read(dict(body, Limit=limit))):
                    return True
                limit = min(size, body.get("Limit", size))
            return False
        finally:
            self.next_token = resume
            self.filtered, self.skipped, self.unknown = counts

    def _sorted_page(self, body: dict[str, Any], size: int, start_token: str | None) -> list[tuple]:
        """One page of a descending read from a server that pages it upwards: every item read
        and sorted, the page cut after the rows of the pages before it (``start_token``)."""
        before = 0
        if start_token is not None:
            count = start_token.removeprefix(SORTED_PAGE)
            if not count.isdigit():
                raise ProgrammingError("start_token is not a resume token this driver wrote")
            before = int(count)
        self.next_token = None
        items = self.read(body)
        items = self._sorted(items + self._rest(body))
        self.names = self.names or keys_of(items, self.star_order)
        rows = self.rows(items)
        self.next_token = f"{SORTED_PAGE}{before + size}" if before + size < len(rows) else None
        return rows[before : before + size]

    def count(self, body: dict[str, Any], how: str, attribute: str) -> int:
        """COUNT: read every page, each counted by ``counted``."""
        total = 0
        while True:
            total += counted(self.read(body), how, attribute)
            if not self.next_token:
                return total

    def every_item(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The items of every page, as AttributeValues (a transaction's own writes are laid over
        them before they become rows)."""
        items: list[dict[str, Any]] = []
        while True:
            items += self.read(body, wire=False)
            if not self.next_token:
                return items if self.descending is None else self._sorted(items)

    def returned(self, items: list[dict[str, Any]]) -> list[tuple]:
        """The rows of a write's RETURNING items: every attribute any of them has."""
        self.names = keys_of(items)
        return self.rows(items)

    def read(self, body: dict[str, Any], wire: bool = True) -> list[dict[str, Any]]:
        """One page's items, after ``next_token`` if set; ``wire``: as DynamoDB's JSON when the
        client allows (values.WIRE_ITEMS), else as botocore parses them."""
        if self.next_token:
            body = dict(body, NextToken=self.next_token)
        started = time.perf_counter()
        body = capacity.asking(body)
        response = self.transport.send("ExecuteStatement", body, wire=wire)
        self.pages += 1
        self.wire = WIRE_ITEMS in response
        items = response.get("Items", [])
        if self.descending is not None and self.transport.descending_pages is None:
            self._judge(items)
        self.next_token = response.get("NextToken")
        log.debug(
            "ExecuteStatement page %d: %d items, more=%s, %.1f ms",
            self.pages,
            len(items),
            bool(self.next_token),
            (time.perf_counter() - started) * 1000,
        )
        return items

    def rows(self, items: list[dict[str, Any]]) -> list[tuple]:
        """Items as rows of ``names`` (or of ``paths``), Python values, unknown kinds sorted out."""
        with collector_paused():  # a page's worth of new objects, none in a cycle
            return self._rows(items)

    def _rows(self, items: list[dict[str, Any]]) -> list[tuple]:
        value = deserialize_wire if self.wire else deserialize
        if self.item_filter is not None:
            kept = [item for item in items if self.item_filter.keeps(item, value)]
            self.filtered += len(items) - len(kept)
            items = kept
        if self.discriminator is not None:
            kept = self.discriminator.sort_out(items, self.unknown)
            self.skipped += len(items) - len(kept)
            items = kept
        rows: list[tuple] = []
        append = rows.append
        if self.paths is not None:
            for item in items:
                append(tuple([None if (v := _at(item, p)) is None else value(v) for p in self.paths]))
            return rows
        names = self.names
        if self.rest is not None:
            return [self._with_rest(item, value) for item in items]
        for item in items:
            get = item.get  # an item holds no None: botocore and DynamoDB leave absent attributes out
            append(tuple([None if (v := get(n)) is None else value(v) for n in names]))
        return rows

    def _with_rest(self, item: dict[str, Any], value: Any) -> tuple:
        named = set(self.names)
        if self.discriminator is not None and self.discriminator.mapped:
            kind = item.get(self.discriminator.attribute, {}).get("S")
            named = self.discriminator.mapped.get(kind, named)
        rest = {name: value(v) for name, v in item.items() if name not in named}
        return tuple(
            rest if name == self.rest else (None if (v := item.get(name)) is None else value(v))
            for name in self.names
        )
