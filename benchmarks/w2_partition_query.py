"""W2: one partition of 1,000 items into objects: the ORM and Core (on the default transport and
on transport=botocore) vs boto3 paging a Query + TypeDeserializer, boto3 paging the same PartiQL
+ TypeDeserializer, the same paging over raw HTTP (the floor), PynamoDB query and PyDynamoDB."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from . import floor
from .common import BOTOCORE, Env
from .models import items, orm_model, pydynamodb_connection, pynamodb_model

NAME = "W2 partition query"


def run(env: Env, size: int = 1000) -> None:
    table = env.table_name("w2")
    env.create_table(table)
    env.load(table, items("P", size))
    statement = f'SELECT "pk", "sk", "n", "name", "flag" FROM "{table}" WHERE "pk" = ?'
    deserializer = TypeDeserializer()

    def deserialized(page: dict) -> list[dict]:
        return [{k: deserializer.deserialize(v) for k, v in item.items()} for item in page["Items"]]

    def query_all() -> list[dict]:
        rows: list[dict] = []
        request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "P"}},
        }
        while True:
            page = env.client.query(**request)
            rows += deserialized(page)
            if "LastEvaluatedKey" not in page:
                return rows
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def read_all(execute_statement: Callable[..., dict]) -> list[dict]:
        rows, token = [], None
        while True:
            page = execute_statement(
                Statement=statement, Parameters=[{"S": "P"}], **({"NextToken": token} if token else {})
            )
            rows += deserialized(page)
            token = page.get("NextToken")
            if token is None:
                return rows

    model = orm_model(table)

    def orm_query(engine: Any) -> list:
        with Session(engine) as session:
            return session.scalars(select(model).where(model.pk == "P")).all()

    def core_query(engine: Any) -> list:
        with engine.connect() as connection:
            return connection.execute(select(model.__table__).where(model.__table__.c.pk == "P")).all()

    def floor_statement(**body: object) -> dict:
        return env.floor.call("ExecuteStatement", body)

    env.measure(NAME, "boto3 Query + TypeDeserializer", query_all)
    env.measure(
        NAME, "boto3 ExecuteStatement + TypeDeserializer", partial(read_all, env.client.execute_statement)
    )
    env.measure(NAME, floor.NAME, partial(read_all, floor_statement))
    for suffix, engine in (("", env.engine), (BOTOCORE, env.botocore_engine)):
        env.measure(NAME, f"sa_dynamo ORM select{suffix}", partial(orm_query, engine))
        env.measure(NAME, f"sa_dynamo Core select{suffix}", partial(core_query, engine))
    pynamo = pynamodb_model(table, env.endpoint_url)
    if pynamo is not None:
        env.measure(NAME, "PynamoDB Model.query", lambda: list(pynamo.query("P")))
    connection = pydynamodb_connection(env.endpoint_url)
    if connection is not None:
        cursor = connection.cursor()

        def pydynamodb_select() -> list:
            cursor.execute(statement, ["P"])
            return cursor.fetchall()

        env.measure(NAME, "PyDynamoDB cursor.execute", pydynamodb_select)
