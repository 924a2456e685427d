"""One-to-many inside an item collection: children share the parent's partition key and their
sort keys start with a prefix, so loading them is one Query on the partition, never a Scan."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import declared_attr, relationship

from ..dialect.keys import key_schema


def item_collection(target: str, sort_key_prefix: str | None = None, **kwargs: Any) -> Any:
    """``orders = item_collection("Order", sort_key_prefix="ORDER#")`` on the parent class.

    The relationship is read-only (``viewonly=True``): children join the collection through
    their own keys (key templates), not through the parent's attribute.
    """

    @declared_attr
    def collection(cls: type) -> Any:
        keys = key_schema(cls.__table__)
        parent = f"{cls.__name__}.{keys.hash_key.key}"
        join = f"{parent} == remote(foreign({target}.{keys.hash_key.key}))"
        if sort_key_prefix is not None:
            if keys.range_key is None:
                raise ValueError(f"{cls.__name__}: sort_key_prefix needs a table with a sort key")
            join = f"and_({join}, remote({target}.{keys.range_key.key}).startswith({sort_key_prefix!r}))"
        kwargs.setdefault("viewonly", True)
        return relationship(target, primaryjoin=join, uselist=True, **kwargs)

    return collection
