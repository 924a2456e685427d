"""The execution's half of a read finished on the client (single_read.py): the
driver's ClientRead for one execution, the dynamodb_client_sort option, and the plan's note."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from sqlalchemy.exc import ArgumentError, CompileError

from ...dbapi.client_reads import ClientRead
from ...dbapi.limits import BATCH_SIZE
from ...plan import Plan
from ...sqlalchemy_private import expanded_parameters
from ..compiler.predicate import values_of
from ..options import PAGE
from .single_read import CLIENT_SORT, BatchGet


def _rows_held(options: Any) -> int | None:
    most = options.get(CLIENT_SORT)
    if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 1):
        raise ArgumentError(
            f"{CLIENT_SORT} is the number of rows to sort at most, a positive int; not {most!r}"
        )
    return most


def client_read(context: Any, compiled: Any, batch: BatchGet | None) -> ClientRead | None:
    """How the cursor finishes this execution on the client, or None when DynamoDB's rows are
    the result as they come. A Query sorted here needs dynamodb_client_sort (its cap)."""
    order = compiled.record.client_order
    if batch is None and order is None:
        return None
    options = context.options_in_force
    most = _rows_held(options)
    capped = batch is None and bool(order.opt_in)
    if capped and most is None:
        raise CompileError(order.opt_in)
    if options.get(PAGE) is not None:
        raise ArgumentError(
            "paginate() resumes DynamoDB's own pages; this read is "
            + ("a batch of key reads" if batch is not None else "sorted on the client")
            + ": execute it instead, or order by the sort key with the partition key pinned by =="
        )
    keep = None
    if batch is not None and batch.keep is not None:
        values = values_of(compiled, context.compiled_parameters[0], expanded_parameters(context))
        test = batch.keep
        keep = lambda item: test(item, values)  # noqa: E731
    return ClientRead(
        key_width=batch.width if batch is not None else 0,
        keep=keep,
        order=order.order if order is not None else (),
        most=most if capped else None,
        hidden=compiled.record.hidden_columns + (batch.hidden if batch is not None else 0),
    )


def batch_note(plan: Plan, batch: BatchGet | None, values: int) -> Plan:
    """The plan of a batch read says how many keys and requests it makes, and where it filters."""
    if batch is None:
        return plan
    keys = values // batch.width
    note = f"{keys} keys, {math.ceil(keys / BATCH_SIZE)} requests of up to {BATCH_SIZE} single-item SELECTs"
    if plan.filter:
        note += "; the filter is tested on the client (a batched SELECT takes none)"
    return replace(plan, reason=note)
