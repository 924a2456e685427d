"""Discriminators: the ``SingleTable`` mixin's defaults and the filters injected into queries.

Items of several kinds share a DynamoDB table, and other writers may add kinds the models do
not know. A query for a base class therefore gets ``"$type" IN [...]`` listing exactly the
identities that class can load, so foreign items are never returned (SQLAlchemy itself filters
only subclass queries of single-table inheritance).
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlalchemy import String
from sqlalchemy.orm import Mapper, ORMExecuteState, mapped_column, with_loader_criteria

from ..constructs import kinds_after_reading
from ..dialect.capacity_warning import OPTION
from ..dialect.options import DISCRIMINATOR
from ..sqlalchemy_private import selected_mappers
from .attribute_bags import mapped_by_kind
from .scope import dynamodb_bind
from .shared_tables import discriminator_column

FILTER_OPTION = "dynamodb_discriminator_filter"


class SingleTable:
    """Declarative mixin with EF Core-style single-table defaults.

    The root class gets a discriminator attribute ``type_`` stored as DynamoDB attribute
    ``$type`` (``__discriminator__`` renames it) and loads subclass attributes with the base
    (``with_polymorphic="*"``); every class's identity is its class name
    (``__mapper_args__ = {"polymorphic_identity": ...}`` overrides it).
    ``__discriminator__ = None`` opts out: no type attribute, no type filter (see
    ``shared_tables.without_discriminator``).
    """

    __discriminator__: ClassVar[str | None] = "$type"

    def __init_subclass__(cls, **kw: Any) -> None:
        if not cls.__dict__.get("__abstract__", False) and cls.__discriminator__ is not None:
            args = dict(cls.__dict__.get("__mapper_args__", {}))
            args.setdefault("polymorphic_identity", cls.__name__)
            if not any(base.__dict__.get("__mapper__") is not None for base in cls.__mro__[1:]):
                if "type_" not in cls.__dict__ and "polymorphic_on" not in args:
                    cls.type_ = mapped_column(cls.__discriminator__, String, nullable=False)
                args.setdefault("polymorphic_on", "type_")
                # A base-class query over a partition loads every kind's attributes in one request.
                args.setdefault("with_polymorphic", "*")
            cls.__mapper_args__ = args
        super().__init_subclass__(**kw)


def identities(mapper: Mapper) -> list[Any]:
    """Every discriminator value the class of ``mapper`` can load (itself and its subclasses)."""
    return [m.polymorphic_identity for m in mapper.self_and_descendants if m.polymorphic_identity is not None]


def inject_discriminator_filter(state: ORMExecuteState) -> None:
    """Filter base-class queries by the identities they can load; and tell the driver which
    identities are known, so that items of unknown kinds that still arrive (the filter turned
    off with ``dynamodb_discriminator_filter=False``, or ``from_statement()`` text) follow the
    ``dynamodb_unknown_type`` policy: "skip" (default), "raise" or "base"."""
    # select(Item).from_statement(text(...)): its text is sent as written, with no filter to
    # add, and the driver still sorts out the kinds no class maps
    textual = not state.is_select
    if textual and not (state.is_from_statement and not state.statement.is_dml):
        return
    # A count selects no entity (select(func.count()).select_from(Item), Query.count()): its
    # class is the statement's bind mapper, and it counts only the kinds it could load.
    mappers = selected_mappers(state.statement) or (
        state.all_mappers or ([state.bind_mapper] if state.bind_mapper is not None else [])
    )
    for mapper in mappers:
        column = discriminator_column(mapper)
        bind = None if column is None else dynamodb_bind(state, mapper)
        if bind is None:
            continue
        if not textual and capacity_warned(state, bind):
            # the filter on the kinds, this one or SQLAlchemy's of a subclass, is applied by the
            # driver, which counts the items of other kinds it reads (constructs.kinds_after_reading)
            state.statement = state.statement.options(kinds_after_reading(column.name))
        if mapper.inherits is not None:
            if not textual:  # SQLAlchemy filters a subclass's own kinds; text gets any of the root's
                continue
            mapper = mapper.base_mapper
        known = identities(mapper)
        state.update_execution_options(
            **{
                DISCRIMINATOR: (
                    column.name,
                    frozenset(known),
                    mapper.polymorphic_identity,
                    mapped_by_kind(mapper),
                )
            }
        )
        if not textual and state.execution_options.get(FILTER_OPTION, True) is not False:
            state.statement = state.statement.options(
                # a callable, not a column criterion: SQLAlchemy gives it the entity it lands on,
                # a with_polymorphic(..., aliased=True) included, whose ON clause would otherwise
                # name the table, not the alias
                with_loader_criteria(mapper, lambda entity: kinds_filter(entity), include_aliases=True)
            )


def capacity_warned(state: ORMExecuteState, bind: Any) -> bool:
    """Whether the CapacityWarning is on for the statement, in the order the execution context
    reads it (``options_in_force``): the statement's own option, else the execute() call's,
    else its connection's, else its engine's (create_engine's keyword)."""
    ratio = state.statement.get_execution_options().get(
        OPTION,
        state.execution_options.get(
            OPTION, bind.get_execution_options().get(OPTION, bind.dialect.dynamodb_capacity_warning)
        ),
    )
    return ratio is not None


def kinds_filter(entity: Any) -> Any:
    """``discriminator IN (the identities the entity's root class can load)``, in the entity's
    own columns (an alias's when the entity is one)."""
    mapper = entity.__mapper__.base_mapper  # the entity may come wrapped: no inspect()
    key = mapper.get_property_by_column(discriminator_column(mapper)).key
    return getattr(entity, key).in_(identities(mapper))
