"""The placeholders of a key template, how they format values, and whether a format keeps order.

DynamoDB compares string keys byte by byte, so a sort key keeps its source's order only when the
formatted values compare as the values do: fixed-width, zero-padded numbers (``{price:010.2f}``),
dates and times from the most significant field down (``{at:%Y-%m-%dT%H:%M:%S}``), or a string,
date or datetime as the template's last text. Only then can a range on the source
(``price.between(10, 20)``) become a range on the key.
"""

from __future__ import annotations

import datetime
import re
import string
from typing import Any, NamedTuple

from ..dialect.types import shown
from ..exc import KeyTemplateError

_FIXED_NUMBER = re.compile(r"0(?P<width>\d+)(?:\.\d+)?[df]?")
_DATE_DIRECTIVES = ("%Y", "%m", "%d", "%H", "%M", "%S", "%f")
# types whose str() keeps their order when nothing follows them in the key
_ORDERED_AS_TEXT = (str, datetime.date, datetime.datetime)


class Field(NamedTuple):
    literal: str  # the text before the placeholder
    name: str
    spec: str
    conversion: str | None


def parse(text: str) -> tuple[tuple[Field, ...], str]:
    """The placeholders of ``text`` and the literal text after the last one."""
    fields, trailing = [], ""
    for literal, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            trailing = literal
        else:
            fields.append(Field(literal, name, spec or "", conversion))
    return tuple(fields), trailing


def fixed_width(spec: str) -> int | None:
    """The width of a zero-padded number format (``010.2f`` -> 10), else None."""
    match = _FIXED_NUMBER.fullmatch(spec)
    return int(match["width"]) if match else None


def _ordered_datetime(spec: str) -> bool:
    """Whether a strftime format names the fields of a date from the most significant down,
    each of fixed width (``%Y-%m-%dT%H:%M:%S``)."""
    directives = re.findall(r"%.", spec)
    return bool(directives) and tuple(directives) == _DATE_DIRECTIVES[: len(directives)]


def format_field(field: Field, value: Any, hidden: bool = False) -> str:
    """``value`` as the placeholder formats it; a number that does not fit its fixed width (or is
    negative) is refused, since its key would sort out of order. ``hidden``: the engine's
    hide_parameters, which keeps the value out of the message."""
    if field.conversion:
        value = string.Formatter().convert_field(value, field.conversion)
    text = format(value, field.spec)
    width = fixed_width(field.spec)
    if width is not None and (len(text) != width or text.startswith("-")):
        raise KeyTemplateError(
            f"{field.name}={shown(value, hidden)} does not fit the fixed width of {{{field.name}:{field.spec}}}: keys "
            "built from it would sort out of order; widen the format or keep the value non-negative"
        )
    return text


def keeps_order(fields: tuple[Field, ...], trailing: str, source: str, python_type: type | None) -> bool:
    """Whether the template's values sort as ``source``'s values do, its other placeholders fixed."""
    matching = [f for f in fields if f.name == source]
    if len(matching) != 1 or matching[0].conversion:
        return False
    field = matching[0]
    if fixed_width(field.spec) is not None or _ordered_datetime(field.spec):
        return True
    last = field is fields[-1] and not trailing
    return last and not field.spec and python_type is not None and issubclass(python_type, _ORDERED_AS_TEXT)
