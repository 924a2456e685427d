"""One-to-many inside an item collection: children share the parent's partition key and their
sort keys start with a prefix, so loading them is one Query on the partition, never a Scan.

Lazy loading needs nothing special. ``selectinload`` does: its parent's identity is (partition
key, sort key) while the join uses the partition key and a prefix, so SQLAlchemy cannot take its
"omit join" shortcut and would send a self-JOIN, which DynamoDB cannot run. A ``do_orm_execute``
listener answers that load instead with Queries on the children's partitions
(``"pk" IN [...] AND begins_with("sk", ?)``), regrouped per parent as SQLAlchemy expects.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, select
from sqlalchemy.engine import IteratorResult, Result
from sqlalchemy.engine.result import SimpleResultMetaData
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import ORMExecuteState, RelationshipProperty, Session, declared_attr, relationship
from sqlalchemy.orm.exc import UnmappedColumnError
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import UnaryExpression

from ..dialect.key_schema import key_schema
from ..limits import MAX_PARTITION_KEYS
from ..sqlalchemy_private import with_load_options_of
from . import discriminator  # noqa: F401  (its listener must run first; see _register)

INFO_KEY = "sa_dynamo.item_collection"


@dataclass(frozen=True)
class ItemCollection:
    """What ``relationship.info[INFO_KEY]`` records: the key attributes shared by parent and
    children (one physical table) and the children's sort-key prefix."""

    hash_key: str
    range_key: str | None
    sort_key_prefix: str | None


def item_collection(target: str, sort_key_prefix: str | None = None, **kwargs: Any) -> Any:
    """``orders = item_collection("Order", sort_key_prefix="ORDER#")`` on the parent class.

    The relationship is read-only (``viewonly=True``): children join the collection through
    their own keys (key templates), not through the parent's attribute. It lazy-loads and
    selectin-loads with Queries on the partition.
    """

    @declared_attr
    def collection(cls: type) -> Any:
        keys = key_schema(cls.__table__)
        hash_key = keys.hash_key.key
        range_key = keys.range_key.key if keys.range_key is not None else None
        join = f"{cls.__name__}.{hash_key} == remote(foreign({target}.{hash_key}))"
        if sort_key_prefix is not None:
            if range_key is None:
                raise ValueError(f"{cls.__name__}: sort_key_prefix needs a table with a sort key")
            join = (
                f"and_({join}, remote({target}.{range_key}).startswith({sort_key_prefix!r}, autoescape=True))"
            )
        options = dict(kwargs)
        options.setdefault("viewonly", True)
        options["info"] = {
            **options.get("info", {}),
            INFO_KEY: ItemCollection(hash_key, range_key, sort_key_prefix),
        }
        return relationship(target, primaryjoin=join, uselist=True, **options)

    return collection


def _selectin_load_of(state: ORMExecuteState) -> tuple[RelationshipProperty, ItemCollection] | None:
    """The item collection whose selectin load ``state`` is, when SQLAlchemy would JOIN for it."""
    if not state.is_select or not state.is_relationship_load:
        return None
    prop = state.loader_strategy_path[-1]
    if not isinstance(prop, RelationshipProperty) or INFO_KEY not in prop.info:
        return None
    # The selectin loader's one parameter; a lazy load binds the parent's values instead. A
    # single-column parent identity lets SQLAlchemy query the children directly: nothing to do.
    parameters = state.parameters
    if not isinstance(parameters, dict) or "primary_keys" not in parameters:
        return None
    if len(prop.parent.primary_key) < 2:
        return None
    return prop, prop.info[INFO_KEY]


def _carry_loader_options(replacement: Any, state: ORMExecuteState) -> Any:
    """Give ``replacement`` the loader options of the statement it replaces, at the same load path.

    Chained options (``selectinload(A.b).selectinload(B.c)``), relationship criteria
    (``A.b.and_(...)``) and propagated ``with_loader_criteria`` live on that statement, rooted at
    the top-level entity; dropping them would load the wrong rows. SQLAlchemy has no public way
    to read a statement's options or to say which relationship path a statement loads, so this
    does what its own relationship loaders do (see sqlalchemy_private.with_load_options_of).
    """
    return with_load_options_of(state.statement, replacement)


