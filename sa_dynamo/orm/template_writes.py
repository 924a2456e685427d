"""Key templates on writes that bypass the flush: ``update(Order).values(status=...)``,
``session.execute(update(Order), [...])``, ``insert(Order)``, through a Session or a Connection.

A flush fills templated keys from the objects (key_templates.py); these writes carry their
values in the statement and its parameters instead, so the keys derived from what they write
are added to them here: ``status="SHIPPED"`` also sets ``gsi1pk = "STATUS#SHIPPED"``, or the
order would stay listed under its old status. A source the write changes but whose template
also reads a source it neither sets nor pins by equality in the WHERE cannot be rendered, and a
key that would move cannot be written (DynamoDB keys are immutable): both are refused before
anything is sent. A plain Table write that sets a source without the key derived from it is
refused too, since the Table cannot say which class, and so which templates, an item has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Result
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import Mapper, ORMExecuteState
from sqlalchemy.sql import elements
from sqlalchemy.sql.dml import Insert, Update, ValuesBase

from ..sqlalchemy_private import dml_mapper, dml_values, unit_of_work_flush, where_criteria
from .key_templates import KeyTemplate, as_stored, primary_key_attributes, templates
from .scope import is_dynamodb, on_dynamodb
from .shared_tables import mappers_of
from .template_queries import EMPTY, read_where

_UNKNOWN = object()  # a value the write sets by an SQL expression


def _written(mapper: Mapper, statement: ValuesBase, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What one execution writes, by attribute: the statement's values (a bind parameter's value
    from ``parameters`` when they name it), then the parameters that name an attribute or a
    column (an executemany's rows, the ORM's bulk writes)."""
    by_column = {column.key: prop.key for prop in mapper.column_attrs for column in prop.columns}
    by_column.update((key, key) for key in mapper.column_attrs)
    written: dict[str, Any] = {}
    binds = set()
    for target, value in dml_values(statement).items():
        key = by_column.get(getattr(target, "key", target))
        if isinstance(value, elements.BindParameter):
            binds.add(value.key)
            value = parameters.get(value.key, value.effective_value)
        else:
            value = _UNKNOWN
        if key is not None:
            written[key] = value
    for name, value in parameters.items():
        if name not in binds and name in by_column:
            written[by_column[name]] = value
    return written


def _derived(
    mapper: Mapper, statement: ValuesBase, parameters: Mapping[str, Any], found: dict[str, KeyTemplate]
) -> dict[str, Any]:
    """The templated attributes one execution must set, by attribute."""
    written = _written(mapper, statement, parameters)
    keys = primary_key_attributes(mapper)
    name = mapper.class_.__name__
    derived = {}
    if isinstance(statement, Insert):
        for template in found.values():
            value = template.render(as_stored(mapper, {s: written.get(s) for s in template.sources}))
            if value is not None or template.target not in keys:
                derived[template.target] = value
        return _checked(name, found, written, derived)
    # (the ORM's bulk UPDATE by primary key writes each row's key values: they are its WHERE)
    known = {**read_where(where_criteria(statement), mapper, parameters).values, **written}
    for template in found.values():
        changed = [s for s in template.sources if s in written and s not in keys]
        if not changed:
            continue
        missing = [s for s in template.sources if known.get(s, _UNKNOWN) is _UNKNOWN]
        if missing:
            raise InvalidRequestError(
                f"this UPDATE of {name} sets {', '.join(changed)}, from which the key template "
                f"{template.text!r} builds {template.target}, but cannot render it: "
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} neither set to a value nor "
                f"pinned by == in the WHERE. Add {missing[0]} to the WHERE (or to the values), or change the "
                "objects in a Session, whose flush renders their keys"
            )
        value = template.render(as_stored(mapper, {s: known[s] for s in template.sources}))
        if template.target in keys:
            current = known.get(template.target, _UNKNOWN)
            if current is _UNKNOWN or current != value:
                raise InvalidRequestError(
                    f"this UPDATE of {name} sets {', '.join(changed)}, from which the key template "
                    f"{template.text!r} builds the key attribute {template.target}: it would move the item. "
                    "DynamoDB keys are immutable: delete the item and insert it under its new key"
                )
            continue
        derived[template.target] = value
    return _checked(name, found, written, derived)


