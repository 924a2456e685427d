"""What every transport does around a request, whatever carries it: the check before the first
one, the error that names the tables, the observers, the debug line with the time taken."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .. import statement as stmt
from ..errors import MISSING_TABLE_CODES, Error, missing_table, not_dynamodb, translate
from . import Observer

log = logging.getLogger("sa_dynamo.dbapi")


class Sending:
    """A transport's ``send``: ``_request`` (the subclass's) carries the request."""

    where = "in DynamoDB"

    def __init__(self, first_request: Callable[[], None] | None = None):
        self._first_request = first_request  # run before the first request, then dropped
        self.descending_pages: bool | None = None
        self.observers: list[Observer] = []

    def send(self, operation: str, body: dict[str, Any], wire: bool = False) -> dict[str, Any]:
        if self._first_request is not None:
            check, self._first_request = self._first_request, None
            check()
        started = time.perf_counter()
        try:
            answer = self._request(operation, body, wire)
        except Exception as exc:
            error = self._error(exc, body)
            for observer in self.observers:
                observer(operation, body, error)
            raise error from None  # DynamoDB's code and message are in it
        finally:
            log.debug("%s took %.1f ms", operation, (time.perf_counter() - started) * 1000)
        other = not_dynamodb(answer, self.where)
        if other is not None:
            raise other
        for observer in self.observers:
            observer(operation, body, answer)
        return answer

    def _request(self, operation: str, body: dict[str, Any], wire: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _error(self, exc: Exception, body: dict[str, Any]) -> Error:
        """The PEP 249 error for what a request raised, naming the tables it is about."""
        other = not_dynamodb(getattr(exc, "response", None) or {}, self.where)
        if other is not None:
            return other
        error = translate(exc)
        tables = stmt.tables(body)
        if error.code in MISSING_TABLE_CODES and tables:
            error.args = (missing_table(tables, self.where),)
        return error
