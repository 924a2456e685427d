"""Single-table features on top of the plain SQLAlchemy ORM, through public events only
(registered in one place, listeners.py)."""

from __future__ import annotations

from . import listeners
from .attribute_bags import attribute_bag
from .discriminator import SingleTable
from .item_collections import item_collection
from .key_templates import computed_key, key_of

listeners.register()

__all__ = ["SingleTable", "attribute_bag", "computed_key", "item_collection", "key_of"]
