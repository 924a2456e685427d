"""Key templates: key attributes computed from other attributes, as single-table design does.

``__key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}"}`` on a mapped
class fills ``pk``/``sk`` when a DynamoDB session flushes it (and again when the sources change);
template_queries.py turns a query's conditions on the sources into key conditions, and
template_writes.py gives Core and bulk writes their keys. A key is rendered from its sources as
their columns store them (``as_stored``), so that it agrees with them. A template whose source
is None leaves its attribute absent (the item drops out of that sparse index); never
``STATUS#None``.

A key whose value depends on the object's state (DynamoMapper's conditional index: archived
products under ``ARCHIVED_PRODUCT``, the others under ``ACTIVE_PRODUCT``) is a
``computed_key(function, *sources)``: the function sees the declared sources only, so the key is
recomputed whenever one of them changes, and returning None leaves the item out of the index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, NamedTuple

from sqlalchemy import inspect
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import Mapper

from ..dialect.types import shown
from ..dialect.write_rules import stored_value
from ..exc import KeyTemplateError
from .key_formats import Field, format_field, parse
from .scope import is_dynamodb

ATTRIBUTE = "__key_templates__"


class ComputedKey(NamedTuple):
    """A key computed by a function of the object's ``sources`` (see ``computed_key``)."""

    function: Callable[[Any], str | None]
    sources: tuple[str, ...]


def computed_key(function: Callable[[Any], str | None], *sources: str) -> ComputedKey:
    """A ``__key_templates__`` entry computed by ``function(obj)``, which may read only ``sources``
    (attributes of the class): ``computed_key(lambda p: "ARCHIVED" if p.archived else "ACTIVE",
    "archived")``. None leaves the attribute absent, so the item stays out of a sparse index."""
    if not sources or not all(isinstance(name, str) and name.isidentifier() for name in sources):
        raise KeyTemplateError(
            "computed_key(function, *sources): name the attributes the function reads, e.g. "
            "computed_key(status_key, 'archived_at')"
        )
    return ComputedKey(function, tuple(sources))


class KeyTemplate(NamedTuple):
    target: str
    text: str
    sources: tuple[str, ...]
    fields: tuple[Field, ...] = ()
    trailing: str = ""  # literal text after the last placeholder
    function: Callable[[Any], str | None] | None = None

    @classmethod
    def parse(cls, target: str, text: str | ComputedKey) -> KeyTemplate:
        if isinstance(text, ComputedKey):
            name = getattr(text.function, "__qualname__", repr(text.function))
            return cls(target, f"computed_key({name})", text.sources, function=text.function)
        fields, trailing = parse(text)
        if any(not f.name or not f.name.isidentifier() for f in fields):
            raise KeyTemplateError(
                f"key template {text!r} for {target!r}: use {{attribute}} placeholders only"
            )
        return cls(target, text, tuple(dict.fromkeys(f.name for f in fields)), fields, trailing)

    @property
    def prefix(self) -> str:
        """The literal text before the first placeholder: every value starts with it."""
        if self.function is not None:
            return ""
        return self.fields[0].literal if self.fields else self.trailing

    def renders_from(self, values: Mapping[str, Any]) -> bool:
        """Whether ``values`` give the template what it reads (a computed key reads None too)."""
        if self.function is not None:
            return all(name in values for name in self.sources)
        return all(values.get(name) is not None for name in self.sources)

    def render(self, values: Mapping[str, Any], hidden: bool = False) -> str | None:
        """The key ``values`` give (None: a source is None); ``hidden`` keeps them out of errors."""
        if not self.renders_from(values):
            return None
        if self.function is not None:
            view = SimpleNamespace(**{name: values[name] for name in self.sources})
            try:
                return self.function(view)
            except AttributeError as error:
                raise KeyTemplateError(
                    f"{self.text} for {self.target!r} read an attribute it does not declare ({error}): "
                    "name every attribute it reads in computed_key(function, *sources)"
                ) from error
        pieces = [f.literal + format_field(f, values[f.name], hidden) for f in self.fields]
        return "".join(pieces) + self.trailing

    def same_as(self, other: KeyTemplate) -> bool:
        return (self.text, self.function) == (other.text, other.function)


