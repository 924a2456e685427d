"""W1: point reads by full key: session.get and Core select().one() vs boto3 GetItem, the same
GetItem over raw HTTP (the floor), the same PartiQL through boto3, PynamoDB get and PyDynamoDB."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import floor
from .common import Env, engine_client
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

    model = orm_model(table)

    def session_get() -> None:
        with Session(env.engine) as session:
            for key in keys:
                session.get(model, key)
                session.expunge_all()  # a real read each time, not the identity map

    columns = model.__table__.c

    def core_one() -> None:
        with env.engine.connect() as connection:
            for pk, sk in keys:
                connection.execute(select(model.__table__).where(columns.pk == pk, columns.sk == sk)).one()

    env.measure(NAME, "boto3 GetItem", boto3_get_item)
    env.measure(NAME, floor.NAME, floor_get_item, env.floor)
    env.measure(NAME, "boto3 ExecuteStatement (same PartiQL)", boto3_partiql)
    env.measure(NAME, "sa_dynamo Core select().one()", core_one, engine_client(env.engine))
    env.measure(NAME, "sa_dynamo session.get", session_get, engine_client(env.engine))
    pynamo = pynamodb_model(table, env.endpoint_url)
    if pynamo is not None:
        client = pynamo._get_connection().connection.client
        env.measure(NAME, "PynamoDB Model.get", lambda: [pynamo.get(pk, sk) for pk, sk in keys], client)
    connection = pydynamodb_connection(env.endpoint_url)
    if connection is not None:
        cursor = connection.cursor()

        def pydynamodb_select() -> None:
            for key in keys:
                cursor.execute(statement, list(key))
                cursor.fetchall()

        env.measure(NAME, "PyDynamoDB cursor.execute", pydynamodb_select, connection.client)
