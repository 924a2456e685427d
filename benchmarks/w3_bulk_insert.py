"""W3: 5,000 inserts: AUTOCOMMIT executemany (BatchExecuteStatement, SQL INSERT semantics) vs
a raw BatchExecuteStatement loop; sa_dynamo's upsert and PynamoDB's batch_write (BatchWriteItem,
overwrite semantics) vs a raw BatchWriteItem loop; the ORM's session.commit() of 100 objects at a
time (an ExecuteTransaction each) vs the same transactions over raw HTTP. Each raw loop runs
with boto3 and over raw HTTP (the floor), and asking for the consumed capacity as the driver
does (``ReturnConsumedCapacity``: DynamoDB Local spends time reporting it)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from boto3.dynamodb.types import TypeSerializer
from sqlalchemy import insert
from sqlalchemy.orm import Session

from sa_dynamo import upsert

from . import floor
from .common import BOTOCORE, Env, target
from .models import items, orm_model, pynamodb_model

NAME = "W3 bulk insert"
# The driver asks every write for its consumed capacity (cursor.consumed), which costs DynamoDB
# Local time of its own (docs/partiql-findings.md): these boto3 rows ask as the driver does.
ASKING = " + ReturnConsumedCapacity"
CAPACITY = {"ReturnConsumedCapacity": "INDEXES"}
COMMIT = 100  # objects a session.commit(), statements an ExecuteTransaction


def run(env: Env, size: int = 5_000) -> None:
    serializer = TypeSerializer()
    counter = iter(range(1_000_000))

    def fresh_table() -> str:
        name = env.table_name(f"w3_{next(counter)}")
        env.create_table(name)
        return name

    rows = items("P", size)
    tables = {
        key: [fresh_table() for _ in range(env.repetitions)]
        for key in (
            "raw",
            "raw_capacity",
            "raw_floor",
            "sa",
            "sa_botocore",
            "put",
            "put_capacity",
            "put_floor",
            "put_floor_capacity",
            "upsert",
            "upsert_botocore",
            "pynamo",
            "orm",
            "orm_botocore",
            "transaction_floor",
        )
    }

    def raw_batch_execute(key: str, send: Callable[[list[dict]], object], per: int = 25) -> None:
        table = tables[key].pop()
        statement = f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'sk': ?, 'n': ?, 'name': ?, 'flag': ?}}"
        for start in range(0, len(rows), per):
            batch = [
                {"Statement": statement, "Parameters": [serializer.serialize(v) for v in row.values()]}
                for row in rows[start : start + per]
            ]
            send(batch)

    def sa_executemany(key: str, engine: Any) -> None:
        model = orm_model(tables[key].pop())
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(insert(model.__table__), rows)

    def raw_batch_write(key: str, send: Callable[[dict], object]) -> None:
        table = tables[key].pop()
        for start in range(0, len(rows), 25):
            requests = [
                {"PutRequest": {"Item": {k: serializer.serialize(v) for k, v in row.items()}}}
                for row in rows[start : start + 25]
            ]
            send({table: requests})

    def boto3_loops(contender: str, loop: Callable[..., None], key: str, send: Callable[..., object]) -> None:
        """``loop`` sending with boto3, plainly (``key``'s tables) and asking for the capacity."""
        for suffix, tables_key, options in (("", key, {}), (ASKING, f"{key}_capacity", CAPACITY)):
            env.measure(
                NAME,
                contender + suffix,
                partial(loop, tables_key, partial(send, **options)),
            )

    boto3_loops(
        "boto3 BatchExecuteStatement loop",
        raw_batch_execute,
        "raw",
        lambda batch, **options: env.client.batch_execute_statement(Statements=batch, **options),
    )
    env.measure(
        NAME,
        f"{floor.NAME} BatchExecuteStatement",
        partial(
            raw_batch_execute,
            "raw_floor",
            lambda batch: env.floor.call("BatchExecuteStatement", {"Statements": batch}),
        ),
    )
    batches = math.ceil(size / 25)
    for suffix, key, engine in (("", "sa", env.engine), (BOTOCORE, "sa_botocore", env.botocore_engine)):
        inserted = env.measure(
            NAME, f"sa_dynamo AUTOCOMMIT executemany{suffix}", partial(sa_executemany, key, engine)
        )
        inserted.verdict = target(inserted.calls == batches, f"exactly {batches} calls: {inserted.calls}")

    def sa_upsert(key: str, engine: Any) -> None:
        model = orm_model(tables[key].pop())
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(upsert(model.__table__), rows)

    boto3_loops(
        "boto3 BatchWriteItem loop (overwrite)",
        raw_batch_write,
        "put",
        lambda requests, **options: env.client.batch_write_item(RequestItems=requests, **options),
    )
    for suffix, key, options in (("", "put_floor", {}), (ASKING, "put_floor_capacity", CAPACITY)):
        env.measure(
            NAME,
            f"{floor.NAME} BatchWriteItem{suffix}",
            partial(
                raw_batch_write,
                key,
                lambda requests, o=options: env.floor.call("BatchWriteItem", {"RequestItems": requests, **o}),
            ),
        )
    for suffix, key, engine in (
        ("", "upsert", env.engine),
        (BOTOCORE, "upsert_botocore", env.botocore_engine),
    ):
        env.measure(NAME, f"sa_dynamo upsert (overwrite){suffix}", partial(sa_upsert, key, engine))
    models = [pynamodb_model(table, env.endpoint_url) for table in tables["pynamo"]]
    if models[0] is not None:

        def pynamo_batch_write() -> None:
            model = models.pop()
            with model.batch_write() as batch:
                for row in rows:
                    batch.save(model(**row))

        env.measure(NAME, "PynamoDB batch_write (overwrite)", pynamo_batch_write)

    def transaction(batch: list[dict]) -> object:
        """The request the driver's commit sends: a token, and asking for the capacity."""
        body = {"TransactStatements": batch, "ClientRequestToken": uuid.uuid4().hex, **CAPACITY}
        return env.floor.call("ExecuteTransaction", body)

    def orm_commits(key: str, engine: Any) -> None:
        model = orm_model(tables[key].pop())
        for start in range(0, len(rows), COMMIT):
            with Session(engine) as session:
                session.add_all([model(**row) for row in rows[start : start + COMMIT]])
                session.commit()

    env.measure(
        NAME,
        f"{floor.NAME} ExecuteTransaction of {COMMIT}{ASKING}",
        partial(raw_batch_execute, "transaction_floor", transaction, COMMIT),
    )
    commits = math.ceil(size / COMMIT)
    for suffix, key, engine in (("", "orm", env.engine), (BOTOCORE, "orm_botocore", env.botocore_engine)):
        committed = env.measure(
            NAME, f"sa_dynamo ORM commits of {COMMIT}{suffix}", partial(orm_commits, key, engine)
        )
        committed.verdict = target(committed.calls == commits, f"exactly {commits} calls: {committed.calls}")