def _checked(name: str, found: dict, written: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
    """The derived values the write does not already set; one it sets otherwise is refused."""
    for target, value in list(derived.items()):
        if target in written:
            if written[target] != value:
                raise InvalidRequestError(
                    f"this write of {name} sets {target}, which its key template {found[target].text!r} "
                    f"builds from {', '.join(found[target].sources)}, to another value: leave {target} out "
                    "of the values and the template fills it in"
                )
            del derived[target]
    return derived


def _mapper_of(statement: Any) -> Mapper | None:
    """The mapped class an INSERT/UPDATE writes (``update(Order)``), None for a Table's."""
    return dml_mapper(statement) if isinstance(statement, (Insert, Update)) else None


def with_derived_keys(
    mapper: Mapper, statement: Any, parameters: Any, by_attribute: bool
) -> tuple[Any, list[dict[str, Any]] | None]:
    """``statement`` with the templated keys one execution implies as values, or, for an
    executemany, the keys each row implies (to add to the row: by attribute for the ORM's bulk
    writes, by column key for Core); None when there are no rows."""
    found = templates(mapper.class_)
    if not found:
        return statement, None
    if isinstance(parameters, list):
        rows = [_derived(mapper, statement, row, found) for row in parameters]
        if by_attribute:
            return statement, rows
        return statement, [{mapper.columns[target].key: v for target, v in row.items()} for row in rows]
    derived = _derived(mapper, statement, parameters or EMPTY, found)
    if derived:
        statement = statement.values({mapper.columns[target]: value for target, value in derived.items()})
    return statement, None


def _refuse_stale_keys(table: Table, statement: Any, parameters: Any) -> None:
    """A Table's INSERT/UPDATE that sets a template source of a class mapped to it without the
    key derived from it."""
    rows = parameters if isinstance(parameters, list) else [parameters or EMPTY]
    for mapper in mappers_of(table):
        for template in templates(mapper.class_).values():
            for row in rows:
                written = _written(mapper, statement, row)
                changed = [s for s in template.sources if s in written]
                if changed and template.target not in written:
                    raise InvalidRequestError(
                        f"this write to table {table.name!r} sets {', '.join(changed)}, from which "
                        f"{mapper.class_.__name__}'s key template {template.text!r} builds "
                        f"{template.target}, but not {template.target}: write through the class "
                        f"({type(statement).__name__.lower()}({mapper.class_.__name__}), whose templates fill "
                        f"it in), or set {template.target} too"
                    )


def session_writes(state: ORMExecuteState) -> Result[Any] | None:
    """``session.execute(update(Order)...)`` and the ORM's bulk INSERT/UPDATE: the derived keys
    join the statement (or each row) before the ORM runs it and synchronizes its objects."""
    if not (state.is_update or state.is_insert):
        return None
    mapper = _mapper_of(state.statement)
    if mapper is None or not on_dynamodb(state, mapper):
        return None
    statement, rows = with_derived_keys(mapper, state.statement, state.parameters, True)
    if rows is None or not any(rows):
        state.statement = statement
        return None
    return state.invoke_statement(statement=statement, params=rows)  # merged into each row


def connection_writes(
    conn: Any, statement: Any, multiparams: Any, params: Any, execution_options: Any
) -> tuple[Any, Any, Any]:
    """``connection.execute(update(Order)...)``; a Table's write is checked (the ORM's flush
    and bulk writes, already filled in, are left alone)."""
    if not isinstance(statement, (Insert, Update)) or not is_dynamodb(conn):
        return statement, multiparams, params
    if unit_of_work_flush({**statement.get_execution_options(), **execution_options}):
        return statement, multiparams, params
    # one execution's parameters come as ``params``, an executemany's rows as ``multiparams``
    parameters = list(multiparams) if multiparams else params
    mapper = _mapper_of(statement)
    if mapper is None:
        _refuse_stale_keys(statement.table, statement, parameters)
        return statement, multiparams, params
    statement, rows = with_derived_keys(mapper, statement, parameters, False)
    if rows is None:
        return statement, multiparams, params
    return statement, [{**row, **derived} for row, derived in zip(parameters, rows, strict=True)], {}
