"""Access-path analysis: what DynamoDB will do for a statement, and why.

The compiler fills a Plan while it renders each statement; the scan guard, the log and
``sa_dynamo.explain()`` all read that same Plan, so they can never disagree about it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

_PLACEHOLDER = re.compile(r"%\(([^)]+?)\)s")
_POSTCOMPILE = re.compile(r"__\[POSTCOMPILE_(\S+?)\]")

READS = ("GetItem", "Query", "Scan")
WRITES = {"INSERT": "PutItem", "UPDATE": "UpdateItem", "DELETE": "DeleteItem"}


@dataclass(frozen=True)
class Plan:
    """One statement's access path.

    ``operation`` is GetItem (the whole key pinned), Query (the partition key pinned by = or
    IN), Scan (neither), or PutItem/UpdateItem/DeleteItem for writes. ``reason`` says why a
    read is a Scan, or why no index served it.
    """

    operation: str
    table: str
    index: str | None = None
    key_condition: str = ""
    filter: str = ""
    partiql: str = ""
    reason: str = ""

    @property
    def source(self) -> str:
        return self.table if self.index is None else f"{self.table}.{self.index}"

    def finished(self, partiql: str, postcompile: Callable[[str], str] | None = None) -> Plan:
        """The plan with the statement text as sent and placeholders as ``?``. ``postcompile``
        renders the parameters SQLAlchemy expands at execution time (IN lists, JSON path
        steps); without it their markers stay, to be rendered per execution."""

        def sent(text: str) -> str:
            if postcompile is not None:
                text = _POSTCOMPILE.sub(lambda m: postcompile(m.group(1)), text)
            return _PLACEHOLDER.sub("?", text)

        return replace(
            self, key_condition=sent(self.key_condition), filter=sent(self.filter), partiql=partiql
        )

    def summary(self) -> str:
        """One line for the log."""
        parts = [f"{self.operation} on {self.source}"]
        if self.key_condition:
            parts.append(f"key: {self.key_condition}")
        if self.filter:
            parts.append(f"filter: {self.filter}")
        if self.reason:
            parts.append(f"({self.reason})")
        return "; ".join(parts)

    def __str__(self) -> str:
        lines = [
            f"operation:     {self.operation}",
            f"table:         {self.table}",
            f"index:         {self.index or '-'}",
            f"key condition: {self.key_condition or '-'}",
            f"filter:        {self.filter or '-'}",
        ]
        if self.reason:
            lines.append(f"note:          {self.reason}")
        lines.append(f"PartiQL:       {self.partiql}")
        return "\n".join(lines)


def scan_message(plan: Plan) -> str:
    """What the scan guard tells the user: which table, which condition is missing, what to do."""
    whole = f"index {plan.index!r} of table {plan.table!r}" if plan.index else f"table {plan.table!r}"
    return (
        f"this statement scans the whole {whole}: {plan.reason}. Add a partition-key "
        "condition, or pass dynamodb_scan='allow' (execution option or create_engine keyword) if a "
        "full scan is what you want"
    )


def explain(bind: Any, statement: Any) -> Plan:
    """The Plan of ``statement`` on ``bind`` (Engine, Connection or Session); nothing is sent.

    The statement goes through the same path as a real execution (ORM events included), so
    the plan shows exactly what would be sent.
    """
    from sqlalchemy.orm import Session

    holder: dict[str, Plan] = {}
    statement = statement.execution_options(dynamodb_explain=holder)
    orm = getattr(statement, "_propagate_attrs", {}).get("compile_state_plugin") == "orm"
    if orm and hasattr(bind, "connect"):
        with Session(bind) as session:  # an ORM statement gets the ORM's rewriting, as in use
            session.execute(statement)
    elif hasattr(bind, "connect"):
        with bind.connect() as connection:
            connection.execute(statement)
    else:
        bind.execute(statement)
    return holder["plan"]


_SOURCE = re.compile(r'\bFROM ("(?:[^"]|"")*")(?:\.("(?:[^"]|"")*"))?', re.IGNORECASE)
_WRITE_TABLE = re.compile(r'^\s*(?:INSERT INTO|UPDATE|DELETE FROM|PUT INTO) ("(?:[^"]|"")*")', re.IGNORECASE)


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


_QUOTED = re.compile(r"\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*'")
_NAME = r'(?P<name>"_*"|[A-Za-z_][A-Za-z0-9_$]*)'  # a name as it reads in _masked() text
_HASH_TERM = re.compile(_NAME + r"\s*(?P<op>=|IN)\s*\S+", re.IGNORECASE)
_RANGE_TERM = re.compile(
    _NAME + r"\s*(?:(?P<op>=|<=|>=|<(?!>)|>)\s*\S+|\s(?P<between>BETWEEN)\s+\S+\s+AND\s+\S+)", re.IGNORECASE
)
_BEGINS_WITH = re.compile(r'begins_with\(\s*("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)\s*,', re.IGNORECASE)
# FROM t / FROM t.i with plain names, which exec_driver_sql PartiQL may use unquoted.
_BARE_SOURCE = re.compile(r"\bFROM\s+([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?", re.IGNORECASE)


def _masked(text: str) -> str:
    """``text`` with the inside of every quoted name, string and bracket blanked out (``_``,
    same length): a keyword or operator found in it stands at the top level."""
    chars = list(_QUOTED.sub(lambda m: m.group()[0] + "_" * (len(m.group()) - 2) + m.group()[0], text))
    depth = 0
    for position, char in enumerate(chars):
        if char in ")]":
            depth -= 1
        if depth > 0:
            chars[position] = "_"
        if char in "([":
            depth += 1
    return "".join(chars)


def _where_of(text: str) -> str:
    """A statement's WHERE condition, without what follows it (ORDER BY, RETURNING)."""
    masked = _masked(text)
    where = re.search(r"\sWHERE\s", masked, re.IGNORECASE)
    if where is None:
        return ""
    end = re.search(r"\s(?:ORDER\s+BY|RETURNING)\s", masked[where.end() :], re.IGNORECASE)
    return text[where.end() : where.end() + end.start() if end else len(text)].strip()


