"""Values an execution checks before sending, for what DynamoDB would reject or answer
differently from SQL: an empty key value, a LIKE pattern other than a prefix, a wildcard in a
startswith()/contains() value, a comparison with None, an empty IN list, a reversed sort-key
BETWEEN, a write's further key tests. Each is refused with advice, or decides that no row can match."""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import operators

from ..dbapi.errors import shown
from ..exc import refuse
from ..sqlalchemy_private import expanded_parameters
from .compiler import like_prefix, never_true
from .compiler.predicate import values_of


def check_values(context: Any, compiled: Any) -> bool:
    """Decide on the client what DynamoDB would reject: an empty string compared with a key
    attribute (refused: no key can be empty), a LIKE wildcard in a startswith()/contains()
    value (refused: begins_with has none), a sort-key BETWEEN whose bounds are reversed (no
    rows, as SQL says, without asking DynamoDB). Whether no row can match, so that nothing is
    sent."""
    values = context.compiled_parameters[0] if context.compiled_parameters else {}
    expanded = expanded_parameters(context)
    for name, escape in compiled.record.like_patterns.items():
        pattern = values.get(name)
        if isinstance(pattern, str) and like_prefix(pattern, escape) is None:
            refuse(
                f"LIKE {shown(pattern, context.dialect.hide_parameters)}",
                "DynamoDB matches a prefix only; write LIKE 'prefix%' (one % at the end), use "
                "contains() for a substring, or filter the rows in Python",
            )
    for name, attribute in compiled.record.key_parameters.items():
        if name in compiled.record.key_prefixes and not context.executemany:
            continue  # an empty prefix is TRUE for every key (templates.empty_key_prefixes_decided)
        candidates = _given(values, expanded, name)
        if name in compiled.record.like_patterns:  # LIKE 'prefix%' compares the prefix
            candidates = [like_prefix(v, compiled.record.like_patterns[name]) for v in candidates]
        if "" in candidates or b"" in candidates:
            refuse(
                f"a comparison of key attribute {attribute!r} with an empty value",
                "no key is empty, so leave the condition out or skip the query",
            )
    for name, attribute in compiled.record.sparse_not_in.items():
        if name in expanded and not expanded[name]:
            refuse(
                f"NOT IN with an empty list on {attribute!r}, a key of the index read",
                "leave the NOT IN condition out when the list is empty (it holds for every row, the "
                "items the index lacks too)",
            )
    for name, method in compiled.record.like_parameters.items():
        value = values.get(name)
        if isinstance(value, str) and ("%" in value or "_" in value):
            refuse(
                f"{method}({shown(value, context.dialect.hide_parameters)}) as SQL means it",
                "SQL's LIKE reads % and _ in the value as wildcards, DynamoDB matches them "
                f"literally; pass autoescape=True to {method}() to match them literally",
            )
    nothing = (
        compiled.record.always_empty
        or _empty_in(compiled, expanded)
        or _compares_with_none(context, compiled, expanded)
        or _key_retested(context, compiled, expanded)
    )
    if compiled.record.key_between is not None:
        low, high = (values[name] for name in compiled.record.key_between)
        nothing = nothing or low > high
    return nothing


def _given(values: dict[str, Any], expanded: dict[str, list[str]], name: str) -> list[Any]:
    """The values of parameter ``name``: an IN list's, expanded into one parameter per value by
    now, or its one value."""
    names = expanded.get(name)
    return [values.get(name)] if names is None else [values.get(n) for n in names]


def _empty_in(compiled: Any, expanded: dict[str, list[str]]) -> bool:
    """Whether a term of the WHERE is an IN with an empty list, which SQL says no row matches
    (below an OR it is FALSE there: templates.empty_lists_decided)."""
    return any(
        top_level
        and name in expanded
        and not expanded[name]
        and compiled.binds[name].expand_op is operators.in_op
        for name, top_level in compiled.record.value_parameters.items()
    )


def _key_retested(context: Any, compiled: Any, expanded: dict[str, list[str]]) -> bool:
    """Whether a write's further tests of its key attributes fail for the key it pins (then
    no row matches); refused when they fail for some rows of an executemany only."""
    if compiled.record.key_retests is None:
        return False
    predicate, pinned = compiled.record.key_retests
    failed = []
    for parameters in context.compiled_parameters:
        values = values_of(compiled, parameters, expanded)
        failed.append(not predicate({name: values(bind) for name, bind in pinned.items()}, values))
    if any(failed) and not all(failed):
        refuse(
            "an executemany whose rows' key tests hold for some rows only",
            "send the rows whose key tests fail apart (they match nothing)",
        )
    return all(failed)


def _compares_with_none(context: Any, compiled: Any, expanded: dict[str, list[str]]) -> bool:
    """Whether a term of the WHERE compares with None and so is never TRUE, as SQL says of
    x = NULL, x NOT IN (a, NULL) and x IN (NULL) (PartiQL's tests are TRUE for other values,
    or for a stored NULL): then no row matches. Where that cannot be the answer, below an OR
    or for some rows of an executemany, the statement is refused before sending."""
    empty = False
    for values in context.compiled_parameters:
        for name, top_level in compiled.record.value_parameters.items():
            never = never_true(compiled.binds[name], _given(values, expanded, name))
            if never is not None and (not top_level or context.executemany):
                where = "in an executemany" if top_level else "below an OR"
                refuse(
                    f"{never} {where}",
                    "SQL's test is never true (NULL is no value to compare with), PartiQL's is true "
                    "for some items; leave None out"
                    + (" of the rows" if top_level else ", or the test out of the condition"),
                )
            empty = empty or never is not None
    return empty
