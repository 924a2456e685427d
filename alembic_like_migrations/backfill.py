"""Backfills: rewrite (or copy) the items of a table in batches, resumable, each item once.

Items are read with DynamoDB's native Scan rather than PartiQL: a Scan resumes from its
LastEvaluatedKey, which never expires, while a PartiQL NextToken is dead after an hour, too
short for a checkpoint that must survive a crash overnight. The writes of a batch and the
checkpoint that records the batch commit together as ONE ExecuteTransaction (the dialect's
default connection mode), so after a crash either both are there or neither: a re-run resumes
after the last committed batch and never applies a change twice, not even a non-idempotent one.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from alembic.util import CommandError
from sqlalchemy import Column, Connection, Engine, bindparam, insert, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql import Executable

from sa_dynamo.dbapi.limits import MAX_TRANSACTION_ACTIONS
from sa_dynamo.dbapi.values import deserialize, serialize
from sa_dynamo.orm.key_templates import KeyTemplate

from . import live
from .checkpoints import Checkpoints, Item, Progress
from .errors import BackfillConflict, KeySchemaChangeError, key_change_advice
from .report import ProgressBar, log

# One action of each transaction is the checkpoint.
MAX_BATCH_SIZE = MAX_TRANSACTION_ACTIONS - 1
DEFAULT_BATCH_SIZE = 50
_ATTEMPTS = 3

Transform = Callable[[Item], Mapping[str, Any] | None]


@dataclass
class Backfill:
    """Which items of ``table`` to rewrite and how.

    ``where`` selects items by attribute equality (``None``: the attribute is absent).
    ``values`` sets attributes to constants (``None`` removes one), ``templates`` computes them
    from the item like key templates do (``"ORDER#{order_id}"``; absent when a source is
    absent), and ``transform(item)`` returns further changes, or None to leave the item alone.
    With ``target`` the changed items are inserted into that table instead (a copy).
    ``name`` identifies the checkpoint; by default it is derived from the arguments.
    ``on_batch`` is called with the Progress after each committed batch.
    """

    table: str
    values: Mapping[str, Any] = field(default_factory=dict)
    templates: Mapping[str, str] = field(default_factory=dict)
    where: Mapping[str, Any] = field(default_factory=dict)
    transform: Transform | None = None
    target: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    name: str | None = None
    on_batch: Callable[[Progress], None] | None = None
    _templates: list[KeyTemplate] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise ValueError(
                f"batch_size must be 1 to {MAX_BATCH_SIZE}: a batch and its checkpoint commit as "
                f"one transaction of at most {MAX_TRANSACTION_ACTIONS} writes"
            )
        if self.target is None and not (self.values or self.templates or self.transform):
            raise ValueError(
                f"this backfill of {self.table!r} changes nothing: give values=, templates= or transform="
            )
        self._templates = [KeyTemplate.parse(target, text) for target, text in self.templates.items()]

    @property
    def checkpoint_id(self) -> str:
        if self.name:
            return self.name
        transform = self.transform
        code = getattr(transform, "__code__", None)
        origin = transform and f"{transform.__qualname__}@{code and code.co_firstlineno}"
        spec = (
            self.table,
            self.target,
            *(sorted(m.items()) for m in (self.values, self.templates, self.where)),
        )
        digest = hashlib.sha256(repr((spec, origin)).encode()).hexdigest()[:16]
        return f"{self.table}:{digest}"

    def changes(self, item: Item) -> Item | None:
        """The attributes to write for ``item``; None leaves it alone."""
        changes = dict(self.values)
        for template in self._templates:
            changes[template.target] = template.render(item)
        if self.transform is not None:
            extra = self.transform(dict(item))
            if extra is None:
                return None
            changes.update(extra)
        return changes

    def plan(self) -> str:
        """What the backfill will do, as ``--sql`` prints it."""
        if self.target:
            parts = [f"copy the items of {self.table!r} into {self.target!r}"]
        else:
            parts = [f"update the items of {self.table!r}"]
        if self.where:
            parts.append(f"where {dict(self.where)!r} (None: attribute absent)")
        if self.values:
            parts.append(f"set {dict(self.values)!r}")
        if self.templates:
            parts.append(f"set from templates {dict(self.templates)!r}")
        if self.transform:
            parts.append(f"apply {self.transform.__qualname__}()")
        parts.append(
            f"in batches of {self.batch_size}, each committed with checkpoint {self.checkpoint_id!r} "
            "as one ExecuteTransaction"
        )
        return "-- backfill: " + "; ".join(parts)


class _Writer(ABC):
    """Turns items into parameter rows of a few statements, one per set of attributes written,
    so a batch is a handful of executemany() calls rather than one execute() per item."""

    def __init__(self, spec: Backfill, described: dict[str, Any]):
        self.spec = spec
        self.table = live.key_table(described)
        self.keys = live.key_names(described)
        self._statements: dict[tuple[str, ...], Executable] = {}

    def statement(self, names: tuple[str, ...]) -> Executable:
        if names not in self._statements:
            for name in names:
                if name not in self.table.c:
                    self.table.append_column(Column(name))
            self._statements[names] = self.build(names)
        return self._statements[names]

    @abstractmethod
    def build(self, names: tuple[str, ...]) -> Executable:
        """The statement that writes the attributes ``names``."""

    @abstractmethod
    def row(self, item: Item) -> tuple[tuple[str, ...], dict[str, Any]] | None:
        """The attributes to write for ``item`` and the parameters of their statement, or None."""


class _Rewrite(_Writer):
    """Updates each item in place: only the attributes that change."""

    def build(self, names: tuple[str, ...]) -> Executable:
        table = self.table
        keys = [table.c[key] == bindparam(f"k{i}") for i, key in enumerate(self.keys)]
        return (
            update(table)
            .where(*keys)
            .values({table.c[name]: bindparam(f"v{i}") for i, name in enumerate(names)})
        )

    def row(self, item: Item) -> tuple[tuple[str, ...], dict[str, Any]] | None:
        changes = self.spec.changes(item)
        if changes is None:
            return None
        names = tuple(sorted(name for name, value in changes.items() if item.get(name) != value))
        if not names:
            return None
        touched = sorted(set(names) & set(self.keys))
        if touched:
            raise KeySchemaChangeError(
                f"a backfill of {self.spec.table!r} cannot change its key attribute(s) {', '.join(touched)}: "
                f"DynamoDB keys are immutable. Instead, {key_change_advice(self.spec.table)}"
            )
        row = {f"k{i}": item[key] for i, key in enumerate(self.keys)}
        row.update({f"v{i}": changes[name] for i, name in enumerate(names)})
        return names, row


class _Copy(_Writer):
    """Inserts each changed item into the target table (never overwriting one already there)."""

    def build(self, names: tuple[str, ...]) -> Executable:
        return insert(self.table).values(
            {self.table.c[name]: bindparam(f"v{i}") for i, name in enumerate(names)}
        )

    def row(self, item: Item) -> tuple[tuple[str, ...], dict[str, Any]] | None:
        changes = self.spec.changes(item)
        if changes is None:
            return None
        copied = {name: value for name, value in {**item, **changes}.items() if value is not None}
        names = tuple(sorted(copied))
        return names, {f"v{i}": copied[name] for i, name in enumerate(names)}


def _filter(where: Mapping[str, Any]) -> dict[str, Any]:
    """Scan's FilterExpression for attribute equalities (None: the attribute is absent)."""
    if not where:
        return {}
    names, values, terms = {}, {}, []
    for i, (attribute, value) in enumerate(where.items()):
        names[f"#w{i}"] = attribute
        if value is None:
            terms.append(f"attribute_not_exists(#w{i})")
        else:
            values[f":w{i}"] = serialize(value)
            terms.append(f"#w{i} = :w{i}")
    request = {"FilterExpression": " AND ".join(terms), "ExpressionAttributeNames": names}
    if values:
        request["ExpressionAttributeValues"] = values
    return request


