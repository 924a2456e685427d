"""LIKE and its relatives as DynamoDB's begins_with and contains: the value types that turn a
pattern into the prefix begins_with tests, or undo LIKE escaping for the literal functions."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import String, TypeDecorator

LIKE_METHODS = {"begins_with": "startswith", "contains": "contains"}


class LikeEscaped(TypeDecorator):
    """A startswith()/contains() value with LIKE escapes (autoescape=True, escape=...), sent
    with them removed: DynamoDB's begins_with and contains have no wildcards to escape."""

    impl = String
    cache_ok = True

    def __init__(self, escape: str):
        super().__init__()
        self.escaped = re.compile(re.escape(escape) + "(.)", re.DOTALL)

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return value if value is None else self.escaped.sub(r"\1", value)


def like_prefix(pattern: str, escape: str | None) -> str | None:
    """The literal prefix a LIKE pattern tests for (``'abc%'``: ``abc``), or None when the pattern
    is anything else: DynamoDB's begins_with is the only pattern match it has."""
    prefix: list[str] = []
    characters = iter(enumerate(pattern))
    for position, character in characters:
        if character == escape:
            escaped = next(characters, None)
            if escaped is None:
                return None
            prefix.append(escaped[1])
        elif character == "%" and position == len(pattern) - 1:
            return "".join(prefix)
        elif character in "%_":
            return None
        else:
            prefix.append(character)
    return None


class LikePrefix(TypeDecorator):
    """A LIKE pattern sent as the prefix begins_with tests for (checked per execution)."""

    impl = String
    cache_ok = True

    def __init__(self, escape: str | None):
        super().__init__()
        self.escape = escape

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return like_prefix(value, self.escape) if isinstance(value, str) else value
