"""Compare the models with the live DynamoDB tables: what ``sa-dynamo check`` reports.

DynamoDB cannot change a table's key schema, nor an index's key or projection, in place, so a
drift between the models and the tables surfaces late (a failed write, a query that silently
finds nothing). The expected side is the CreateTable request the models would send
(``create_table_request``) and the live side is DescribeTable; both are in DynamoDB's own shape,
so one reader turns either into what is compared. Besides the drift, it lists what the models
alone get wrong for DynamoDB: an index that cannot filter by kind, a relationship whose loads
scan. A table with unique constraints is read whole (a consistent Scan) to find rows whose guard
item is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, MetaData, Table
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Mapper, registry

from . import dbapi
from .dbapi import control_plane, guard_upkeep
from .dbapi.guard_names import guard_table
from .dialect.ddl import create_table_request, render_call
from .dialect.key_schema import projects
from .dialect.write_rules import unique_constraints
from .orm.relationship_loads import many_to_many_fix, scanning_relationships
from .orm.shared_tables import describe_key, discriminator_column, physical_table
from .sqlalchemy_private import declarative_registry

_Key = tuple[str, str]  # attribute name, S/N/B


class Difference(NamedTuple):
    """One way a live table differs from the models; ``message`` says what to do about it."""

    table: str
    index: str | None
    attribute: str | None
    message: str

    def __str__(self) -> str:
        return self.message


class _Index(NamedTuple):
    local: bool
    hash_key: _Key
    range_key: _Key | None
    projection: str
    include: tuple[str, ...]

    @property
    def kind(self) -> str:
        return "local" if self.local else "global"

    @property
    def projected(self) -> str:
        return f"INCLUDE {list(self.include)!r}" if self.include else self.projection


class _Table(NamedTuple):
    hash_key: _Key
    range_key: _Key | None
    indexes: dict[str, _Index]


def _read(table: dict[str, Any]) -> _Table:
    """A CreateTable request or a DescribeTable result, as the facts compared."""
    types = {a["AttributeName"]: a["AttributeType"] for a in table["AttributeDefinitions"]}

    def keys(schema: list[dict[str, str]]) -> tuple[_Key, _Key | None]:
        roles = {k["KeyType"]: (k["AttributeName"], types[k["AttributeName"]]) for k in schema}
        return roles["HASH"], roles.get("RANGE")

    indexes = {}
    for local, field in ((False, "GlobalSecondaryIndexes"), (True, "LocalSecondaryIndexes")):
        for entry in table.get(field, []):
            projection = entry["Projection"]
            indexes[entry["IndexName"]] = _Index(
                local,
                *keys(entry["KeySchema"]),
                projection["ProjectionType"],
                tuple(projection.get("NonKeyAttributes", ())),
            )
    return _Table(*keys(table["KeySchema"]), indexes)


def read_models(models: Any) -> tuple[MetaData, frozenset[Mapper]]:
    """The MetaData and mappers of a declarative base (SQLModel's too), a registry or a bare
    MetaData."""
    if isinstance(models, MetaData):
        return models, frozenset()
    found = getattr(models, "registry", models)
    if not isinstance(found, registry):
        found = declarative_registry(models)
    if not isinstance(found, registry):
        raise sa_exc.ArgumentError(
            f"{models!r} is not a declarative base, a registry or a MetaData: pass the models' "
            "declarative base (or their MetaData)"
        )
    # Configuring also validates the shared-table groups: a mismatch there is reported first.
    found.configure(cascade=True)
    return found.metadata, found.mappers


@contextmanager
def _dbapi_connection(bind: Engine | Connection) -> Iterator[dbapi.Connection]:
    if bind.dialect.name != "dynamodb":
        raise sa_exc.ArgumentError(
            f"check compares with DynamoDB, not {bind.dialect.name}: pass a dynamodb:// bind"
        )
    if isinstance(bind, Connection):
        yield bind.connection.dbapi_connection
        return
    with bind.connect() as connection:
        yield connection.connection.dbapi_connection


def _describe_table(connection: dbapi.Connection, name: str) -> dict[str, Any] | None:
    try:
        return control_plane.describe_table(connection.transport, name)
    except dbapi.Error as exc:
        call = render_call("DescribeTable", {"TableName": name})
        raise sa_exc.DBAPIError.instance(call, None, exc, dbapi.Error) from exc


def _keys(subject: str, model: _Table | _Index, live: _Table | _Index, fix: str) -> Iterator[tuple[str, str]]:
    """(attribute, message) for each key role on which the models and DynamoDB disagree."""
    for role, field in (("partition key", "hash_key"), ("sort key", "range_key")):
        expected, actual = getattr(model, field), getattr(live, field)
        if expected != actual:
            yield (
                (expected or actual)[0],
                f"{subject} has {describe_key(role, expected)} in the models but {describe_key(role, actual)} "
                f"in DynamoDB: {fix}",
            )


def _recreate(*indexes: _Index) -> str:
    if any(index.local for index in indexes):
        return "recreate the table (a local index is created and removed only with its table)"
    return "drop the index and create it again (Index.drop, Index.create)"


def _declaration(name: str, index: _Index) -> str:
    """The Index(...) that declares a live index in the models."""
    args = [repr(name), *(repr(key[0]) for key in (index.hash_key, index.range_key) if key)]
    args.append(f"dynamodb_projection={index.projection!r}")
    if index.include:
        args.append(f"dynamodb_include={list(index.include)!r}")
    if index.local:
        args.append("dynamodb_local=True")
    return f"Index({', '.join(args)})"


def _compare_index(table: str, name: str, model: _Index | None, live: _Index | None) -> Iterator[Difference]:
    subject = f"table {table}: index {name}"
    if live is None:
        fix = _recreate(model) if model.local else "create it (Index.create or a migration)"
        yield Difference(table, name, None, f"{subject} ({model.kind}) is missing in DynamoDB: {fix}")
        return
    if model is None:
        fix = "recreate the table without it" if live.local else "drop it (Index.drop)"
        yield Difference(
            table,
            name,
            None,
            f"{subject} ({live.kind}) exists in DynamoDB but not in the models: declare it as "
            f"{_declaration(name, live)} or {fix}",
        )
        return
    fix = _recreate(model, live)
    if model.local != live.local:
        yield Difference(
            table, name, None, f"{subject} is {model.kind} in the models but {live.kind} in DynamoDB: {fix}"
        )
    for attribute, message in _keys(subject, model, live, fix):
        yield Difference(table, name, attribute, message)
    if (model.projection, set(model.include)) != (live.projection, set(live.include)):
        changed = set(model.include) ^ set(live.include)
        attribute = next((a for a in (*model.include, *live.include) if a in changed), None)
        yield Difference(
            table,
            name,
            attribute,
            f"{subject} projects {model.projected} in the models but {live.projected} in DynamoDB: "
            f"a projection cannot change in place; {fix}",
        )


def _compare_discriminator(table: Table, expected: _Table, discriminator: str) -> Iterator[Difference]:
    """Base-class queries filter by kind, so an index they may use must project the discriminator."""
    for index in sorted(table.indexes, key=lambda i: i.name or ""):
        if projects(index, {discriminator}):
            continue
        declared = expected.indexes[index.name]
        change = (
            f"dynamodb_include={[*declared.include, discriminator]!r}"
            if declared.include
            else f"dynamodb_projection='INCLUDE', dynamodb_include={[discriminator]!r}"
        )
        redo = "the table" if declared.local else "the index"
        yield Difference(
            table.name,
            index.name,
            discriminator,
            f"table {table.name}: index {index.name} projects {declared.projected} and does not include "
            f"the discriminator {discriminator!r}, so base-class queries on it cannot filter by kind: "
            f"declare {change} and recreate {redo}",
        )


def _compare_table(
    table: Table, live: dict[str, Any] | None, discriminator: str | None
) -> Iterator[Difference]:
    expected = _read(create_table_request(table))
    if live is None:
        yield Difference(
            table.name,
            None,
            None,
            f"table {table.name} does not exist in DynamoDB: create it (metadata.create_all(engine) "
            "creates every missing table)",
        )
    else:
        actual = _read(live)
        fix = "a table's key schema cannot change; recreate the table or change the models to match"
        for attribute, message in _keys(f"table {table.name}", expected, actual, fix):
            yield Difference(table.name, None, attribute, message)
        for name in sorted(expected.indexes.keys() | actual.indexes.keys()):
            yield from _compare_index(table.name, name, expected.indexes.get(name), actual.indexes.get(name))
    if discriminator is not None:
        yield from _compare_discriminator(table, expected, discriminator)


def check(metadata_or_base: Any, bind: Engine | Connection) -> list[Difference]:
    """Every difference between the models' tables and the live tables behind ``bind``.

    ``metadata_or_base`` is a declarative base (or its registry), whose mappers also say which
    tables hold several kinds of item, or a MetaData, which has tables only.
    """
    metadata, mappers = read_models(metadata_or_base)
    if not metadata.tables:
        raise sa_exc.ArgumentError(
            f"{metadata_or_base!r} declares no tables: pass the base of modules that define models, "
            "or import those modules in the one named"
        )
    discriminators: dict[str, str] = {}
    for mapper in mappers:
        table, column = physical_table(mapper), discriminator_column(mapper)
        if table is not None and column is not None:
            discriminators[table.name] = column.name
    differences: list[Difference] = []
    with _dbapi_connection(bind) as connection:
        for table in sorted(metadata.tables.values(), key=lambda t: t.name):
            live = _describe_table(connection, table.name)
            differences += _compare_table(table, live, discriminators.get(table.name))
            if live is not None:
                differences += _compare_guards(connection, table)
    differences += _scanning_relationships(mappers)
    differences += _many_to_many(mappers)
    return differences


def _compare_guards(connection: dbapi.Connection, table: Table) -> Iterator[Difference]:
    """Each unique constraint's guard items against the rows (a consistent Scan of the table):
    a row without its guard can be joined by a duplicate, and a missing guard table fails
    every write."""
    transport = connection.transport
    constraints = unique_constraints(table)
    if constraints and _describe_table(connection, guard_table(table.name)) is None:
        yield Difference(
            table.name,
            None,
            None,
            f"table {table.name} has unique constraints but no guard table {guard_table(table.name)}, so "
            "every write to it fails: add each constraint in a migration (op.create_unique_constraint "
            "creates the table and writes the guards of the rows stored)",
        )
        return
    for columns in constraints:
        names = ", ".join(columns)
        try:
            missing = guard_upkeep.missing_guards(transport, table.name, columns)
        except dbapi.IntegrityError as error:
            yield Difference(
                table.name, None, columns[0], f"{error.args[0].split('. Nothing')[0]}: fix those rows"
            )
            continue
        if missing:
            yield Difference(
                table.name,
                None,
                columns[0],
                f"{_count(len(missing), 'row')} of {table.name} without a guard item for unique ({names}): "
                "a duplicate of such a value is not refused. Rows written around sa_dynamo or before the "
                "constraint lack one; write the guards with op.create_unique_constraint in a migration",
            )


def _many_to_many(mappers: frozenset[Mapper]) -> Iterator[Difference]:
    """Relationships through a link table (``secondary=``, SQLModel's ``link_model``): their
    loads select from the target and the link table at once, a join no key reaches."""
    for mapper in sorted(mappers, key=lambda m: m.class_.__name__):
        for prop in mapper.relationships:
            if prop.parent is mapper and prop.secondary is not None:
                yield Difference(
                    prop.secondary.name,
                    None,
                    None,
                    f"relationship {prop} loads through the link table {prop.secondary.name}, a join "
                    f"DynamoDB cannot run, so its loads are refused: {many_to_many_fix(prop)}",
                )


def _scanning_relationships(mappers: frozenset[Mapper]) -> Iterator[Difference]:
    for prop, columns in scanning_relationships(mappers):
        table = columns[0].table.name
        names = " and ".join(column.name for column in columns)
        yield Difference(
            table,
            None,
            columns[0].name,
            f"relationship {prop} loads by {table}.{names}, which is not the partition key of the "
            "table or of a global index, so each lazy load and selectinload scans the whole table "
            f"{table}: declare {columns[0].name} with index=True (a global secondary index; "
            "Index.create or a migration creates it on the live table)",
        )


def summary(differences: list[Difference]) -> str:
    """The last line of ``sa-dynamo check``."""
    if not differences:
        return "no differences: DynamoDB matches the models"
    tables = len({d.table for d in differences})
    return f"{_count(len(differences), 'difference')} in {_count(tables, 'table')}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