def templates(class_: type) -> dict[str, KeyTemplate]:
    """The templates a class uses: its own plus those it inherits (a redefinition is an error)."""
    merged: dict[str, KeyTemplate] = {}
    owner: dict[str, type] = {}
    for klass in reversed(class_.__mro__):
        for target, text in klass.__dict__.get(ATTRIBUTE, {}).items():
            template = KeyTemplate.parse(target, text)
            if target in merged and not merged[target].same_as(template):
                raise KeyTemplateError(
                    f"{klass.__name__} redefines the key template of {target!r} ({text!r}) that "
                    f"{owner[target].__name__} already defines as {merged[target].text!r}: classes of one "
                    "hierarchy share their ancestors' templates; move the template down to the subclasses"
                )
            merged[target] = template
            owner[target] = klass
    return merged


def _check(mapper: Mapper) -> None:
    attributes = set(mapper.column_attrs.keys())
    for template in templates(mapper.class_).values():
        for name in (template.target, *template.sources):
            if name not in attributes:
                raise KeyTemplateError(
                    f"{mapper.class_.__name__}: key template {template.text!r} for {template.target!r} uses "
                    f"{name!r}, which {mapper.class_.__name__} does not map as a column attribute"
                )


def as_stored(mapper: Mapper, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` of ``mapper``'s attributes as their columns store them (a price rounded to its
    Numeric's scale, a float as the decimal sent): templates are rendered from these, on flush
    and in queries alike, so that a key agrees with its sources as stored and a condition on a
    source finds its key."""
    columns = mapper.columns
    return {
        name: stored_value(columns[name].type, value) if name in columns else value
        for name, value in values.items()
    }


def key_of(class_: type, **values: Any) -> tuple:
    """The primary key of the item the templates would write, for ``session.get()``."""
    mapper = inspect(class_)
    found = templates(class_)
    values = as_stored(mapper, values)
    key = []
    for column in mapper.primary_key:
        attribute = mapper.get_property_by_column(column).key
        if attribute in found:
            key.append(found[attribute].render(values))
        else:
            key.append(values.get(attribute))
    if any(part is None for part in key):
        raise KeyTemplateError(
            f"{class_.__name__}: give every attribute its key templates use, got {sorted(values)}"
        )
    return tuple(key)


def primary_key_attributes(mapper: Mapper) -> set[str]:
    """The attributes that map the table's key."""
    return {mapper.get_property_by_column(column).key for column in mapper.primary_key}


def fill(mapper: Mapper, target: Any, updating: bool = False, hidden: bool = False) -> None:
    """Set every templated attribute of ``target`` from its sources: all of them for a new
    object; on an update, those whose sources (or which themselves) changed, so that a computed
    key that reads the clock or a counter stays where it is on an unrelated change. ``hidden``
    (the engine's hide_parameters) keeps their values out of the errors."""
    keys = primary_key_attributes(mapper)
    state = inspect(target)
    for template in templates(mapper.class_).values():
        if updating and not any(
            state.attrs[name].history.has_changes() for name in (*template.sources, template.target)
        ):
            continue
        values = as_stored(mapper, {name: getattr(target, name) for name in template.sources})
        value = template.render(values, hidden)
        current = getattr(target, template.target)
        if template.target in keys:
            if value is None:
                missing = [name for name in template.sources if values[name] is None]
                cause = f"{', '.join(missing)} is None" if missing else "it returned None"
                raise InvalidRequestError(
                    f"{mapper.class_.__name__}.{template.target} is a key built from {template.text!r}, but "
                    f"{cause}: set it before flushing"
                )
            if updating and value != current:
                raise InvalidRequestError(
                    f"changing {', '.join(template.sources)} would move this {mapper.class_.__name__} from key "
                    f"{template.target}={shown(current, hidden)} to {shown(value, hidden)}; DynamoDB keys are "
                    "immutable: delete the object and add a new one"
                )
        if value != current:
            setattr(target, template.target, value)


def validate(mapper: Mapper, class_: type) -> None:
    _check(mapper)


def before_insert(mapper: Mapper, connection: Any, target: Any) -> None:
    if is_dynamodb(connection):
        fill(mapper, target, hidden=connection.engine.hide_parameters)


def before_update(mapper: Mapper, connection: Any, target: Any) -> None:
    if is_dynamodb(connection):
        fill(mapper, target, updating=True, hidden=connection.engine.hide_parameters)
