"""LIKE and its relatives as DynamoDB's begins_with and contains: the value types that turn a
pattern into the prefix begins_with tests, or undo LIKE escaping for the literal functions."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import String, TypeDecorator

LIKE_METHODS = {"begins_with": "startswith", "contains": "contains"}


def unescaped(value: Any, escape: str) -> Any:
    """A startswith()/contains() value with its LIKE escapes (autoescape=True, escape=...)
    removed: the literal string it tests for."""
    return (
        re.sub(re.escape(escape) + "(.)", r"\1", value, flags=re.DOTALL) if isinstance(value, str) else value
    )


class ForDynamoDB(TypeDecorator):
    """A value rewritten for DynamoDB's begins_with or contains. The client's own test of the
    condition (predicate.py) reads the value as SQL takes it, so it takes no such processing."""

    impl = String
    cache_ok = True


class LikeEscaped(ForDynamoDB):
    """A startswith()/contains() value with LIKE escapes, sent with them removed: DynamoDB's
    begins_with and contains have no wildcards to escape."""

    def __init__(self, escape: str):
        super().__init__()
        self.escape = escape

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return unescaped(value, self.escape)


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


class LikePrefix(ForDynamoDB):
    """A LIKE pattern sent as the prefix begins_with tests for (checked per execution)."""

    def __init__(self, escape: str | None):
        super().__init__()
        self.escape = escape

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return like_prefix(value, self.escape) if isinstance(value, str) else value