def _conjuncts(condition: str) -> list[str]:
    """The top-level AND terms of a condition; BETWEEN's AND stays inside its term."""
    masked = _masked(condition)
    terms, start = [], 0
    for match in re.finditer(r"\sAND\s", masked, re.IGNORECASE):
        if not re.search(r"\sBETWEEN\s+\S+$", masked[start : match.start()], re.IGNORECASE):
            terms.append(condition[start : match.start()].strip())
            start = match.end()
    return [*terms, condition[start:].strip()]


def _on(term: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """(attribute, operator) when the whole term is one ``pattern`` test of an attribute."""
    match = pattern.fullmatch(_masked(term))
    if match is None:
        return None
    return _unquote(term[match.start("name") : match.end("name")]), (
        match.group("op") or match.group("between")
    ).upper()


def _range_operator(term: str, range_key: str) -> str | None:
    """The operator of a sort-key condition on ``range_key`` (= < <= > >= BETWEEN begins_with)."""
    test = _on(term, _RANGE_TERM)
    if test is not None:
        return test[1] if test[0] == range_key else None
    begins = _BEGINS_WITH.match(term)
    if begins is None or not re.fullmatch(r"begins_with\(_*\)", _masked(term), re.IGNORECASE):
        return None
    return "begins_with" if _unquote(begins.group(1)) == range_key else None


def _split_key_condition(
    terms: list[str], hash_key: str | None, range_key: str | None
) -> tuple[str, str, str | None, list[str]] | None:
    """(partition-key term, its operator, sort-key term and operator, other terms) when the
    condition opens with = or IN on ``hash_key``, else None. The sort-key condition is the first
    of the following terms that is one. Without ``hash_key`` (an index, whose keys are unknown
    here) the opening = or IN term is taken for the partition-key condition."""
    head = _on(terms[0], _HASH_TERM)
    if head is None or (hash_key is not None and head[0] != hash_key):
        return None
    rest = terms[1:]
    if range_key is not None:
        for term in rest:
            operator = _range_operator(term, range_key)
            if operator is not None:
                others = [t for t in rest if t is not term]
                return f"{terms[0]} AND {term}", head[1], operator, others
    return terms[0], head[1], None, rest


def _without_not_not(term: str) -> str | None:
    """``x`` for a scan's ``NOT (NOT (x))`` (partiql-reference.md §15), when both NOTs wrap it all."""
    for _ in range(2):
        negated = re.fullmatch(r"NOT\s*\((.*)\)", term, re.IGNORECASE | re.DOTALL)
        if negated is None or not re.fullmatch(r"NOT\s*\(_*\)", _masked(term), re.IGNORECASE):
            return None
        term = negated.group(1).strip()
    return term


def _filter_of(terms: list[str], after_key: bool) -> str:
    """The filter as the compiled plan shows it: without the parentheses that group it after a
    key condition, and without a scan's NOT (NOT (...))."""
    if len(terms) == 1 and after_key and re.fullmatch(r"\(_*\)", _masked(terms[0])):
        return terms[0][1:-1].strip()
    if len(terms) == 1 and not after_key:
        return _without_not_not(terms[0]) or terms[0]
    return " AND ".join(terms)


def plan_of_text(partiql: str, key_names: Callable[[str], tuple[str, ...]]) -> Plan:
    """The access path of PartiQL text sent as written (exec_driver_sql) or rewritten from SQL
    text: a SELECT whose WHERE opens with = or IN on the partition key is a Query (GetItem when
    the sort key is pinned by = too), any other SELECT a Scan. As for compiled statements, the
    key condition is that term and a sort-key condition among the top-level AND terms that
    follow it; the filter is the rest (an OR at the top level is never split)."""
    text = partiql.strip()
    verb = text.split(None, 1)[0].upper() if text else ""
    if verb != "SELECT":
        match = _WRITE_TABLE.match(text)
        operation = {
            "INSERT": "PutItem",
            "UPDATE": "UpdateItem",
            "DELETE": "DeleteItem",
            "PUT": "BatchWriteItem",
        }
        return Plan(operation.get(verb, verb), _unquote(match.group(1)) if match else "", partiql=partiql)
    source = _SOURCE.search(text) or _BARE_SOURCE.search(text)
    if source is None:
        return Plan("Scan", "", partiql=partiql, reason="no table found in the statement")
    table = _unquote(source.group(1))
    index = _unquote(source.group(2)) if source.group(2) else None
    where = _where_of(text)
    terms = _conjuncts(where) if where else []
    keys = key_names(table) if index is None else ()
    hash_key = keys[0] if keys else None
    split = None
    if terms and (hash_key is not None or index is not None):
        split = _split_key_condition(terms, hash_key, keys[1] if len(keys) > 1 else None)
    if split is None:
        reason = (
            f"no = or IN condition on its partition key {hash_key!r} first" if hash_key else "unknown key"
        )
        return Plan("Scan", table, index, filter=_filter_of(terms, False), partiql=partiql, reason=reason)
    key_condition, hash_operator, range_operator, rest = split
    whole = hash_key is not None and hash_operator == "=" and (len(keys) == 1 or range_operator == "=")
    return Plan(
        "GetItem" if whole else "Query",
        table,
        index,
        key_condition=key_condition,
        filter=_filter_of(rest, True),
        partiql=partiql,
    )
