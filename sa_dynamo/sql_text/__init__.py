"""SQL text (``text()``, ``exec_driver_sql``, ``pandas.read_sql``) -> a Core statement -> the one
compiler.

sqlglot parses the text (parser.py); to_core.py builds the Core statement it means against a
Table made from the table's live key schema and indexes (DescribeTable, read once per table);
the dialect's compiler compiles it as it compiles any statement, so SQL text gets the same
PartiQL, plan, index choice, limits and refusals by construction. The translation is cached per
SQL text and key schema.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy.exc import CompileError

from ..exc import TranslationError
from .parser import Parsed, parse
from .to_core import Argument, Builder

__all__ = ["Translated", "TranslationError", "Translator"]

_CACHE_SIZE = 500


class Translated(NamedTuple):
    """SQL text as a compiled Core statement, and how to fill its parameters."""

    statement: Any
    compiled: Any
    arguments: dict[str, Argument]

    def parameters(self, rows: Sequence[Any], defaults: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The Core statement's parameters for each row of the text's (a dict of ``:name``
        values, or a sequence of ``?`` values); ``defaults`` are values text().bindparams() set."""
        filled = []
        for row in rows or [{}]:
            if isinstance(row, Mapping):
                row = {**defaults, **row}
            values = {}
            for name, argument in self.arguments.items():
                # a missing one is left out: SQLAlchemy names the parameter that has no value
                with contextlib.suppress(KeyError, IndexError):
                    values[name] = argument.value(row)
            filled.append(values)
        return filled


@lru_cache(maxsize=_CACHE_SIZE)
def _parsed(sql: str) -> Parsed:
    return parse(sql)


class Translator:
    """One dialect's translations and table descriptions, both cached.

    ``compile(statement)`` compiles a Core statement for the dialect. Descriptions are kept
    until ``forget()`` (the dialect calls it after DDL); a translation made against a
    description that has since been read again is made anew.
    """

    def __init__(self, compile: Callable[[Any], Any]):
        self._compile = compile
        self._lock = threading.Lock()
        self._versions = itertools.count()
        self._described: dict[str, tuple[int, Mapping[str, Any]]] = {}
        self._translations: OrderedDict[tuple, tuple[tuple, Translated]] = OrderedDict()

    def forget(self) -> None:
        with self._lock:
            self._described.clear()

    def translate(
        self,
        sql: str,
        describe: Callable[[str], Mapping[str, Any]],
        binds: Mapping[str, Any] | None = None,
        result_types: Mapping[str, Any] | None = None,
    ) -> Translated:
        """``describe(table)`` reads DescribeTable's Table (raising for a missing table)."""
        binds = binds or {}
        result_types = result_types or {}
        key = (
            sql,
            tuple((n, repr(b.type), b.expanding) for n, b in sorted(binds.items())),
            tuple((n, repr(t)) for n, t in sorted(result_types.items())),
        )
        cached = self._translations.get(key)
        if cached is not None and all(self._description(n, describe)[0] == v for n, v in cached[0]):
            with self._lock:
                self._translations.move_to_end(key)
            return cached[1]
        used: dict[str, int] = {}

        def described(name: str) -> Mapping[str, Any]:
            version, description = self._description(name, describe)
            used[name] = version
            return description

        core = Builder(_parsed(sql), described, binds, result_types).build()
        try:
            compiled = self._compile(core.statement)
        except TranslationError:
            raise
        except CompileError as error:
            raise TranslationError(str(error)) from error
        translated = Translated(core.statement, compiled, core.arguments)
        with self._lock:
            self._translations[key] = (tuple(used.items()), translated)
            if len(self._translations) > _CACHE_SIZE:
                self._translations.popitem(last=False)
        return translated

    def _description(self, name: str, describe: Callable[[str], Mapping[str, Any]]) -> tuple[int, Any]:
        known = self._described.get(name)
        if known is None:
            known = (next(self._versions), describe(name))
            with self._lock:
                self._described[name] = known
        return known
