"""The client-side limits a statement and a write are checked against before anything is sent,
so that what DynamoDB would refuse fails early, with an error that names the limit and what to
do instead.
"""

from __future__ import annotations

from typing import Any

from . import statement as stmt
from .errors import DataError, ProgrammingError
from .writes import Write


def check_statement_size(operation: str) -> None:
    """Refuse a statement text over DynamoDB's 8 KB limit."""
    if len(operation) * 4 <= stmt.MAX_STATEMENT_BYTES:
        return  # no character takes more than 4 bytes in UTF-8
    size = len(operation.encode("utf-8"))
    if size > stmt.MAX_STATEMENT_BYTES:
        raise ProgrammingError(
            f"statement is {size} bytes; DynamoDB accepts at most {stmt.MAX_STATEMENT_BYTES}: "
            "split the work into smaller statements (fewer IN values or conditions)"
        )


MAX_ITEM_BYTES = 400 * 1024


def attribute_size(value: dict[str, Any]) -> int:
    """An AttributeValue's size as DynamoDB counts it toward the 400 KB item limit (close enough
    to refuse an oversize item before sending; DynamoDB stays the judge near the limit)."""
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(inner.encode("utf-8"))
    if kind == "N":
        return len(inner.lstrip("-").replace(".", "")) // 2 + 2
    if kind == "B":
        return len(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(attribute_size({kind[0]: v}) for v in inner)
    if kind == "M":
        return 3 + sum(len(k.encode("utf-8")) + attribute_size(v) + 1 for k, v in inner.items())
    return 3 + sum(attribute_size(v) + 1 for v in inner)  # L


def check_write(write: Write) -> None:
    """Refuse before sending what DynamoDB would refuse: empty key values, oversize items."""
    for name, value in write.key:
        if value in ({"S": ""}, {"B": b""}):
            raise DataError(
                f"key attribute {name!r} of table {write.table!r} is empty; DynamoDB keys need a value"
            )
    if write.kind not in ("INSERT", "PUT"):
        return
    sizes = {name: len(name.encode("utf-8")) + attribute_size(value) for name, value in write.values.items()}
    total = sum(sizes.values())
    if total > MAX_ITEM_BYTES:
        largest = max(sizes, key=sizes.get)
        raise DataError(
            f"the item for {write.key_text()} in table {write.table!r} is "
            f"{total} bytes, over DynamoDB's 400 KB item limit (largest attribute: {largest!r}, "
            f"{sizes[largest]} bytes): store large values elsewhere (e.g. S3) and keep a reference"
        )
