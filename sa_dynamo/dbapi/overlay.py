"""A transaction reads its own writes.

Writes wait in the connection's buffer until COMMIT. A SELECT in the same transaction reads the
committed items from DynamoDB, then lays the buffer over them: an item the transaction wrote is
taken as it will be once committed (its image), and kept only where the SELECT's WHERE holds for
that image; a deleted item disappears; ORDER BY, LIMIT and COUNT apply to the merged items.

The WHERE is tested in Python by the predicate the dialect compiles from the same condition tree
as the PartiQL (``Cursor.read_matches``). An UPDATE's image needs the item as committed: those
are read once per transaction, strongly consistently, when a read first needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from . import statement as stmt
from .client_reads import ClientRead
from .errors import NotSupportedError
from .ordering import sort_key
from .paging import Pages, counted, keys_of, projection
from .tables import Source
from .values import deserialize, deserialize_item, key_of
from .writes import Write

Item = dict[str, Any]  # an item as AttributeValues
Key = tuple[Any, ...]  # an item's key values, as Python values


def image(write: Write, committed: Item | None) -> Item | None:
    """The item after ``write`` commits, given the item as committed (None: no item)."""
    if write.kind == "DELETE":
        return None
    if write.kind in ("INSERT", "PUT"):
        return dict(write.values)
    if committed is None:  # an UPDATE of a missing item changes nothing
        return None
    item = {**committed, **write.values}
    for name in write.removes:
        item.pop(name, None)
    return item


def equality_test(names: list[str] | None, parameters: list[dict]) -> Callable[[dict], bool] | None:
    """The test of a WHERE that only compares attributes with parameters (``"a" = ? AND ...``),
    which the driver can decide without SQLAlchemy's predicate; None for any other WHERE."""
    if names is None or len(names) != len(parameters):
        return None
    wanted = [(name, deserialize(value)) for name, value in zip(names, parameters, strict=True)]

    def matches(item: dict[str, Any]) -> bool:
        return all(type(item.get(name)) is type(value) and item[name] == value for name, value in wanted)

    return matches


def merge(
    read: list[Item],
    images: Mapping[Key, Item | None],
    source: Source,
    matches: Callable[[dict[str, Any]], bool],
    order: tuple[str, bool] | None,
) -> list[Item]:
    """The items a SELECT returns once the transaction's writes are applied.

    ``read``: the items DynamoDB returned (committed, already filtered by the WHERE); ``images``:
    the items the transaction wrote, by key, as they will be (None: deleted). ``order`` is
    ORDER BY's attribute and whether it descends; without it the rows keep the sort key's
    ascending order a Query returns."""
    merged = [item for item in read if key_of(item, source.key) not in images]
    changed = len(merged) != len(read)
    for written in images.values():
        if (
            written is not None
            and all(name in written for name in source.required)
            and matches(deserialize_item(written))
        ):
            merged.append(written)
            changed = True
    if not changed:
        return read
    attribute, descending = order if order is not None else (source.sort_key, False)
    if attribute is not None:
        merged.sort(key=lambda item: sort_key(_python(item.get(attribute))), reverse=descending)
    return merged


def _python(value: Mapping[str, Any] | None) -> Any:
    """An attribute's Python value; None for a missing one."""
    return None if value is None else deserialize(value)


class Reading(Protocol):
    """What a SELECT's read is told by the dialect (the cursor's extensions, cursor.py)."""

    read_matches: Callable[[dict], bool] | None
    page_rows: int | None
    client_read: ClientRead | None
    page_size: int | None
    consistent_read: bool
    count: str | None
    hidden_columns: int
    star_columns: tuple[tuple[str, ...], str] | None


def read(
    cursor: Reading,
    pages: Pages,
    source_keys: Source,
    operation: str,
    body: dict[str, Any],
    images: Mapping[Key, Item | None],
) -> tuple[Sequence[str], list[tuple]]:
    """The columns and rows of a SELECT in a transaction that wrote to its table: the items it
    reads whole (so that the WHERE, ORDER BY and projection apply to written items as to stored
    ones), with the transaction's writes laid over them."""
    table = source_keys.table
    whole = stmt.whole_items(operation)
    matches = cursor.read_matches or equality_test(stmt.equalities(operation), body.get("Parameters", []))
    if matches is None or whole is None:
        raise NotSupportedError(
            f"this transaction wrote to {table!r}, and the driver cannot test this statement's "
            "WHERE on those items to show them to it: commit before this read, or run it through "
            "SQLAlchemy (which hands the driver its WHERE)"
        )
    if cursor.page_rows is not None:
        raise NotSupportedError(
            f"paginate() cannot see the writes this transaction holds for {table!r}: its page "
            "tokens point into the stored items. Commit before paginating, or read the page in "
            "another connection"
        )
    client = cursor.client_read
    statement, paths = whole
    pages.prepare(statement, body, cursor.page_size, cursor.consistent_read, 0)
    body["Statement"] = statement
    items = client.items(pages, body) if client is not None and client.key_width else pages.every_item(body)
    merged = merge(items, images, source_keys, matches, stmt.order_by(operation))
    if cursor.count is not None:
        return ("count",), [(counted(merged, cursor.count, projection(operation)[0]),)]
    if paths is not None:
        if cursor.hidden_columns:
            paths = paths[: -cursor.hidden_columns]
        names: Sequence[str] = projection(operation)[: len(paths)]
    elif cursor.star_columns is not None:
        names, pages.rest = cursor.star_columns
    else:
        names = keys_of(merged, pages.star_order)
    pages.names, pages.paths = names, paths
    rows = pages.rows(merged)
    if client is not None:  # sorted on the client
        return client.finish(pages, list(names), rows)
    return names, rows
