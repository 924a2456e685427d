"""SQL text (``text()``, ``exec_driver_sql``, ``pandas.read_sql``) -> a Core statement -> the one
compiler, so that SQL text gets the same PartiQL, plan, index choice, limits and refusals as Core.

sqlglot parses the text (parser.py); to_core.py builds the Core statement against the Table
reflected from the live key schema and indexes (read once per table). Translations are cached per
SQL text and key schema.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Table
from sqlalchemy.exc import CompileError

from ..exc import TranslationError
from .parser import parse
from .to_core import Builder, ResultAttributes

__all__ = ["ResultAttributes", "Translated", "TranslationError", "Translator"]

_CACHE_SIZE = 500


class Translated(NamedTuple):
    """SQL text as a compiled Core statement, and how to fill its parameters: a ``:name`` is the
    parameter ``name``, the ``?`` at place i the parameter ``str(i)``, a literal a parameter of its
    own (``literals``), and an IN list one list parameter of its items' values (``lists``)."""

    statement: Any
    compiled: Any
    lists: dict[str, tuple[str, ...]]
    literals: dict[str, Any]
    results: ResultAttributes | None = None

    def parameters(self, rows: Sequence[Any], defaults: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The Core statement's parameters for each row of the text's (a dict of ``:name``
        values, or a sequence of ``?`` values); ``defaults`` are values text().bindparams() set."""
        filled = []
        for row in rows or [{}]:
            if not isinstance(row, Mapping):
                row = {str(place): value for place, value in enumerate(row)}
            values = {**defaults, **row, **self.literals}
            for name, items in self.lists.items():
                # a missing one is left out: SQLAlchemy names the parameter that has no value
                with contextlib.suppress(KeyError):
                    values[name] = [values[item] for item in items]
            filled.append(values)
        return filled


class Translator:
    """One dialect's translations and the live Tables they were made against, both kept until
    ``forget()`` (the dialect calls it after DDL, which may change a key schema or an index)."""

    def __init__(self, compile: Callable[[Any], Any]):
        self._compile = compile
        self._lock = threading.Lock()
        self._tables: dict[str, Table] = {}
        self._translations: OrderedDict[tuple, Translated] = OrderedDict()

    def forget(self) -> None:
        with self._lock:
            self._tables.clear()
            self._translations.clear()

    def translate(
        self,
        sql: str,
        reflect: Callable[[str], Table],
        binds: Mapping[str, Any] | None = None,
        result_types: Mapping[str, Any] | None = None,
    ) -> Translated:
        """``reflect(table)`` reads a table's key schema and indexes (raising for a missing one)."""
        binds = binds or {}
        result_types = result_types or {}
        key = (
            sql,
            tuple((n, repr(b.type), b.expanding) for n, b in sorted(binds.items())),
            tuple((n, repr(t)) for n, t in sorted(result_types.items())),
        )
        if (translated := self._translations.get(key)) is not None:
            return translated

        def described(name: str) -> Table:
            if name not in self._tables:
                self._tables[name] = reflect(name)
            return self._tables[name]

        builder = Builder(parse(sql), described, binds, result_types)
        statement = builder.build()
        try:
            compiled = self._compile(statement)
        except CompileError as error:  # the compiler's refusal, as a refusal of the text
            raise TranslationError(str(error)) from error
        translated = Translated(statement, compiled, builder.lists, builder.literals, builder.results)
        with self._lock:
            self._translations[key] = translated
            if len(self._translations) > _CACHE_SIZE:
                self._translations.popitem(last=False)
        return translated
