"""The little the driver must know about a PartiQL statement's text: its kind, its projection,
whether it returns the old item. No SQL parsing beyond that happens here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_RETURNING_OLD = re.compile(r"\s+RETURNING\s+ALL\s+OLD\s+\*\s*;?\s*$", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\s+(ALL|MODIFIED)\s+(OLD|NEW)\s+\*\s*;?\s*$", re.IGNORECASE)


def kind(statement: str) -> str:
    """SELECT, INSERT, UPDATE, DELETE or EXISTS (upper case), from the first word."""
    match = re.match(r"\s*(?:(?:--[^\n]*\n)|(?:/\*.*?\*/)|\s)*([A-Za-z]+)", statement, re.DOTALL)
    return match.group(1).upper() if match else ""


def has_returning(statement: str) -> bool:
    """True when the statement ends in a RETURNING clause, i.e. its response items are rows."""
    return _RETURNING.search(statement) is not None


def without_returning_old(statement: str) -> str:
    """A DELETE without its ``RETURNING ALL OLD *`` (ExecuteTransaction rejects RETURNING)."""
    return _RETURNING_OLD.sub("", statement)


def _unquoted(text: str) -> Iterator[tuple[int, str]]:
    """Position and character of everything outside "identifiers" and 'strings' (where a doubled
    quote is an escaped quote), so that commas and FROM inside them are not taken for syntax."""
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                if text[i + 1 : i + 2] == quote:
                    i += 1
                else:
                    quote = ""
        elif ch in "\"'":
            quote = ch
        else:
            yield i, ch
        i += 1


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in _unquoted(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


Step = str | int  # a map key or a list index
_STEP = re.compile(r'"((?:[^"]|"")*)"|([A-Za-z_$][\w$]*)|\[(\d+)\]|\[\'((?:[^\']|\'\')*)\'\]')


def _step_values(path: str) -> list[Step]:
    steps: list[Step] = []
    for match in _STEP.finditer(path):
        quoted, bare, index, keyed = match.groups()
        if index is not None:
            steps.append(int(index))
        elif keyed is not None:
            steps.append(keyed.replace("''", "'"))
        else:
            steps.append(quoted.replace('""', '"') if quoted is not None else bare)
    return steps


def result_key(path: str) -> str:
    """DynamoDB names a projected path by its last step: ``doc.a.b`` -> ``b``, ``l[0]`` -> ``l[0]``."""
    names: list[str] = []
    for step in _step_values(path):
        if isinstance(step, int):
            names[-1:] = [f"{names[-1]}[{step}]" if names else f"[{step}]"]
        else:
            names.append(step)
    return names[-1] if names else path


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _from_position(text: str) -> int:
    upper = text.upper()
    for i, _ in _unquoted(text):
        if (
            upper.startswith("FROM", i)
            and (i == 0 or not _is_word_char(text[i - 1]))
            and (i + 4 >= len(text) or not _is_word_char(text[i + 4]))
        ):
            return i
    return -1


_NAME_SYNTAX = r'"(?:[^"]|"")*"|[A-Za-z_$][\w$]*'
_INDEX_SYNTAX = r"\[\d+\]|\['(?:[^']|'')*'\]"
# name (. name | [index] | ['key'])*: a plain path, nothing else (no function, alias or ?)
_PATH = re.compile(rf"(?:{_NAME_SYNTAX})(?:\s*\.\s*(?:{_NAME_SYNTAX})|\s*(?:{_INDEX_SYNTAX}))*")


def _steps(path: str) -> tuple[Step, ...] | None:
    """A projected path's steps (``doc.a[0]`` -> ("doc", "a", 0)), None when it is not a plain path."""
    return tuple(_step_values(path)) if _PATH.fullmatch(path) else None


def _select_list(statement: str) -> tuple[str, list[str], str] | None:
    """A SELECT split around its projection: (the text up to it, its paths, the text from FROM
    on); None for ``SELECT *``."""
    head = re.match(r"\s*SELECT\s+", statement, re.IGNORECASE)
    start = head.end() if head else 0
    end = _from_position(statement[start:])
    columns = statement[start : start + end] if end >= 0 else statement[start:]
    if columns.strip() == "*":
        return None
    rest = statement[start + end :] if end >= 0 else ""
    return statement[:start], _split_top_level(columns), rest


