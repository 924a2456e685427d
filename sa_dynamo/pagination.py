"""``sa_dynamo.paginate``: one page of rows and an opaque token to resume after it.

The token wraps DynamoDB's NextToken and the number of rows the pages before it returned,
bound to the statement, its parameters and its LIMIT and signed with HMAC-SHA256, so a web
client can hold it but cannot forge one or reuse it for another query. A LIMIT bounds the
rows of all pages together, as SQL's LIMIT bounds the result. Pass the same ``secret`` in
every process that serves the pages; without one, a random per-process key is used and
tokens expire with the process.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import InvalidRequestError

from .dialect.options import PAGE
from .exc import InvalidPageToken

_PROCESS_SECRET = secrets.token_bytes(32)


def _fingerprint(statement: str, parameters: Any, limit: int | None) -> str:
    return hashlib.sha256(repr((statement, parameters, limit)).encode()).hexdigest()[:32]


@dataclass
class PageRequest:
    """Carried in the execution options: what page to read, and (afterwards) where it ended."""

    size: int
    after: str | None
    secret: bytes = field(repr=False)
    fingerprint: str = ""
    limit: int | None = None  # the statement's LIMIT: the rows of all its pages together
    before: int = 0  # the rows the pages before this one returned
    cursor: Any = field(default=None, repr=False)

    def start(self, statement: str, parameters: Any, limit: int | None, cursor: Any) -> str | None:
        """The NextToken to resume from, after checking the token belongs to this query."""
        self.fingerprint = _fingerprint(statement, parameters, limit)
        self.limit, self.cursor = limit, cursor
        if self.after is None:
            return None
        payload = self._signed_payload(self.after)
        if payload["q"] != self.fingerprint:
            raise InvalidPageToken(
                "the page token belongs to another query, other parameters or another LIMIT"
            )
        self.before = payload["r"]
        return payload["n"]

    @property
    def rows(self) -> int:
        """The rows this page may hold: its size, or fewer where the LIMIT ends."""
        return self.size if self.limit is None else max(0, min(self.size, self.limit - self.before))

    def _signed_payload(self, token: object) -> dict[str, Any]:
        """The body of ``token`` if this secret signed it, and in the one shape next_token()
        writes: anything else is refused, never read as "no token", which would restart the
        reader at the first page."""
        if not isinstance(token, str):
            raise InvalidPageToken(
                f"a page token is the str of a Page's next attribute, not {type(token).__name__}"
            )
        body, _, signature = token.rpartition(".")
        # A token we signed is ASCII, and compare_digest() accepts nothing else.
        if not (token.isascii() and hmac.compare_digest(signature, self._signature(body))):
            raise InvalidPageToken(
                "the page token is not valid: it was altered, or signed with another secret "
                "(pass the same secret= in every process)"
            )
        try:
            payload = json.loads(base64.urlsafe_b64decode(body.encode()))
        except (ValueError, RecursionError):  # binascii.Error and UnicodeDecodeError are ValueErrors
            payload = None
        if not (
            isinstance(payload, dict)
            and payload.keys() == {"n", "q", "r"}
            and all(isinstance(payload[key], str) and payload[key] for key in "nq")
            and type(payload["r"]) is int
            and payload["r"] > 0
        ):
            raise InvalidPageToken(
                "the page token carries this secret's signature but not what sa_dynamo.paginate() "
                "writes: is the secret shared with other software? Give paginate() a secret of its own"
            )
        return payload

    def next_token(self, rows: int) -> str | None:
        """The token for the page after this one of ``rows`` rows, or None after the last page
        (where DynamoDB's items or the LIMIT end)."""
        resume = self.cursor.resume_token if self.cursor is not None else None
        returned = self.before + rows
        if resume is None or (self.limit is not None and returned >= self.limit):
            return None
        payload = {"n": resume, "q": self.fingerprint, "r": returned}
        body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
        return body + "." + self._signature(body)

    def _signature(self, body: str) -> str:
        return hmac.new(self.secret, body.encode(), hashlib.sha256).hexdigest()


@dataclass
class Page:
    """One page: ``rows`` (ORM objects for an ORM statement) and ``next`` (None on the last)."""

    rows: list[Any]
    next: str | None


def paginate(
    bind: Any, statement: Any, page_size: int, after: str | None = None, secret: str | bytes | None = None
) -> Page:
    """Read one page of ``page_size`` rows of ``statement`` on ``bind`` (Engine, Connection or
    Session), starting after the page whose ``next`` token is ``after``."""
    if isinstance(page_size, bool) or not isinstance(page_size, int):
        raise TypeError(f"page_size is the number of rows a page holds, a positive int; not {page_size!r}")
    if page_size < 1:
        raise ValueError(f"page_size is the number of rows a page holds, a positive int; not {page_size!r}")
    if secret is not None and not secret:
        raise ValueError("secret must not be empty: anyone could sign page tokens with an empty key")
    key = _PROCESS_SECRET if secret is None else secret.encode() if isinstance(secret, str) else secret
    request = PageRequest(page_size, after, key)
    statement = statement.execution_options(**{PAGE: request})
    if hasattr(bind, "connect"):
        with bind.connect() as connection:
            rows = connection.execute(statement).all()
    elif _selects_one_entity(statement):
        rows = bind.execute(statement).scalars().all()
    else:
        rows = bind.execute(statement).all()
    if request.cursor is None:  # another dialect ran it: every row, from the first
        raise InvalidRequestError(
            "paginate() reads pages of sa_dynamo statements only: pass a dynamodb:// bind"
        )
    return Page(list(rows), request.next_token(len(rows)))


def _selects_one_entity(statement: Any) -> bool:
    """select(Order) gives Order objects, not one-element rows."""
    described = statement.column_descriptions
    return (
        len(described) == 1
        and described[0].get("entity") is not None  # a Core select describes no entity
        and described[0]["expr"] is described[0]["entity"]
    )
