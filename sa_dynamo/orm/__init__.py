"""Single-table features on top of the plain SQLAlchemy ORM, through public events only."""

from __future__ import annotations

from . import (  # noqa: F401 (listeners)
    legacy_count,
    relationship_loads,
    shared_tables,
    subclass_loading,
    template_joins,
    template_queries,
    template_writes,
)
from .attribute_bags import attribute_bag
from .discriminator import SingleTable
from .item_collections import item_collection
from .key_templates import computed_key, key_of

__all__ = [
    "SingleTable",
    "attribute_bag",
    "computed_key",
    "item_collection",
    "key_of",
    "legacy_count",
    "relationship_loads",
    "shared_tables",
]