def _scan(connection: Connection, spec: Backfill, position: Item | None) -> dict[str, Any]:
    # Strongly consistent, so a transform computes from the item as it is now.
    request = {
        "TableName": spec.table,
        "Limit": spec.batch_size,
        "ConsistentRead": True,
        **_filter(spec.where),
    }
    if position is not None:
        request["ExclusiveStartKey"] = {name: serialize(value) for name, value in position.items()}
    return live.send(connection, "Scan", request)


def _describe(connection: Connection, table: str) -> dict[str, Any]:
    described = live.describe(connection, table)
    if described is None:
        raise CommandError(f"table {table!r} does not exist: create it before the backfill runs")
    return described


def _commit_batch(
    connection: Connection,
    spec: Backfill,
    writer: _Writer,
    checkpoints: Checkpoints,
    before: Progress,
) -> Progress:
    """Scan one page after ``before``, write its changes and the new checkpoint in one commit."""
    for _ in range(_ATTEMPTS):
        page = _scan(connection, spec, before.position)
        rows: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
        for raw in page["Items"]:
            change = writer.row({name: deserialize(value) for name, value in raw.items()})
            if change is not None:
                names, params = change
                rows[names].append(params)
        for names, params in rows.items():
            connection.execute(writer.statement(names), params)
        written = sum(len(params) for params in rows.values())
        last = page.get("LastEvaluatedKey")
        after = Progress(
            before.name,
            batches=before.batches + 1,
            scanned=before.scanned + page["ScannedCount"],
            written=before.written + written,
            position={name: deserialize(value) for name, value in last.items()} if last else None,
            done=last is None,
        )
        try:
            checkpoints.save(connection, before, after)
            connection.commit()
            return after
        except (StaleDataError, IntegrityError) as error:
            connection.rollback()
            current = checkpoints.load(connection, before.name)
            if (current.batches if current else 0) != before.batches:
                raise BackfillConflict(
                    f"another process is running backfill {before.name!r} (its checkpoint moved past batch "
                    f"{before.batches}); let that one finish, it resumes where this one stopped"
                ) from error
            if isinstance(error, IntegrityError):
                raise BackfillConflict(
                    f"an item of batch {after.batches} already exists in {spec.target!r} "
                    f"(copy_items never overwrites): {error.orig}"
                ) from error
            log.info(
                "backfill %s: an item of batch %d changed meanwhile; reading it again",
                before.name,
                after.batches,
            )
    raise BackfillConflict(
        f"the items of batch {before.batches + 1} of backfill {before.name!r} changed {_ATTEMPTS} times while "
        "being rewritten; re-run the migration to resume from the checkpoint"
    )


