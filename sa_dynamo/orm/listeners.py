"""Every listener sa_dynamo registers with SQLAlchemy: here, once, in the order they run.

SQLAlchemy's ORM events fire for every Session, Mapper and Engine in the process; each listener
acts only on statements, flushes and connections of this dialect (scope.py) and leaves every
other database's exactly as SQLAlchemy made them.

``do_orm_execute`` listeners run in the order of ``ORM_EXECUTE``. The order matters: each sees
the statement as the ones before it left it, a listener that returns a Result ends the chain,
and ``invoke_statement()`` runs a replacement statement through the listeners after the one
that calls it only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.orm import Mapper, Session

from . import (
    attribute_bags,
    discriminator,
    item_collections,
    key_templates,
    legacy_count,
    relationship_loads,
    shared_tables,
    subclass_loading,
    template_joins,
    template_queries,
    template_writes,
    version_checks,
)

# (listener, what it adds), in the order they run for each ORM execution
ORM_EXECUTE: tuple[tuple[Callable[..., Any], str], ...] = (
    (
        legacy_count.count_without_subquery,
        "Query.count(): one COUNT over the table and WHERE instead of a subquery; first, so that "
        "the discriminator filter sees the table",
    ),
    (
        discriminator.inject_discriminator_filter,
        'base-class queries of a shared table: "$type" IN [the identities they load], and the '
        "known identities for the unknown-type policy",
    ),
    (
        item_collections.answer_selectin_loads,
        "an item collection's selectinload(): Queries on the children's partitions instead of a "
        "self-JOIN (after the discriminator filter, whose criteria it carries over)",
    ),
    (
        template_queries.add_key_conditions,
        "key conditions implied by conditions on key-template sources (a Query, not a Scan)",
    ),
    (
        template_joins.answer_selectin_loads,
        "selectinload() of a relationship joined on template sources: Queries over the parents' "
        "partitions (after the key conditions, which its replacement statement gets here)",
    ),
    (
        relationship_loads.relationship_loads,
        "relationship loads: the scan warning's advice (the index to add), and selectin loads split "
        "into IN lists of at most 50 partition keys",
    ),
    (
        subclass_loading.drop_subclass_load_ordering,
        "subclass loads of with_polymorphic: the ORDER BY by primary key DynamoDB cannot serve "
        "dropped (the identity map orders nothing)",
    ),
    (
        template_writes.session_writes,
        "session.execute(update(...)) and the ORM's bulk writes: the keys their templates derive",
    ),
)

# (event, listener, what it adds); a Mapper event's listeners run in this order too
MAPPER: tuple[tuple[str, Callable[..., Any], str], ...] = (
    ("mapper_configured", shared_tables.collect, "gathers the mappers of each physical table"),
    ("mapper_configured", key_templates.validate, "checks key templates name attributes the class maps"),
    ("mapper_configured", attribute_bags.watch_bag_columns, "a dict set on a bag replaces the whole bag"),
    ("after_configured", shared_tables.validate_configured, "checks each shared table's key schema"),
    ("before_insert", key_templates.before_insert, "writes the keys templates and computed keys derive"),
    ("before_update", key_templates.before_update, "rewrites derived keys whose sources changed"),
    ("before_insert", attribute_bags.check_before_flush, "refuses a bag that names a mapped column"),
    ("before_update", attribute_bags.check_before_flush, "refuses a bag that names a mapped column"),
    ("after_insert", attribute_bags.flushed, "a flushed bag starts tracking changes afresh"),
    ("after_update", attribute_bags.flushed, "a flushed bag starts tracking changes afresh"),
    ("init", attribute_bags.new_object, "a new object's bag starts empty"),
    ("load", attribute_bags.adopt_loaded, "a loaded object's bag tracks its changes"),
    ("refresh", attribute_bags.adopt_loaded, "a refreshed object's bag tracks its changes"),
)

# (event, listener, what it adds) on every Session
SESSION: tuple[tuple[str, Callable[..., Any], str], ...] = (
    (
        "before_flush",
        version_checks.announce_versioned_writes,
        "version_id_col: the items of the flush's versioned writes, read at once by the first, so "
        "that StaleDataError comes at the flush",
    ),
)

# (event, listener, what it adds, listen() keywords) on every Engine
ENGINE: tuple[tuple[str, Callable[..., Any], str, dict[str, Any]], ...] = (
    (
        "before_execute",
        shared_tables.before_statement,
        "shared tables of mappers configured before sa_dynamo was imported: checked before the "
        "first statement",
        {},
    ),
    (
        "before_execute",
        template_writes.connection_writes,
        "connection.execute(update(...)) of a template's source: the keys it derives",
        {"retval": True},
    ),
)


def register() -> None:
    """Register them all, once (importing sa_dynamo.orm does), and adopt the mappers configured
    before: their ``mapper_configured`` events are past."""
    for listener, _ in ORM_EXECUTE:
        if not event.contains(Session, "do_orm_execute", listener):
            event.listen(Session, "do_orm_execute", listener)
    for name, listener, _ in SESSION:
        if not event.contains(Session, name, listener):
            event.listen(Session, name, listener)
    for name, listener, _ in MAPPER:
        if not event.contains(Mapper, name, listener):
            event.listen(Mapper, name, listener)
    for name, listener, _, keywords in ENGINE:
        if not event.contains(Engine, name, listener):
            event.listen(Engine, name, listener, **keywords)
    shared_tables.adopt_configured()
