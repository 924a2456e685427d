"""The execution's half of a read finished on the client (single_read.py): the
driver's ClientRead for one execution, the dynamodb_client_sort option, the rows an OFFSET
skips, and the plan's note."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from sqlalchemy.exc import ArgumentError, CompileError, DBAPIError

from ...dbapi.client_reads import ClientRead
from ...dbapi.errors import Error, OperationalError
from ...dbapi.limits import MAX_GET_KEYS
from ...exc import cannot_express
from ...plan import Plan
from ...sqlalchemy_private import expanded_parameters
from ..compiler.predicate import values_of
from ..options import PAGE
from .caps import CLIENT_SORT, rows_held
from .single_read import BatchGet


def client_read(context: Any, compiled: Any, batch: BatchGet | None) -> ClientRead | None:
    """How the cursor finishes this execution on the client, or None when DynamoDB's rows are
    the result as they come. A Query sorted here needs dynamodb_client_sort (its cap)."""
    order = compiled.record.client_order
    if batch is None and order is None:
        return None
    options = context.options_in_force
    most = rows_held(options)
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
    requests = math.ceil(keys / MAX_GET_KEYS)
    note = f"{keys} keys, {requests} BatchGetItem request{'s' * (requests != 1)} of up to {MAX_GET_KEYS} keys"
    if plan.filter:
        note += "; the filter is tested on the client (BatchGetItem takes none)"
    return replace(plan, reason=note)


def skipped_rows(context: Any, compiled: Any) -> int:
    """The rows an OFFSET skips (SQLite's rule: a negative OFFSET skips none). They are read, so
    over a Query or a Scan they need dynamodb_client_sort, and more than it allows is an error
    before anything is sent; OFFSET 0 costs nothing."""
    name = compiled.record.offset_bind
    offset = int(context.compiled_parameters[0][name]) if name is not None else 0
    if offset <= 0:
        return 0
    options = context.options_in_force
    if options.get(PAGE) is not None:
        raise ArgumentError(
            "paginate() resumes where its last page ended (after=token): leave .offset() out of its statement"
        )
    if compiled.record.bounded:
        return offset
    most = rows_held(options)
    if most is None:
        raise CompileError(
            cannot_express(
                "OFFSET over a Query or a Scan",
                f"the rows it skips are read first; pass the execution option {CLIENT_SORT}=<max rows> to "
                "read and skip up to that many, or page with sa_dynamo.paginate(..., after=token), which "
                "resumes where a page ended",
            )
        )
    if offset > most:  # the driver's error, as SQLAlchemy raises it from a statement sent
        error = OperationalError(
            f"OFFSET {offset} reads and skips more rows than {CLIENT_SORT}={most} allows: raise the "
            "limit, narrow the WHERE, or page with sa_dynamo.paginate(..., after=token)"
        )
        raise DBAPIError.instance(context.statement, None, error, Error)
    return offset
