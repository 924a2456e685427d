"""Attribute bags (DynamoMapper's): ``extra: Mapped[dict] = sa_dynamo.attribute_bag()``.

An item carries attributes no column maps (written by another service or a newer model). A bag
holds them as a dict, so they can be read, changed and written back: loading fills it with every
attribute the class does not map (the query becomes ``SELECT *``, as ``explain`` shows), and a
flush writes the entries that changed and REMOVEs the deleted ones, leaving the others alone.
The dict remembers what changed since it was loaded or flushed; a key that a column of the class
maps is refused, since it would overwrite that attribute.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Mapper, attributes, mapped_column

from ..dialect.attribute_bag import AttributeBag, is_bag
from ..exc import AttributeBagError
from .scope import is_dynamodb

INFO_KEY = "sa_dynamo.attribute_bag"


def attribute_bag(name: str | None = None) -> Any:
    """A mapped attribute holding every attribute of the item that no column of the class maps.
    ``name`` is the column's name in SQL (never stored in DynamoDB; the attribute's by default)."""
    args = (name,) if name is not None else ()
    return mapped_column(*args, type_=AttributeBag(), nullable=True, info={INFO_KEY: True})


class Bag(dict):
    """A dict that remembers which entries changed and which were deleted since it was loaded
    or last flushed, and tells its object's session that it changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._changed: set[str] = set(self)
        self._removed: set[str] = set()
        self._owner: tuple[weakref.ref, str] | None = None

    def changes(self) -> tuple[dict[str, Any], list[str]]:
        """The entries to SET and the names to REMOVE at the next write."""
        changed = {name: value for name, value in self.items() if name in self._changed}
        return changed, sorted(self._removed - set(self))

    def flushed(self) -> None:
        self._changed, self._removed = set(), set()

    def _touch(self, *names: str, removed: bool = False) -> None:
        (self._removed if removed else self._changed).update(names)
        if self._owner is not None and (target := self._owner[0]()) is not None:
            attributes.flag_modified(target, self._owner[1])

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name, value)
        self._touch(name)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self._touch(name, removed=True)

    def pop(self, name: str, *default: Any) -> Any:
        present = name in self
        value = super().pop(name, *default)
        if present:
            self._touch(name, removed=True)
        return value

    def popitem(self) -> tuple[str, Any]:
        name, value = super().popitem()
        self._touch(name, removed=True)
        return name, value

    def clear(self) -> None:
        names = list(self)
        super().clear()
        self._touch(*names, removed=True)

    def setdefault(self, name: str, default: Any = None) -> Any:
        if name not in self:
            self[name] = default
        return self[name]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for name, value in dict(*args, **kwargs).items():
            self[name] = value


@functools.cache
def _bags(mapper: Mapper) -> tuple[str, ...]:
    return tuple(prop.key for prop in mapper.column_attrs if any(is_bag(c) for c in prop.columns))


def mapped_by_kind(mapper: Mapper) -> dict[str, frozenset[str]]:
    """For a query of ``mapper``'s hierarchy that loads an attribute bag: the attributes each
    kind's class maps, so that a bag holds every other attribute of its item, as it does when
    its class is loaded alone (a base-class query also selects the siblings' columns). Empty
    when no class of the hierarchy has a bag."""
    kinds = [m for m in mapper.self_and_descendants if m.polymorphic_identity is not None]
    if not any(_bags(m) for m in kinds):
        return {}
    return {
        m.polymorphic_identity: frozenset(c.name for prop in m.column_attrs for c in prop.columns)
        for m in kinds
    }


def _owned(target: Any, key: str, value: Any, loaded: bool) -> Bag:
    bag = value if isinstance(value, Bag) else Bag(value or {})
    if loaded:
        bag.flushed()
    bag._owner = (weakref.ref(target), key)
    return bag


def _on_set(target: Any, value: Any, old: Any, initiator: Any) -> Bag:
    """A new dict replaces the whole bag: its entries are SET, the old ones it lacks REMOVEd."""
    bag = _owned(target, initiator.key, value, loaded=False)
    bag._changed = set(bag)
    if isinstance(old, dict):
        bag._removed |= set(old) - set(bag)
        if isinstance(old, Bag):
            bag._removed |= old._removed - set(bag)
    return bag


def adopt_loaded(target: Any, *args: Any) -> None:
    state = attributes.instance_state(target)
    for key in _bags(state.mapper):
        if key in state.dict:
            state.dict[key] = _owned(target, key, state.dict[key], loaded=True)


def check_before_flush(mapper: Mapper, connection: Any, target: Any) -> None:
    if not is_dynamodb(connection):
        return
    # a name the class maps, by column name or attribute name -> the attribute to set instead
    mapped = {column.name: prop.key for prop in mapper.column_attrs for column in prop.columns}
    mapped.update((key, key) for key in mapper.column_attrs)
    for key in _bags(mapper):
        bag = getattr(target, key)
        clashes = sorted(set(bag or ()) & mapped.keys())
        if clashes:
            name = mapper.class_.__name__
            raise AttributeBagError(
                f"{name}.{key} holds {', '.join(map(repr, clashes))}, which {name} maps as a column: set "
                f"the attribute itself (obj.{mapped[clashes[0]]} = ...) and delete it from the bag"
            )


def flushed(mapper: Mapper, connection: Any, target: Any) -> None:
    if not is_dynamodb(connection):
        return
    for key in _bags(mapper):
        bag = attributes.instance_state(target).dict.get(key)
        if isinstance(bag, Bag):
            bag.flushed()


def new_object(target: Any, args: Any, kwargs: Any) -> None:
    for key in _bags(attributes.instance_state(target).mapper):
        if key not in kwargs:
            attributes.set_committed_value(target, key, _owned(target, key, {}, loaded=True))


def watch_bag_columns(mapper: Mapper, class_: type) -> None:
    """``mapper_configured``: a dict set on a bag column replaces the whole bag (_on_set)."""
    for prop in mapper.column_attrs:
        if prop.parent is mapper and any(is_bag(c) for c in prop.columns):
            event.listen(getattr(class_, prop.key), "set", _on_set, retval=True, propagate=True)


# Listeners on every mapper (a class's own would be added while SQLAlchemy runs these events:
# mappers configure on the first object created); each returns at once for a class without a bag.
