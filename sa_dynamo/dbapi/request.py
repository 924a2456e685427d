"""One statement as the request DynamoDB takes: its text checked for size and its values
serialized, a value DynamoDB cannot store being a DataError that names its attribute; and the
statement's kind and table, read once per text."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from . import statement as stmt
from . import writes
from .errors import DataError, shown
from .validate import check_statement_size
from .values import serialize


def request(operation: str, parameters: Sequence[Any] | None, hidden: bool = False) -> dict[str, Any]:
    """The ExecuteStatement-shaped request for one statement (Parameters omitted when empty); a
    value DynamoDB cannot store is a DataError that names its parameter."""
    check_statement_size(operation)
    body: dict[str, Any] = {"Statement": operation}
    if parameters:
        body["Parameters"] = serialized = []
        for position, value in enumerate(parameters, 1):
            try:
                serialized.append(serialize(value))
            except DataError as error:
                names = writes.value_names(operation)
                what = (
                    f"attribute {names[position - 1]!r}"
                    if position <= len(names)
                    else f"parameter {position}"
                )
                raise DataError(f"{what} ({shown(value, hidden)}): {error}") from None
    return body


# The driver reads a statement's kind and table from its text. SQLAlchemy sends the same text
# again and again (its statement cache), so each text is read once.
kind_of = functools.lru_cache(maxsize=1024)(stmt.kind)
source_of = functools.lru_cache(maxsize=1024)(stmt.source)
