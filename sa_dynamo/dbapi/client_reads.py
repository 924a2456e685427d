"""Reads the driver finishes on the client: every row is held before the first is handed out.

Two kinds: a batch of single-item reads (the full keys of an IN list, sent as BatchGetItem,
100 keys a request), which carries no filter, so the rest of the WHERE is tested
here; and a statement read page by page whose ORDER BY DynamoDB cannot serve. Both are sorted
here (ordering.py). A read of one or more partitions holds at most the number of rows its
caller allows, and fails rather than return a truncated result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import batch
from .errors import OperationalError
from .ordering import Order, sort_rows
from .values import deserialize_item

if TYPE_CHECKING:
    from .paging import Pages


class ClientRead(NamedTuple):
    """How the cursor finishes a SELECT on the client.

    ``key_width``: 0 to read the statement's pages; n for a single-item SELECT whose parameters
    are the flattened full keys, n values each, sent as a batch. ``keep``: the WHERE the
    statement does not carry, as a test of an item's Python values (batches only). ``order``:
    see ordering.py. ``most``: the rows it may hold (None: bounded by the keys). ``hidden``:
    trailing columns read for ``keep`` and ``order`` only, not returned.
    """

    key_width: int = 0
    keep: Callable[[dict[str, Any]], bool] | None = None
    order: Order = ()
    most: int | None = None
    hidden: int = 0

    def rows(self, pages: Pages, body: dict[str, Any], names: Any) -> tuple[list[str], list[tuple]]:
        """The result's column names and every row, filtered and sorted, hidden columns dropped."""
        if self.key_width:
            pages.names = names
            rows = pages.rows(self.items(pages, body))
        else:
            rows = pages.first_rows(body, names)
            self._check_held(len(rows))
            while pages.request is not None:
                rows += pages.next_rows()
                self._check_held(len(rows))
        return self.finish(pages, list(pages.names), rows)

    def items(self, pages: Pages, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The items a batch of key reads returns that pass the rest of the WHERE (``keep``)."""
        parameters, consistent = body.get("Parameters", []), bool(body.get("ConsistentRead"))
        items, pages.pages = batch.read(pages.transport, body["Statement"], parameters, consistent)
        if self.keep is not None:
            items = [item for item in items if self.keep(deserialize_item(item))]
        return items

    def finish(self, pages: Pages, names: list[str], rows: list[tuple]) -> tuple[list[str], list[tuple]]:
        """The rows held, sorted, without the hidden columns."""
        self._check_held(len(rows))
        rows = sort_rows(rows, self.order)
        if self.hidden:
            names, rows = names[: -self.hidden], [row[: -self.hidden] for row in rows]
        return names, rows

    def _check_held(self, held: int) -> None:
        if self.most is not None and held > self.most:
            raise OperationalError(
                f"the rows to sort on the client are more than dynamodb_client_sort={self.most} allows: "
                "raise the limit, narrow the WHERE, or order by the sort key with the partition key "
                "pinned by == (DynamoDB sorts that itself)"
            )
