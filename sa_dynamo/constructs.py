"""The constructs sa_dynamo adds to SQLAlchemy's, which its compiler knows.

``upsert(table)``: an INSERT that overwrites, for bulk loads that accept it. SQL INSERT refuses an
existing key (IntegrityError), so it runs as PartiQL INSERT; ``upsert`` runs with DynamoDB's native
BatchWriteItem (PartiQL has no upsert), writes at once (AUTOCOMMIT only) and shows in the log as
``PUT INTO "t" VALUE {...}``.

``use_index(name)``: a statement option that forces the secondary index a SELECT reads. It is part
of the statement's cache key, so a query with the option and the same query without it compile
(and are cached) separately. The ``dynamodb_index`` execution option is the same request made per
execution (see dialect/options.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import UserDefinedOption
from sqlalchemy.sql.cache_key import HasCacheKey
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.visitors import InternalTraversal

from .sqlalchemy_private import statement_options


class Upsert(Insert):
    """An INSERT that replaces an existing item with the same key."""

    inherit_cache = True


def upsert(table: Any) -> Upsert:
    """``conn.execute(upsert(table), [dicts])``: write the items, replacing existing ones."""
    return Upsert(table)


class _CompilerOption(UserDefinedOption, HasCacheKey):
    """A statement option that only speaks to sa_dynamo's compiler, part of the cache key.

    An ORM option to SQLAlchemy (its public ``UserDefinedOption``): a loader that emits a
    statement of its own (``selectinload()``) asks each option of the cached query for the
    version of itself to pass on, and the ORM compiles it as none of its own."""

    _is_has_cache_key = True
    _cache_key_traversal = [("name", InternalTraversal.dp_string)]
    name: str


class use_index(_CompilerOption):
    """``select(Order).where(Order.status == "OPEN").options(sa_dynamo.use_index("gsi1"))``:
    read the index ``gsi1`` of the statement's table instead of letting the planner choose."""

    inherit_cache = True

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise ArgumentError(f"use_index() takes the name of a secondary index, not {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"use_index({self.name!r})"


class kinds_after_reading(_CompilerOption):
    """Not public: the driver, not DynamoDB, applies the statement's test of the discriminator
    attribute ``name`` (``"$type" IN [...]``), so that it counts the items of the other kinds a
    read returns (the CapacityWarning is on: orm/discriminator.py). DynamoDB bills a Query or
    Scan by the items it reads before any filter, and its 1 MB page is counted before the filter
    too: the units and pages are the same, only more items travel."""

    inherit_cache = True

    def __init__(self, name: str):
        self.name = name


def _named(option: type[_CompilerOption], statements: tuple[Any, ...]) -> set[str]:
    return {o.name for statement in statements for o in statement_options(statement) if isinstance(o, option)}


def discriminator_after_reading(*statements: Any) -> str | None:
    """The discriminator attribute a kinds_after_reading() option names on any of ``statements``."""
    names = _named(kinds_after_reading, statements)
    return min(names) if len(names) == 1 else None


def forced_index(*statements: Any) -> str | None:
    """The index a use_index() option names on any of ``statements`` (the compiled statement,
    and the SELECT the ORM derived from it)."""
    names = _named(use_index, statements)
    if len(names) > 1:
        raise ArgumentError(f"a statement can read one index, not {', '.join(sorted(names))}")
    return names.pop() if names else None
