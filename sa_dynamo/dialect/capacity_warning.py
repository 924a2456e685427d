"""The capacity warning: a read that hands out far fewer rows than the items DynamoDB returned
for it, items read, billed and then dropped by the driver (``dynamodb_capacity_warning=N``: the
ratio of items to rows from which a read warns; off by default).

Only what the driver sees is measured: a PartiQL answer carries no count of the items DynamoDB
evaluated, so the items a filter DynamoDB applies discards are not counted; ``explain()`` names
that filter. While the warning is on, an ORM read's discriminator filter (``"$type" IN [...]``)
is therefore applied by the driver, not sent (orm/discriminator.py): DynamoDB reads and bills
the same items, and the driver counts the other kinds'. Measured are the items dropped on the
client: those, kinds no mapped class loads, the rows an OFFSET skips, the rest of a page past
a LIMIT.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import ArgumentError

from .. import caller
from ..dbapi.capacity import Consumed
from ..exc import CapacityWarning
from ..plan import Plan, kind_advice

OPTION = "dynamodb_capacity_warning"


def ratio(value: Any) -> float | None:
    """The option's threshold, checked: None (off) or a number of 1 or more. On, it moves an
    ORM read's discriminator filter from DynamoDB to the driver (see the module's docstring):
    the same units and pages, only the other kinds' items travel too."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
        raise ArgumentError(
            f"{OPTION} is the ratio of items read to rows returned from which a read warns, a "
            f"number of 1 or more (e.g. 10), or None for no warning; not {value!r}"
        )
    return float(value)


def watch(cursor: Any, plan: Plan, threshold: float, discriminator: str | None, hidden: bool) -> None:
    """Warn, once the read's figures are complete, if it dropped too many of its items;
    ``hidden`` (hide_parameters): the OFFSET and LIMIT, parameters, are not named."""
    offset, limit = cursor.skip_rows, cursor.max_rows

    def finished(consumed: Consumed) -> None:
        if consumed.items > consumed.rows and consumed.items >= threshold * max(consumed.rows, 1):
            caller.warn(message(plan, consumed, discriminator, offset, limit, hidden), CapacityWarning)

    cursor.finished = finished


def message(
    plan: Plan, consumed: Consumed, discriminator: str | None, offset: int, limit: int | None, hidden: bool
) -> str:
    """What was dropped, why, and the access pattern that would not read it."""
    requests = f"{consumed.requests} {'request' if consumed.requests == 1 else 'requests'}"
    head = (
        f"this read of {plan.source} handed out {consumed.rows} rows of the {consumed.items} items "
        f"DynamoDB returned in {requests}, and billed"
    )
    # The cause that dropped the most items is named (a LIMIT past most of a page, not the few
    # items of other kinds before it); SQL applies them in this order: kinds, OFFSET, LIMIT.
    dropped = consumed.items - consumed.rows
    filtered = consumed.filtered if plan.driver_filter else 0
    by_kind = consumed.skipped + filtered if discriminator is not None else 0
    by_offset = min(offset, dropped - by_kind)
    by_limit = dropped - by_kind - by_offset if limit is not None else 0
    most = max(by_kind, by_offset, by_limit)
    if most and by_kind == most and consumed.skipped >= filtered:
        return (
            f"{head}: {consumed.skipped} were of kinds no mapped class loads, dropped on the client by "
            f"their discriminator {discriminator!r}. {kind_advice(plan, discriminator)} (DynamoDB's "
            "own discriminator filter, dynamodb_discriminator_filter, returns fewer of them but reads "
            "and bills them all)"
        )
    if most and by_kind == most:
        return (
            f"{head}: {consumed.filtered} were of other kinds, discarded by the driver's filter "
            f"{plan.driver_filter} (applied after reading while this warning is on; sent to "
            f"DynamoDB, it reads and bills them all the same). {kind_advice(plan, discriminator)}"
        )
    if most and by_offset == most:
        return (
            f"{head}: {'the OFFSET' if hidden else f'OFFSET {offset}'} read its rows and dropped them. Page with sa_dynamo.paginate() "
            "instead: its resume token starts the next page where the last one ended"
        )
    if most and by_limit == most:
        return (
            f"{head}: {'the LIMIT' if hidden else f'the LIMIT {limit}'} ended within a page. Pass dynamodb_page_size near the LIMIT, "
            "so that each request reads fewer items"
        )
    return f"{head}: the driver dropped {dropped} after reading them"
