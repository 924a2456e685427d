"""Single-table features on top of the plain SQLAlchemy ORM, through public events only."""

from __future__ import annotations

from . import schema
from .collections import item_collection
from .discriminator import SingleTable
from .keys import key_of

__all__ = ["SingleTable", "item_collection", "key_of", "schema"]
