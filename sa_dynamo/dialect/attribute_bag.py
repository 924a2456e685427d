"""The column type of an attribute bag: every attribute of an item that no other column maps.

A bag is never stored under its own name. Reading a table through it needs ``SELECT *`` (the
compiler writes that, and the driver hands the attributes the other columns do not name to the
bag's column as one dict); writing it writes its entries as top-level attributes: an INSERT
carries every entry, an UPDATE SETs the entries that changed and REMOVEs those deleted (a bag
value that tracks its changes says which, ``changes()``; a plain dict SETs every entry).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlalchemy import types as sqltypes


class BagWrite(NamedTuple):
    """What a write does to a bag's attributes."""

    set: dict[str, Any]
    remove: tuple[str, ...]


class AttributeBag(sqltypes.UserDefinedType):
    """The type of an attribute-bag column (``sa_dynamo.attribute_bag()``)."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "M"

    @property
    def python_type(self) -> type:
        return dict

    def bind_processor(self, dialect: Any) -> Any:
        def process(value: Any) -> BagWrite:
            if value is None:
                return BagWrite({}, ())
            changes = getattr(value, "changes", None)
            if changes is not None:
                changed, removed = changes()
                return BagWrite(dict(changed), tuple(removed))
            return BagWrite(dict(value), ())

        return process

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        def process(value: Any) -> dict[str, Any]:
            return dict(value or {})

        return process

    def literal_processor(self, dialect: Any) -> None:
        return None


def is_bag(column: Any) -> bool:
    return isinstance(getattr(column, "type", None), AttributeBag)