def run(engine: Engine, spec: Backfill, checkpoints: Checkpoints) -> Progress:
    """Run (or resume) a backfill to its end on connections of its own; return its Progress.
    The checkpoint stays: the migration forgets it when it records its revision."""
    with engine.connect() as connection:
        checkpoints.ensure(connection)
        progress = checkpoints.load(connection, spec.checkpoint_id) or Progress(spec.checkpoint_id)
        if progress.done:
            log.info("backfill %s: already complete, skipped", progress.name)
            return progress
        if progress.batches:
            log.info("backfill %s: resuming after batch %d", progress.name, progress.batches)
        described = _describe(connection, spec.table)
        writer = _Copy(spec, _describe(connection, spec.target)) if spec.target else _Rewrite(spec, described)
        label = f"copy {spec.table} -> {spec.target}" if spec.target else f"backfill {spec.table}"
        bar = ProgressBar(label, described.get("ItemCount", 0))
        while not progress.done:
            progress = _commit_batch(connection, spec, writer, checkpoints, progress)
            if not progress.done:  # the last batch is reported by close(), as done: never "99%"
                bar.update(progress.scanned, f"{progress.scanned:,} scanned, {progress.written:,} written")
            if spec.on_batch is not None:
                spec.on_batch(progress)
        batches = f"{progress.batches} batch{'es' if progress.batches != 1 else ''}"
        bar.close(f"{progress.scanned:,} scanned, {progress.written:,} written in {batches}")
        return progress
