"""Each call from the dialect into the driver: the table's write rules handed over first, an
executemany's rows kept in their order, and parameters that cannot be printed kept out of the
error raised.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sqlalchemy.exc import DBAPIError

from .. import dbapi as dynamo_dbapi
from .execution import row_shape
from .write_rules import table_rules

log = logging.getLogger("sa_dynamo")

# Past this many levels of lists and maps inside each other, repr() (and so SQLAlchemy's
# message, which shows the parameters) may exhaust Python's recursion limit.
_PRINTABLE_DEPTH = 100


def execute(cursor: Any, statement: str, parameters: Any, context: Any) -> None:
    _tell_table(cursor, context)
    try:
        cursor.execute(statement, parameters)
    except dynamo_dbapi.Error as error:
        _raise_printable(error, statement, parameters, context)
        raise


def executemany(cursor: Any, statement: str, parameters: Any, context: Any) -> None:
    _tell_table(cursor, context)
    groups = context.row_groups if context is not None else None
    try:
        if groups is None:
            cursor.executemany(statement, parameters)
        else:
            cursor.executemany_statements(_in_order(context, parameters, groups))
    except dynamo_dbapi.Error as error:
        _raise_printable(error, statement, parameters, context)
        raise


def _tell_table(cursor: Any, context: Any) -> None:
    """Give the driver the rules of the table an INSERT/UPDATE/DELETE writes. SQL text writes to
    a reflected table whose columns carry no types: it is checked against the Table this engine
    created or wrote through under that name, else the driver reads the key types from
    DynamoDB (DescribeTable, once per connection)."""
    compiled = getattr(context, "compiled", None)
    statement = getattr(compiled, "statement", None)
    if not getattr(statement, "is_dml", False) or getattr(statement, "table", None) is None:
        return
    if not statement.table.primary_key.columns:  # pandas' to_sql writes through a keyless Table
        return  # the driver reads the key from DynamoDB
    rules = table_rules(statement.table)
    if all(key.type is not None for key in rules.key_attributes):  # a declared Table
        context.dialect.declared(statement.table)
        cursor.connection.tables.set_rules(rules)
    elif (declared := context.dialect.declared_rules.get(rules.table)) is not None:
        cursor.connection.tables.set_rules(declared)
    else:
        cursor.connection.tables.rules(rules.table, key_types=True)


def _in_order(context: Any, parameters: Any, groups: list[tuple[str, list]]) -> list[tuple[str, Any]]:
    """Each row with the statement that leaves out its None attributes, in the rows' order, so
    that the driver checks them all before sending any and reports row indexes as given.

    The execution context grouped the rows by the attributes they leave absent, each group in
    the order its first row came, each group's rows in their order."""
    template = context.compiled.record.template
    absent = [row_shape(template, row)[0] for row in parameters]
    first_seen = list(dict.fromkeys(absent))
    rows = {key: iter(group_rows) for key, (_, group_rows) in zip(first_seen, groups, strict=True)}
    statements = {key: sent for key, (sent, _) in zip(first_seen, groups, strict=True)}
    for sent, group_rows in groups:
        log.info(
            "%s -- for %d of %d rows (the others leave other attributes absent)",
            sent,
            len(group_rows),
            len(parameters),
        )
    return [(statements[key], next(rows[key])) for key in absent]


def _raise_printable(error: Exception, statement: str, parameters: Any, context: Any) -> None:
    """SQLAlchemy's error shows the parameters; when repr() cannot print them (a document
    nested a thousand levels deep), raise the driver's error with the statement alone."""
    if _printable(parameters):
        return
    raise DBAPIError.instance(
        statement,
        None,
        error,
        dynamo_dbapi.Error,
        ismulti=getattr(context, "executemany", None),
    ) from error


def _printable(parameters: Any) -> bool:
    """Depth first, without recursion: a value that contains itself is soon too deep."""
    stack = [(parameters, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > _PRINTABLE_DEPTH:
            return False
        if isinstance(value, Mapping):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend((item, depth + 1) for item in value)
    return True
