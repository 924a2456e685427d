"""Access-path analysis: what DynamoDB will do for a statement, and why.

The compiler fills a Plan while it renders each statement; the scan guard, the log and
``sa_dynamo.explain()`` all read that same Plan, so they can never disagree about it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine

# The execution option of explain(): a dict that receives the plan; nothing is sent.
EXPLAIN = "_sa_dynamo_explain"
_PLACEHOLDER = re.compile(r"%\(([^)]+?)\)s")
_POSTCOMPILE = re.compile(r"__\[POSTCOMPILE_(\S+?)\]")

READS = ("GetItem", "BatchGetItem", "Query", "Scan")
NOTHING_SENT = "the WHERE matches no item: nothing is sent"
WRITES = {"INSERT": "PutItem", "UPDATE": "UpdateItem", "DELETE": "DeleteItem"}


@dataclass(frozen=True)
class Plan:
    """One statement's access path.

    ``operation`` is GetItem (the whole key pinned), BatchGetItem (a list of whole keys, read
    sent as BatchGetItem, 100 keys a request), Query (the partition key pinned by =
    or IN), Scan (neither), or PutItem/UpdateItem/DeleteItem for writes. ``reason`` says why a
    read is a Scan, why no index served it, how many requests a BatchGetItem makes, or that
    nothing is sent (the WHERE matches no item).

    A Query or Scan with a ``filter`` pays for every item it reads, the ones the filter then
    discards too; ``discriminator`` names the discriminator when the filter tests it (the
    other kinds' items of the partition are read and discarded). ``driver_filter`` is tested
    by the driver on the items DynamoDB returns, so that it sees (and counts) what it discards.

    A statement the client computes over several requests (a join, GROUP BY, an UPDATE by any
    WHERE) has ``steps``: the plans of the statements it sends, in order, each with what it is
    for in its ``reason``; and ``client``: what the client computes over them, and the caps in
    force. Its ``operation`` is "Client", or the write's for an UPDATE/DELETE.
    """

    operation: str
    table: str
    index: str | None = None
    key_condition: str = ""
    filter: str = ""
    partiql: str = ""
    reason: str = ""
    steps: tuple[Plan, ...] = ()
    client: str = ""
    discriminator: str = ""  # the discriminator attribute the filter tests, if it does
    # the tests the driver applies to the items read instead of DynamoDB: the discriminator's,
    # while the CapacityWarning is on (constructs.kinds_after_reading); not in the PartiQL
    driver_filter: str = ""

    @property
    def source(self) -> str:
        return self.table if self.index is None else f"{self.table}.{self.index}"

    def finished(self, partiql: str, postcompile: Callable[[str], str] | None = None) -> Plan:
        """The plan with the statement text as sent and placeholders as ``?``. ``postcompile``
        renders the parameters SQLAlchemy expands at execution time (IN lists, JSON path
        steps); without it their markers stay, to be rendered per execution."""

        def sent(text: str) -> str:
            if postcompile is not None:
                text = _POSTCOMPILE.sub(lambda m: postcompile(m.group(1)), text)
            return _PLACEHOLDER.sub("?", text)

        return replace(
            self,
            key_condition=sent(self.key_condition),
            filter=sent(self.filter),
            driver_filter=sent(self.driver_filter),
            partiql=partiql,
        )

    def nothing_sent(self) -> Plan:
        """The plan of an execution whose WHERE matches no item: nothing is sent."""
        return replace(self, reason=NOTHING_SENT)

    def summary(self) -> str:
        """One line for the log."""
        if self.steps:
            steps = " | ".join(f"{number}. {step.summary()}" for number, step in enumerate(self.steps, 1))
            return f"{self.operation} on {self.source}: {steps} | then on the client: {self.client}"
        parts = [f"{self.operation} on {self.source}"]
        if self.key_condition:
            parts.append(f"key: {self.key_condition}")
        if self.filter:
            parts.append(f"filter: {self.filter}")
        if self.driver_filter:
            parts.append(f"driver filter: {self.driver_filter}")
        if self.reason:
            parts.append(f"({self.reason})")
        return "; ".join(parts)

    def __str__(self) -> str:
        if self.steps:
            lines = [f"operation:     {self.operation}", f"table:         {self.table}"]
            for number, step in enumerate(self.steps, 1):
                lines.append(f"step {number}:")
                lines += ["  " + line for line in str(step).splitlines()]
            lines.append(f"on the client: {self.client}")
            return "\n".join(lines)
        lines = [
            f"operation:     {self.operation}",
            f"table:         {self.table}",
            f"index:         {self.index or '-'}",
            f"key condition: {self.key_condition or '-'}",
            f"filter:        {self.filter or '-'}",
        ]
        if self.driver_filter:
            lines.append(f"driver filter: {self.driver_filter}")
        lines += self._after_reading()
        if self.reason:
            lines.append(f"note:          {self.reason}")
        lines.append(f"PartiQL:       {self.partiql}")
        return "\n".join(lines)

    def _after_reading(self) -> list[str]:
        """What the filters cost: DynamoDB reads and bills the items before it (or the driver)
        discards any."""
        if not (self.filter or self.driver_filter) or self.operation not in ("Query", "Scan"):
            return []
        read = "every item the key condition matches" if self.operation == "Query" else "every item"
        then = ["the filter discards those it fails"] if self.filter else []
        if self.driver_filter:
            then.append(
                "the driver discards those the driver filter fails and counts them for the "
                "CapacityWarning (dynamodb_capacity_warning)"
            )
        returned = "reads and bills" if self.filter else "reads, bills and returns"
        lines = [f"after reading: DynamoDB {returned} {read}, then {'; '.join(then)}"]
        if self.discriminator:
            lines.append(
                f"discriminator: the filter on {self.discriminator!r} discards the other kinds' items after "
                f"reading them. {kind_advice(self, self.discriminator)}"
            )
        return lines

    def with_discriminator(self, columns: Iterable[Any]) -> Plan:
        """The plan naming the discriminator among ``columns`` (the models' discriminator columns)
        whose table it reads, when its filter tests it."""
        for column in columns:
            table = getattr(column, "table", None)
            quoted = '"' + column.name.replace('"', '""') + '"'
            if getattr(table, "name", None) == self.table and quoted in self.filter + self.driver_filter:
                return replace(self, discriminator=column.name)
        return self


def kind_advice(plan: Plan, discriminator: str) -> str:
    """The access path that reads one kind's items only, for a plan that reads them all."""
    index = f"or read an index whose key is {discriminator!r} (use_index())"
    if plan.operation == "Scan":
        return f"Add a partition-key condition, so that DynamoDB reads one partition, {index}"
    if " AND " not in plan.key_condition:  # the partition key alone: the whole partition is read
        return (
            "Pin the sort key to the wanted kind's items (a prefix, .startswith('ORDER#'), or a "
            f"range), so that DynamoDB reads only them, {index}"
        )
    return f"Give each kind's items a sort-key prefix of their own and pin it, {index}"


def discriminators(statement: Any) -> list[Any]:
    """The discriminator columns of the classes an ORM SELECT loads."""
    from sqlalchemy import inspect

    found = []
    for description in getattr(statement, "column_descriptions", ()):
        mapper = getattr(inspect(description.get("entity"), raiseerr=False), "mapper", None)
        if mapper is not None and mapper.base_mapper.polymorphic_on is not None:
            found.append(mapper.base_mapper.polymorphic_on)
    return found


def scan_message(plan: Plan, fix: str = "") -> str:
    """What the scan guard tells the user: which table is read whole, why, and what to do.
    ``fix`` replaces the general advice when the caller knows a better one (a relationship's
    unindexed foreign key)."""
    whole = f"index {plan.index!r} of table {plan.table!r}" if plan.index else f"table {plan.table!r}"
    fix = fix or "Add an equality (== or .in_()) on the partition key to the WHERE"
    return (
        f"this statement scans the whole {whole}: {plan.reason}. {fix}, or pass "
        "dynamodb_scan='allow' (an execution option or a create_engine keyword) if reading every "
        "item is what you want"
    )


EXPLAINED = "explained, nothing sent"


@contextmanager
def _logged_as_explained(connection: Any) -> Iterator[None]:
    """The engine log (echo) of ``connection`` tags its lines with EXPLAINED meanwhile, so that
    the statement explain() runs through it is not taken for one that ran."""
    previous = connection.get_execution_options().get("logging_token")
    connection.execution_options(logging_token=f"{previous}, {EXPLAINED}" if previous else EXPLAINED)
    try:
        yield
    finally:
        connection.execution_options(logging_token=previous)


def explain(bind: Any, statement: Any) -> Plan:
    """The Plan of ``statement`` on ``bind`` (Engine, Connection, Session or scoped_session, such
    as Flask-SQLAlchemy's ``db.session``); nothing is sent.

    The statement goes through the same path as a real execution (ORM events included), so
    the plan shows exactly what would be sent; the engine log shows it tagged
    ``[explained, nothing sent]``.
    """
    from sqlalchemy.orm import Session, scoped_session

    if isinstance(bind, scoped_session):
        bind = bind()  # the session of the current scope
    holder: dict[str, Plan] = {}
    statement = statement.execution_options(**{EXPLAIN: holder})
    if isinstance(bind, Engine):  # through a Session, so ORM statements get the ORM's rewriting
        with bind.connect() as connection, _logged_as_explained(connection), Session(connection) as session:
            session.execute(statement)
    else:
        connection = (
            bind.connection(bind_arguments={"clause": statement}) if isinstance(bind, Session) else bind
        )
        with _logged_as_explained(connection):
            bind.execute(statement)
    return holder["plan"].with_discriminator(discriminators(statement))
