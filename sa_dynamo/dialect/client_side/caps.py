"""The cap on the rows the client holds: the ``dynamodb_client_sort`` execution option."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import ArgumentError

CLIENT_SORT = "dynamodb_client_sort"


def rows_held(options: Any) -> int | None:
    """The rows the client may hold (or skip) at most; None when the option is not given."""
    most = options.get(CLIENT_SORT)
    if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 1):
        raise ArgumentError(
            f"{CLIENT_SORT} is the number of rows to sort at most, a positive int; not {most!r}"
        )
    return most
