"""W4: session.commit() of 100 new objects: one ExecuteTransaction, against boto3 sending the
same 100 INSERTs as one ExecuteTransaction, and the same over raw HTTP (the floor)."""

from __future__ import annotations

import uuid

from boto3.dynamodb.types import TypeSerializer
from sqlalchemy.orm import Session

from . import floor
from .common import Env, target
from .models import items, orm_model

NAME = "W4 commit of 100 objects"


def run(env: Env, size: int = 100) -> None:
    table = env.table_name("w4")
    env.create_table(table)
    serializer = TypeSerializer()
    statement = f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'sk': ?, 'n': ?, 'name': ?, 'flag': ?}}"

    def transaction() -> list[dict]:
        return [
            {"Statement": statement, "Parameters": [serializer.serialize(v) for v in row.values()]}
            for row in items(uuid.uuid4().hex, size)
        ]

    def boto3_transaction() -> None:
        env.client.execute_transaction(TransactStatements=transaction())

    def floor_transaction() -> None:
        env.floor.call("ExecuteTransaction", {"TransactStatements": transaction()})

    model = orm_model(table)

    def session_commit() -> None:
        with Session(env.engine) as session:
            session.add_all([model(**row) for row in items(uuid.uuid4().hex, size)])
            session.commit()

    env.measure(NAME, "boto3 ExecuteTransaction", boto3_transaction)
    env.measure(NAME, floor.NAME, floor_transaction)
    commit = env.measure(NAME, "sa_dynamo session.commit", session_commit)
    commit.verdict = target(commit.calls == 1, f"exactly one ExecuteTransaction: {commit.calls} calls")
