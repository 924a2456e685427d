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

from sqlalchemy import select
from sqlalchemy.engine import Result
from sqlalchemy.orm import ORMExecuteState, RelationshipProperty, declared_attr, relationship

from ..dbapi.limits import MAX_PARTITION_KEYS
from ..dialect.key_schema import key_schema
from .scope import on_dynamodb
from .selectin_results import replacement_query, selectin_result

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
    if len(prop.parent.primary_key) < 2 or not on_dynamodb(state, prop.mapper):
        return None
    return prop, prop.info[INFO_KEY]


def _load_item_collection(
    state: ORMExecuteState, prop: RelationshipProperty, collection: ItemCollection
) -> Result[Any]:
    """Answer the selectin load with Queries over the parents' partitions."""
    entity = state.statement.column_descriptions[-1][
        "entity"
    ]  # the child entity, aliased for of_type()/polymorphic
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
        query = replacement_query(state, query)
        for child in state.invoke_statement(statement=query).scalars():
            children[getattr(child, collection.hash_key)].append(child)

    return selectin_result(state, prop, parent_keys, lambda key: children.get(key[hash_index], ()))


def answer_selectin_loads(state: ORMExecuteState) -> Result[Any] | None:
    """``do_orm_execute``: replace the JOIN of an item collection's selectin load."""
    found = _selectin_load_of(state)
    if found is None:
        return None
    return _load_item_collection(state, *found)
