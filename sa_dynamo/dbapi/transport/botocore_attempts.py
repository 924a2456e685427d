"""What botocore's client does not say about the attempts it makes for one request, learned from
its public ``before-parse`` event: whether an answer arrived whole, and how many attempts before
the answered one lost their answer (so that DynamoDB may have applied them unseen).

botocore reads an answer to its end without holding it to its Content-Length, so half an answer
whose connection closed cleanly is parsed as if it were whole (an error's JSON cut in two becomes
its message, a page cut in two no Items); and in its standard retry mode an answer that keeps
failing its x-amz-crc32 is parsed in the end all the same. The driver's own HTTP transport reads
both as the lost answers they are (signed.py): here too they raise botocore's exception for
them, ConnectionClosedError or ChecksumError, and half an answer that botocore's rules would not
send again (they see a failing x-amz-crc32, which DynamoDB Local sends with no error) is sent
again as botocore's own handlers decide for a lost connection (``needs-retry``: retries.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ConnectionClosedError

from . import LOST_ANSWERS, botocore_wire, wire
from .retries import MODES, Retries


@dataclass
class Attempts:
    """The answered attempts of one request to ``url`` sent again by ``retries`` (None: only by
    botocore's rules), in order: each one's HTTP status and what was wrong with its answer
    (None: it arrived whole), and whether botocore's rules check it (it has an x-amz-crc32)."""

    url: str
    retries: Retries | None
    answered: list[tuple[int, Exception | None, bool]] = field(default_factory=list)

    def last_failure(self) -> Exception | None:
        """What was wrong with the answer the client returned or raised, if anything."""
        return self.answered[-1][1] if self.answered else None

    def note_lost(self, response: dict[str, Any]) -> None:
        """Write into ``response`` (an answer, or a ClientError's) how many attempts before the
        answered one lost their answer: never answered (a reset, a time-out), a 5xx or an answer
        cut short or corrupted."""
        metadata = response.get("ResponseMetadata")
        if metadata is None or not self.answered:
            return
        attempts = metadata.get("RetryAttempts", 0) + 1
        unanswered = attempts - len(self.answered)
        damaged = sum(1 for status, wrong, _ in self.answered[:-1] if wrong is not None or status >= 500)
        metadata[LOST_ANSWERS] = unanswered + damaged


_attempts: ContextVar[Attempts | None] = ContextVar("sa_dynamo_attempts", default=None)


@contextmanager
def watched(url: str, retries: Retries | None) -> Iterator[Attempts]:
    """Within it, this thread's (or task's) request to ``url`` records its attempts' answers."""
    attempts = Attempts(url, retries)
    reset = _attempts.set(attempts)
    try:
        yield attempts
    finally:
        _attempts.reset(reset)


def damage(response_dict: dict[str, Any], url: str) -> Exception | None:
    """botocore's exception for an answer that did not arrive whole: shorter than its
    Content-Length, or failing its x-amz-crc32; None for a sound one."""
    headers, body = response_dict.get("headers", {}), response_dict.get("body")
    if not isinstance(body, bytes):
        return None
    length = headers.get("content-length")
    if length is not None and length.isdigit() and len(body) < int(length):
        return ConnectionClosedError(endpoint_url=url)
    return wire.checksum_failure(headers, body)


def answered(
    operation_model: Any, response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any
) -> None:
    """botocore's ``before-parse`` hook: record the attempt's answer; a sound ExecuteStatement
    page goes on to ``botocore_wire.take_wire_items`` (which changes its body: so after this)."""
    attempts = _attempts.get()
    wrong = None
    if attempts is not None:
        wrong = damage(response_dict, attempts.url)
        checked = "x-amz-crc32" in response_dict.get("headers", {})
        attempts.answered.append((response_dict.get("status_code", 0), wrong, checked))
    if wrong is None and operation_model.name == "ExecuteStatement":
        botocore_wire.take_wire_items(response_dict, customized_response_dict)


def again(
    attempts: int, response: Any = None, operation: Any = None, request_dict: Any = None, **_: Any
) -> float | None:
    """botocore's ``needs-retry`` hook, after botocore's own: the seconds to wait before sending
    again a request whose answer came cut short with nothing botocore checks (no x-amz-crc32,
    not a 5xx), as botocore's own handlers decide for the connection error it is; None: leave
    it to botocore's."""
    watching = _attempts.get()
    if watching is None or watching.retries is None or response is None or not watching.answered:
        return None
    status, wrong, checked = watching.answered[-1]
    if wrong is None or checked or status >= 500:
        return None
    return watching.retries.wait(operation.name, attempts, wrong, None, request_dict["context"])


def retries_of(client: Any) -> Retries | None:
    """botocore's retry handlers on a client, for ``again``; None for a mode the driver does
    not know (adaptive), or a stand-in for a client."""
    config = getattr(getattr(client, "meta", None), "config", None)
    if config is None:
        return None
    return Retries(client) if (config.retries or {}).get("mode", "legacy") in MODES else None


def register(client: Any) -> None:
    """Hook ``answered`` and ``again`` into a botocore client (a stand-in without botocore's
    event system is left as it is)."""
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is not None:
        events.register("before-parse.dynamodb", answered, unique_id="sa_dynamo-answered")
        events.register("needs-retry.dynamodb", again, unique_id="sa_dynamo-again")