def covering(statement: str) -> tuple[str, list[tuple[Step, ...]]] | None:
    """When DynamoDB would refuse a SELECT's projection because two paths name the same result
    key (``"a", "doc"."a"``) or overlap (``"doc", "doc"."a"``): the statement projecting each
    top-level attribute once instead, and every projected path, to be read from what returns.
    None when the projection is fine as it is (or is not made of plain paths)."""
    split = _select_list(statement)
    if split is None or not split[0] or not split[2]:
        return None
    head, parts, rest = split
    paths = [_steps(part) for part in parts]
    if any(path is None for path in paths):
        return None
    keys = [result_key(part) for part in parts]
    overlap = any(p[: len(q)] == q for i, p in enumerate(paths) for j, q in enumerate(paths) if i != j)
    if not overlap and len(set(keys)) == len(keys):
        return None
    tops = dict.fromkeys(str(path[0]) for path in paths)
    projected = ", ".join('"{}"'.format(name.replace('"', '""')) for name in tops)
    return f"{head}{projected} {rest}", paths


def projection(statement: str) -> list[str] | None:
    """Result keys of a SELECT in projection order, or None for ``SELECT *``."""
    split = _select_list(statement)
    return None if split is None else [result_key(part) for part in split[1]]


_SOURCE = re.compile(rf"\s*({_NAME_SYNTAX})(?:\s*\.\s*({_NAME_SYNTAX}))?")
_TARGET = re.compile(
    rf"\s*(?:INSERT\s+INTO|PUT\s+INTO|UPDATE|DELETE\s+FROM)\s+({_NAME_SYNTAX})", re.IGNORECASE
)
_ORDER_BY = re.compile(rf"\sORDER\s+BY\s+({_NAME_SYNTAX})(?:\s+(ASC|DESC))?\s*;?\s*$", re.IGNORECASE)


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def source(statement: str) -> tuple[str, str | None] | None:
    """The table a SELECT reads and the index, if any (``FROM "t"."i"``); the table an INSERT,
    UPDATE or DELETE writes, with no index. None when the text says neither."""
    if kind(statement) != "SELECT":
        match = _TARGET.match(statement)
        return (_unquote(match.group(1)), None) if match else None
    start = _from_position(statement)
    match = _SOURCE.match(statement, start + 4) if start >= 0 else None
    if match is None:
        return None
    return _unquote(match.group(1)), _unquote(match.group(2)) if match.group(2) else None


def tables(body: dict[str, Any]) -> list[str]:
    """The tables a request to DynamoDB names, in order: its statements' (one, a batch's or a
    transaction's), its items' (BatchWriteItem, BatchGetItem) or its TableName."""
    if "TableName" in body:
        return [body["TableName"]]
    if "RequestItems" in body:
        return list(body["RequestItems"])
    texts = [body["Statement"]] if "Statement" in body else []
    texts += [s["Statement"] for s in body.get("Statements") or body.get("TransactStatements") or []]
    return list(dict.fromkeys(found[0] for text in texts if (found := source(text)) is not None))


def order_by(statement: str) -> tuple[str, bool] | None:
    """A SELECT's ORDER BY attribute and whether it descends (the dialect orders by one key)."""
    match = _ORDER_BY.search(statement)
    if match is None:
        return None
    return _unquote(match.group(1)), (match.group(2) or "").upper() == "DESC"


def whole_items(statement: str) -> tuple[str, list[tuple[Step, ...]] | None] | None:
    """The SELECT reading whole items instead of its projection, and the projected paths to read
    from them (None for ``SELECT *``); None when the projection is not made of plain paths."""
    split = _select_list(statement)
    if split is None:
        return statement, None
    head, parts, rest = split
    paths = [_steps(part) for part in parts]
    if not head or not rest or any(path is None for path in paths):
        return None
    return f"{head}* {rest}", paths


_EQUALITY = re.compile(rf"\s*({_NAME_SYNTAX})\s*=\s*\?\s*")


def _where_position(text: str) -> int:
    upper = text.upper()
    for i, _ in _unquoted(text):
        if (
            upper.startswith("WHERE", i)
            and not _is_word_char(text[i - 1])
            and not _is_word_char(text[i + 5 : i + 6] or " ")
        ):
            return i
    return -1


def equalities(statement: str) -> list[str] | None:
    """The attributes a SELECT's WHERE compares with ``?``, in order, when it is nothing but such
    equalities joined by AND ([] without a WHERE); None for any other WHERE."""
    split = _ORDER_BY.split(statement, maxsplit=1)[0]
    start = _where_position(split)
    if start < 0:
        return []
    names = []
    for part in re.split(r"\s+AND\s+", split[start + 5 :], flags=re.IGNORECASE):
        match = _EQUALITY.fullmatch(part)
        if match is None:
            return None
        names.append(_unquote(match.group(1)))
    return names
