"""Relationships joined on the sources of key templates, loaded by Query (never a JOIN or a Scan).

``relationship(primaryjoin="Group.group_id == remote(foreign(Membership.group_id))")`` joins on
``group_id``; when a template of the target built from the joined attributes is the partition
key of its table or of a global index (``"GROUP#{group_id}"``), a load pins that partition. A
lazy load binds the parent's values, and template_queries.py turns them into the key condition.
A ``selectinload()`` would JOIN (SQLAlchemy selects the children by the parents' identity, which
is their key, not the joined attributes): a ``do_orm_execute`` listener answers it instead with
Queries over the parents' partitions (at most 50 per Query), regrouped per parent.

This is how a many-to-many is stored in DynamoDB: one membership item per pair, an association
object whose two many-to-one sides and their collections are such relationships (see
docs/modeling.md); ``secondary=`` would need a JOIN.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Result
from sqlalchemy.orm import ORMExecuteState, RelationshipProperty
from sqlalchemy.sql.selectable import Join

from ..dbapi.limits import MAX_PARTITION_KEYS
from ..dialect.key_schema import index_key_schema, key_schema
from .item_collections import INFO_KEY as ITEM_COLLECTION
from .key_templates import templates
from .scope import on_dynamodb
from .selectin_results import replacement_query, selectin_result
from .template_queries import key_conditions


def _pairs(prop: RelationshipProperty) -> list[tuple[str, str]]:
    """(parent attribute, child attribute) for each equality of the join."""
    return [
        (prop.parent.get_property_by_column(local).key, prop.mapper.get_property_by_column(remote).key)
        for local, remote in prop.local_remote_pairs
    ]


def joined_on_templates(prop: RelationshipProperty) -> bool:
    """Whether every load of ``prop`` pins a partition key of its target (of the table or of a
    global index) through a template built from the attributes the join compares."""
    if prop.secondary is not None or ITEM_COLLECTION in prop.info:
        return False
    found = templates(prop.mapper.class_)
    if not found:
        return False
    try:
        joined = {child for _, child in _pairs(prop)}
    except Exception:  # a join on something that is no mapped column: not ours to answer
        return False
    table = prop.mapper.local_table
    schemas = [key_schema(table)] + [
        index_key_schema(i) for i in table.indexes if not i.dialect_options["dynamodb"]["local"]
    ]
    by_column = {column.name: p.key for p in prop.mapper.column_attrs for column in p.columns}
    for keys in schemas:
        template = found.get(by_column.get(keys.hash_key.name))
        if template is not None and template.sources and set(template.sources) <= joined:
            return True
    return False


def _joined_selectin_load(state: ORMExecuteState) -> RelationshipProperty | None:
    """The relationship whose selectin load ``state`` is, when SQLAlchemy sends it as a JOIN."""
    if not state.is_select or not state.is_relationship_load:
        return None
    prop = state.loader_strategy_path[-1]
    parameters = state.parameters
    if not isinstance(prop, RelationshipProperty) or not isinstance(parameters, dict):
        return None
    if (
        "primary_keys" not in parameters
        or not joined_on_templates(prop)
        or not on_dynamodb(state, prop.mapper)
    ):
        return None
    if not any(isinstance(source, Join) for source in state.statement.get_final_froms()):
        return None  # selected by the joined attributes directly: template_queries.py keys it
    return prop


def _load(state: ORMExecuteState, prop: RelationshipProperty) -> Result[Any]:
    """The children of every parent, with one Query per 50 partitions."""
    entity = state.statement.column_descriptions[-1]["entity"]
    pairs = _pairs(prop)
    session = state.session
    parent_keys = [key if isinstance(key, tuple) else (key,) for key in state.parameters["primary_keys"]]
    joined_values: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for key in parent_keys:
        parent = session.identity_map.get(session.identity_key(prop.parent.class_, key))
        if parent is not None:  # the loader's parents were loaded a moment ago
            joined_values[key] = tuple(getattr(parent, attribute) for attribute, _ in pairs)
    wanted = [values for values in dict.fromkeys(joined_values.values()) if None not in values]

    children: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for start in range(0, len(wanted), MAX_PARTITION_KEYS):
        chunk = wanted[start : start + MAX_PARTITION_KEYS]
        query = select(entity).where(
            *(
                getattr(entity, child).in_(list(dict.fromkeys(values[i] for values in chunk)))
                for i, (_, child) in enumerate(pairs)
            )
        )
        query = query.where(*key_conditions(prop.mapper, query.whereclause))
        for child in state.invoke_statement(statement=replacement_query(state, query)).scalars():
            children[tuple(getattr(child, attribute) for _, attribute in pairs)].append(child)

    return selectin_result(state, prop, parent_keys, lambda key: children.get(joined_values.get(key), ()))


def answer_selectin_loads(state: ORMExecuteState) -> Result[Any] | None:
    """``do_orm_execute``: replace the JOIN of a selectin load with Queries."""
    prop = _joined_selectin_load(state)
    return None if prop is None else _load(state, prop)
