"""W1: point reads by full key: session.get and Core select().one() (on the default transport and
on transport=botocore) vs boto3 GetItem, the same GetItem over raw HTTP (the floor), the same
PartiQL through boto3 and over raw HTTP (the floor the targets are set against: the driver sends
that PartiQL), PynamoDB get and PyDynamoDB."""

from __future__ import annotations

from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import floor
from .common import BOTOCORE, Env
from .models import items, orm_model, pydynamodb_connection, pynamodb_model

NAME = "W1 point reads"


def run(env: Env, reads: int = 1000) -> None:
    table = env.table_name("w1")
    env.create_table(table)
    env.load(table, items("P", reads))
    keys = [("P", f"{i:06}") for i in range(reads)]
    statement = f'SELECT "pk", "sk", "n", "name", "flag" FROM "{table}" WHERE "pk" = ? AND "sk" = ?'

    def boto3_get_item() -> None:
        for pk, sk in keys:
            env.client.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}})

    def floor_get_item() -> None:
        for pk, sk in keys:
            env.floor.call("GetItem", {"TableName": table, "Key": {"pk": {"S": pk}, "sk": {"S": sk}}})

    def boto3_partiql() -> None:
        for pk, sk in keys:
            env.client.execute_statement(Statement=statement, Parameters=[{"S": pk}, {"S": sk}])

    def floor_partiql() -> None:
        for pk, sk in keys:
            env.floor.call("ExecuteStatement", {"Statement": statement, "Parameters": [{"S": pk}, {"S": sk}]})

    model = orm_model(table)

    def session_get(engine: Any) -> None:
        with Session(engine) as session:
            for key in keys:
                session.get(model, key)
                session.expunge_all()  # a real read each time, not the identity map

    columns = model.__table__.c

    def core_one(engine: Any) -> None:
        with engine.connect() as connection:
            for pk, sk in keys:
                connection.execute(select(model.__table__).where(columns.pk == pk, columns.sk == sk)).one()

    env.measure(NAME, "boto3 GetItem", boto3_get_item)
    env.measure(NAME, f"{floor.NAME} GetItem", floor_get_item)
    env.measure(NAME, "boto3 ExecuteStatement (same PartiQL)", boto3_partiql)
    env.measure(NAME, floor.PARTIQL, floor_partiql)
    for suffix, engine in (("", env.engine), (BOTOCORE, env.botocore_engine)):
        env.measure(NAME, f"sa_dynamo Core select().one(){suffix}", partial(core_one, engine))
        env.measure(NAME, f"sa_dynamo session.get{suffix}", partial(session_get, engine))
    pynamo = pynamodb_model(table, env.endpoint_url)
    if pynamo is not None:
        env.measure(NAME, "PynamoDB Model.get", lambda: [pynamo.get(pk, sk) for pk, sk in keys])
    connection = pydynamodb_connection(env.endpoint_url)
    if connection is not None:
        cursor = connection.cursor()

        def pydynamodb_select() -> None:
            for key in keys:
                cursor.execute(statement, list(key))
                cursor.fetchall()

        env.measure(NAME, "PyDynamoDB cursor.execute", pydynamodb_select)
