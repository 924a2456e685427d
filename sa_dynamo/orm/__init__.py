"""Single-table features on top of the plain SQLAlchemy ORM, through public events only."""

from __future__ import annotations

from . import legacy_count, relationship_loads, shared_tables, subclass_loading  # noqa: F401 (listeners)
from .discriminator import SingleTable
from .item_collections import item_collection
from .key_templates import key_of

__all__ = ["SingleTable", "item_collection", "key_of", "legacy_count", "relationship_loads", "shared_tables"]
