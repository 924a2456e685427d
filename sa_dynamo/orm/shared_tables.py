"""Shared-table groups: every class mapped onto one physical DynamoDB table must agree on it.

DynamoDB has one key schema per table, so classes sharing a table (one hierarchy, unrelated
roots, several MetaData objects) must agree on the partition and sort key names and their
S/N/B types, on the discriminator attribute, and must not reuse a discriminator value.
Checked when mappers configure, so a mistake surfaces at start-up, not on the first query; the
mappers configured before sa_dynamo was imported, whose events it never heard, are checked
before the first statement a DynamoDB engine runs.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from sqlalchemy import Table
from sqlalchemy.orm import Mapper

from ..dialect.key_schema import key_schema
from ..dialect.types import attribute_type
from ..exc import KeySchemaMismatchError
from ..sqlalchemy_private import all_registries
from .scope import is_dynamodb

_mappers: weakref.WeakSet[Mapper] = weakref.WeakSet()
_pending: weakref.WeakSet[Mapper] = weakref.WeakSet()


class Shape(NamedTuple):
    """What one class says about its physical table."""

    hash_key: tuple[str, str | None]
    range_key: tuple[str, str | None] | None
    discriminator: str | None


def physical_table(mapper: Mapper) -> Table | None:
    table = mapper.local_table
    return table if isinstance(table, Table) and table.schema is None else None


def discriminator_column(mapper: Mapper) -> Any:
    """The discriminator column of the mapper's hierarchy, or None."""
    return mapper.base_mapper.polymorphic_on


def without_discriminator(mapper: Mapper) -> bool:
    """Whether the class opted out of a discriminator (``__discriminator__ = None``, as EF Core's
    ``HasNoDiscriminator()``): its key patterns alone keep its items apart from the other kinds
    in the table, so it writes no type attribute and its queries get no type filter."""
    return getattr(mapper.class_, "__discriminator__", "") is None


def shape(mapper: Mapper) -> Shape:
    table = physical_table(mapper)
    keys = key_schema(table)
    hash_key = (keys.hash_key.name, attribute_type(keys.hash_key.type))
    range_key = None if keys.range_key is None else (keys.range_key.name, attribute_type(keys.range_key.type))
    column = discriminator_column(mapper)
    return Shape(hash_key, range_key, None if column is None else column.name)


def mappers_of(table: Table) -> list[Mapper]:
    """The configured classes mapped onto ``table``."""
    return [mapper for mapper in list(_mappers) if physical_table(mapper) is table]


def describe_key(part: str, value: Any) -> str:
    if value is None:
        return f"no {part}"
    if isinstance(value, tuple):
        return f"{part} {value[0]!r} ({value[1] or 'untyped'})"
    return f"{part} attribute {value!r}"


def validate(mappers: list[Mapper], only: set[str] | None = None) -> None:
    """Raise KeySchemaMismatchError for the first disagreement inside any shared-table group
    (or only inside the groups of the tables named in ``only``)."""
    groups: dict[str, list[Mapper]] = {}
    for mapper in mappers:
        table = physical_table(mapper)
        if table is not None and table.primary_key.columns and (only is None or table.name in only):
            groups.setdefault(table.name, []).append(mapper)
    for name, members in groups.items():
        members.sort(key=lambda m: m.class_.__qualname__)
        reference = members[0]
        expected = shape(reference)
        owners: dict[Any, Mapper] = {}
        for mapper in members:
            actual = shape(mapper)
            for part, field in (
                ("partition key", "hash_key"),
                ("sort key", "range_key"),
                ("discriminator", "discriminator"),
            ):
                if getattr(actual, field) != getattr(expected, field):
                    raise KeySchemaMismatchError(
                        f"{reference.class_.__name__} and {mapper.class_.__name__} are both mapped to DynamoDB "
                        f"table {name!r} but disagree: {describe_key(part, getattr(expected, field))} versus "
                        f"{describe_key(part, getattr(actual, field))}. Classes sharing a table must use the same "
                        "key attributes, key types and discriminator attribute"
                    )
            if (
                mapper is not reference
                and expected.discriminator is None
                and not (without_discriminator(mapper) and without_discriminator(reference))
            ):
                raise _no_discriminator(name, reference, mapper)
            identity = mapper.polymorphic_identity
            if identity is None:
                continue
            other = owners.setdefault(identity, mapper)
            if other is not mapper and other.class_ is not mapper.class_:
                raise KeySchemaMismatchError(
                    f"{other.class_.__name__} and {mapper.class_.__name__} both use discriminator value "
                    f"{identity!r} in DynamoDB table {name!r}: each class sharing a table needs its own value"
                )


def _no_discriminator(table: str, one: Mapper, other: Mapper) -> KeySchemaMismatchError:
    """Two classes on one table with nothing on an item to say which of them it is."""
    first, second = one.class_.__name__, other.class_.__name__
    if one.base_mapper is other.base_mapper:
        root = one.base_mapper.class_.__name__
        return KeySchemaMismatchError(
            f"{first} and {second} (one hierarchy, root {root}) share DynamoDB table {table!r} without a "
            f"discriminator: nothing on an item says which class loads it, so a query for one would load "
            f"the other's items as its own. Give {root} polymorphic_on (or derive it from "
            "sa_dynamo.SingleTable), or, when their key patterns never overlap, say so with "
            f"__discriminator__ = None on {root}"
        )
    return KeySchemaMismatchError(
        f"{first} and {second} share DynamoDB table {table!r} without a discriminator: give their "
        "hierarchies polymorphic_on a common attribute (or use sa_dynamo.SingleTable), or, when their key "
        "patterns never overlap, say so with __discriminator__ = None on both"
    )


def collect(mapper: Mapper, class_: type) -> None:
    _mappers.add(mapper)
    _pending.add(mapper)


def adopt_configured() -> None:
    """Collect the mappers configured before sa_dynamo listened (it was imported after them):
    checked before the first DynamoDB statement (``before_statement``)."""
    for registry in all_registries():
        for mapper in registry.mappers:
            if mapper.configured and mapper not in _mappers:
                collect(mapper, mapper.class_)


def validate_configured() -> None:
    """Check the groups that newly configured mappers joined; a group that disagrees stays to
    be checked again, so no DynamoDB statement runs while it does (until its registry is
    disposed)."""
    for gone in [m for m in _mappers if m not in m.registry.mappers]:  # its registry was disposed
        _mappers.discard(gone)
        _pending.discard(gone)
    tables = {table.name for table in map(physical_table, list(_pending)) if table is not None}
    validate(list(_mappers), only=tables)
    _pending.clear()


def before_statement(
    conn: Any, statement: Any, multiparams: Any, params: Any, execution_options: Any
) -> None:
    """Before a DynamoDB statement: the groups not checked yet (mappers configured before
    sa_dynamo was imported), once; afterwards only an empty set is looked at."""
    if _pending and is_dynamodb(conn):
        validate_configured()
