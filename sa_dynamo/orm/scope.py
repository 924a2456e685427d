"""Which executions and flushes sa_dynamo's listeners act on: only those sent to DynamoDB.

SQLAlchemy's ``Session`` and ``Mapper`` events fire for every database in the process, so a
listener registered on them sees a SQLite session's statements as well; each one asks here
first, and leaves another database's statements and writes exactly as SQLAlchemy made them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Mapper, ORMExecuteState

DIALECT = "dynamodb"


def is_dynamodb(bind: Any) -> bool:
    """Whether ``bind`` (an Engine or Connection) talks to DynamoDB through this dialect."""
    return getattr(getattr(bind, "dialect", None), "name", None) == DIALECT


def on_dynamodb(state: ORMExecuteState, mapper: Mapper | None = None) -> bool:
    """Whether the session sends ``state``'s statement (for ``mapper``, when given) to DynamoDB."""
    return dynamodb_bind(state, mapper) is not None


def dynamodb_bind(state: ORMExecuteState, mapper: Mapper | None = None) -> Any:
    """The Engine or Connection that sends ``state``'s statement (for ``mapper``, when given) to
    DynamoDB; None when another database's gets it."""
    arguments = dict(state.bind_arguments)
    if mapper is not None:
        arguments["mapper"] = mapper
    try:
        bind = state.session.get_bind(**arguments)
    except Exception:  # no bind at all: nothing will be sent, by us or by anyone
        return None
    return bind if is_dynamodb(bind) else None