def _sort_key_functions(prop: RelationshipProperty) -> list[tuple[str, bool]]:
    """(attribute, descending) for the relationship's order_by, applied in Python: DynamoDB
    sorts each partition on its own, and ``pk IN [...]`` spans several."""
    if not prop.order_by:
        return []
    result = []
    for clause in prop.order_by:
        element, descending = clause, False
        if isinstance(clause, UnaryExpression) and clause.modifier in (operators.asc_op, operators.desc_op):
            element, descending = clause.element, clause.modifier is operators.desc_op
        try:
            attribute = prop.mapper.get_property_by_column(element).key
        except UnmappedColumnError as error:
            raise InvalidRequestError(
                f"selectinload({prop}): order_by {clause} is not a column of {prop.mapper.class_.__name__}; "
                "order an item collection by its attributes (usually the sort key)"
            ) from error
        result.append((attribute, descending))
    return result


def _ordered(children: list[Any], sort_keys: list[tuple[str, bool]]) -> list[Any]:
    for attribute, descending in reversed(sort_keys):  # stable sorts, last key first
        children.sort(key=lambda child: _none_first(getattr(child, attribute)), reverse=descending)
    return children


def _none_first(value: Any) -> tuple[bool, Any]:
    return (value is not None, value)


def _load_item_collection(
    state: ORMExecuteState, prop: RelationshipProperty, collection: ItemCollection
) -> Result[Any]:
    """Answer the selectin load with Queries over the parents' partitions.

    The result has the shape SQLAlchemy's selectin loader reads: per parent key, in order, one
    row per child: the parent's key columns (SQLAlchemy 2.1) or the key as one tuple (2.0's
    bundle), then the child.
    """
    descriptions = state.statement.column_descriptions
    entity = descriptions[-1]["entity"]  # the child entity, aliased for of_type()/polymorphic
    parent_keys: Sequence[tuple[Any, ...]] = state.parameters["primary_keys"]
    hash_index = [column.key for column in prop.parent.primary_key].index(collection.hash_key)
    partitions = list(dict.fromkeys(key[hash_index] for key in parent_keys))

    children: dict[Any, list[Any]] = defaultdict(list)
    for start in range(0, len(partitions), MAX_PARTITION_KEYS):
        chunk = partitions[start : start + MAX_PARTITION_KEYS]
        query = select(entity).where(getattr(entity, collection.hash_key).in_(chunk))
        if collection.sort_key_prefix is not None:
            query = query.where(
                getattr(entity, collection.range_key).startswith(collection.sort_key_prefix, autoescape=True)
            )
        query = _carry_loader_options(
            query.execution_options(**state.statement.get_execution_options()), state
        )
        for child in state.invoke_statement(statement=query).scalars():
            children[getattr(child, collection.hash_key)].append(child)

    sort_keys = _sort_key_functions(prop)
    for group in children.values():
        _ordered(group, sort_keys)
    bundled = len(descriptions) == 2  # 2.0 selects the parent key as one Bundle column
    rows = [
        (tuple(key), child) if bundled else (*key, child)
        for key in parent_keys
        for child in children.get(key[hash_index], ())
    ]
    return IteratorResult(SimpleResultMetaData([d["name"] for d in descriptions]), iter(rows))


def _answer_selectin_loads(state: ORMExecuteState) -> Result[Any] | None:
    """``do_orm_execute``: replace the JOIN of an item collection's selectin load."""
    found = _selectin_load_of(state)
    if found is None:
        return None
    return _load_item_collection(state, *found)


def _register() -> None:
    # After the discriminator listener (imported above), so that the statement whose options
    # are carried over already has its discriminator criteria; returning a result ends the
    # event chain, and invoke_statement() runs the replacement without re-running listeners.
    if not event.contains(Session, "do_orm_execute", _answer_selectin_loads):
        event.listen(Session, "do_orm_execute", _answer_selectin_loads)


_register()
