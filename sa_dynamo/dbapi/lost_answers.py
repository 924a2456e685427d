"""AUTOCOMMIT writes whose answer was lost: what the driver can still tell of them.

ExecuteStatement and BatchExecuteStatement take no idempotency token, so when an attempt's
answer is lost (a reset, half an answer, a time-out, a 5xx) and the request is sent again, the
second attempt meets the item as the first one may have left it. An INSERT then reports a
duplicate of itself (batch.stored_as_sent reads it back); an UPDATE or DELETE whose WHERE the
first attempt made false reports that it matched nothing. Only the stored item can tell: an
UPDATE whose WHERE reads what it sets (a version check) is counted as done when the item now
holds exactly what it sets (as for an INSERT, an identical write by someone else in that window
cannot be told apart, and leaves the same item);
a DELETE that finds nothing to delete cannot be told from one whose item was never there. Where
nothing proves it, the write is not counted as matching nothing: it raises an OperationalError
whose ``outcome_unknown`` is True and whose message says what to check.
"""

from __future__ import annotations

from typing import Any

from .errors import Error, OperationalError
from .transport import LOST_ANSWERS
from .values import deserialize_item
from .writes import Write, quote


def lost_before(response: dict[str, Any]) -> bool:
    """Whether an attempt before the one answered lost its answer, so that DynamoDB may have
    applied the request unseen (a throttled attempt was refused: it applied nothing)."""
    return response.get("ResponseMetadata", {}).get(LOST_ANSWERS, 0) > 0


def holds_what_it_sets(item: dict[str, Any] | None, write: Write) -> bool:
    """For an UPDATE resent after a lost answer whose WHERE then matched nothing: whether its
    item as stored now (``item``, Python values, None when there is none) holds exactly the
    values it sets and none of the attributes it removes. Only a WHERE that reads something the
    UPDATE writes (a version check) can have been made false by the first attempt; any other
    was false before it too, and an item that already held those values proves nothing."""
    if item is None:
        return False
    set_values = deserialize_item(write.values)
    written = [quote(name) for name in [*set_values, *write.removes]]
    if not any(name in condition.text for condition in write.conditions for name in written):
        return False
    return all(name in item and item[name] == value for name, value in set_values.items()) and not any(
        name in item for name in write.removes
    )


def what(kind: str, write: Write | None, hidden: bool) -> str:
    """The write as a message names it: "this UPDATE of {'pk': 'a'} in 't'"."""
    if write is None:
        return f"this {kind}"
    return f"this {kind} of {write.key_text(hidden)} in {write.table!r}"


def unmatched_after_resend(kind: str) -> str:
    """Why an UPDATE or DELETE that, sent again after a lost answer, matched nothing (its
    condition failed, or a DELETE ... RETURNING found no item) is of unknown outcome, and what
    to check."""
    if kind == "UPDATE":
        return (
            "its answer was lost and, sent again, it matched no item, and the item as stored does "
            "not show that the first attempt set it. DynamoDB may have applied the first attempt (and the item was "
            "changed since) or not (and its WHERE matched nothing): read the item back before "
            "writing it again"
        )
    return (
        "its answer was lost and, sent again, it found no item to delete. DynamoDB may have "
        "deleted the item on the first attempt, or it was not there: count it as deleted only if "
        "you know it existed"
    )


def resent_and_unmatched(
    error: Error | None, kind: str, write: Write | None, hidden: bool
) -> OperationalError:
    """The error of one UPDATE or DELETE that matched nothing when sent again after a lost
    answer, which nothing shows to be its own doing or not (``unmatched_after_resend``)."""
    unknown = OperationalError(
        f"the outcome of {what(kind, write, hidden)} is unknown: {unmatched_after_resend(kind)}",
        response=error.response if error is not None else None,
    )
    unknown.outcome_unknown = True
    return unknown


def unanswered(error: Error, kind: str, write: Write | None, hidden: bool) -> Error:
    """``error``, of a write none of whose attempts was answered, saying so."""
    error.outcome_unknown = True
    item = f"the item {write.key_text(hidden)} of {write.table!r}" if write is not None else "the item"
    error.args = (
        f"{(error.args[0] if error.args else '').rstrip('.')}. The outcome of this {kind} is unknown: DynamoDB "
        f"may have applied it or not. Read {item} back before writing it again",
    )
    return error
