"""What ``alembic upgrade --sql`` prints for a write: the request it would be, readably.

PartiQL has no literals the dialect would splice values into, so a write prints as the
ExecuteStatement it becomes (the version row's move as its ExecuteTransaction): the PartiQL with
``?`` placeholders and the parameters beside it, in the same form echo shows DDL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.sql import Executable, visitors
from sqlalchemy.sql.elements import BindParameter

from sa_dynamo.dbapi.statement import without_returning_old
from sa_dynamo.dialect.base import DynamoDBDialect
from sa_dynamo.dialect.ddl import render_call


def _plain(element: Any) -> Any:
    # Offline, Alembic's bulk_insert passes values as literal-rendering parameters.
    if isinstance(element, BindParameter) and type(element) is not BindParameter:
        return bindparam(element.key, element.value, type_=element.type, unique=True)
    return None


def _request(statement: Executable) -> dict[str, Any]:
    # A default dialect: the offline context's may be configured with another paramstyle.
    compiled = visitors.replacement_traverse(statement, {}, _plain).compile(dialect=DynamoDBDialect())
    params = compiled.construct_params()
    return {
        "Statement": without_returning_old(str(compiled)),
        "Parameters": [params[name] for name in compiled.positiontup or ()],
    }


def execute_statement(statement: Executable) -> str:
    return render_call("ExecuteStatement", _request(statement))


def execute_transaction(statements: list[Executable]) -> str:
    return render_call("ExecuteTransaction", {"TransactStatements": [_request(s) for s in statements]})
