"""The benchmarks' counting proxy: every contender's requests pass it and are counted the same
way, with the capacity units each asked for; and ``--save`` writes a run with its header. It
asserts what was sent and written, never how long anything took."""

from __future__ import annotations

import asyncio
import re

import boto3
import botocore
import sqlalchemy
from sqlalchemy import select

from benchmarks import record, run
from benchmarks.common import REGION, Env
from benchmarks.models import items, orm_model
from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS


def test_the_proxy_counts_each_contender_s_requests_and_the_capacity_it_asked_for(endpoint_url: str) -> None:
    env = Env(endpoint_url, 1)
    try:
        table = env.table_name("counting")
        env.create_table(table)
        env.load(table, items("P", 3))
        keys = [{"pk": {"S": "P"}, "sk": {"S": f"{i:06}"}} for i in range(3)]
        columns = orm_model(table).__table__

        def core(engine: object) -> None:
            with engine.connect() as connection:
                for key in keys:
                    where = (columns.c.pk == key["pk"]["S"], columns.c.sk == key["sk"]["S"])
                    connection.execute(select(columns).where(*where)).one()

        async def aiobotocore_reads() -> None:
            from aiobotocore.session import AioSession

            creating = AioSession().create_client(
                "dynamodb", endpoint_url=env.endpoint_url, region_name=REGION, **LOCAL_CREDENTIALS
            )
            async with creating as client:
                for key in keys:
                    await client.get_item(TableName=table, Key=key)

        contenders = {
            "boto3, asking": lambda: [
                env.client.get_item(TableName=table, Key=key, ReturnConsumedCapacity="TOTAL") for key in keys
            ],
            "floor": lambda: [env.floor.call("GetItem", {"TableName": table, "Key": key}) for key in keys],
            "floor, asking": lambda: [
                env.floor.call("GetItem", {"TableName": table, "Key": key, "ReturnConsumedCapacity": "TOTAL"})
                for key in keys
            ],
            "sa_dynamo http": lambda: core(env.engine),
            "sa_dynamo botocore": lambda: core(env.botocore_engine),
            "aiobotocore": lambda: asyncio.run(aiobotocore_reads()),
            # DynamoDB Local answers a Query in chunks: the proxy passes them on whole
            "boto3 Query": lambda: env.client.query(
                TableName=table,
                KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "P"}},
                ReturnConsumedCapacity="TOTAL",
            ),
        }
        rows = {name: env.measure("counting", name, work) for name, work in contenders.items()}
        assert {name: row.calls for name, row in rows.items()} == {
            **dict.fromkeys(contenders, 3),
            "boto3 Query": 1,
        }
        # eventually consistent reads: half a unit each; the driver asks too, but DynamoDB Local
        # reports no capacity for PartiQL
        assert {name: row.units for name, row in rows.items()} == {
            "boto3, asking": 1.5,
            "floor": None,
            "floor, asking": 1.5,
            "sa_dynamo http": None,
            "sa_dynamo botocore": None,
            "aiobotocore": None,
            "boto3 Query": 0.5,
        }
        assert (
            env.client.query(
                TableName=table,
                KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "P"}},
            )["Count"]
            == 3
        )
    finally:
        env.close()
    assert env.proxy.process.poll() is not None  # the proxy's process ended with the run


def test_save_writes_the_run_s_tables_under_a_header_of_date_machine_and_versions(
    endpoint_url: str, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    assert run.main(["--endpoint", endpoint_url, "--quick", "--only", "W6", "--save"]) == 0
    saved = list(tmp_path.iterdir())
    assert len(saved) == 1 and re.fullmatch(r"\d{4}-\d\d-\d\d-\d{4}\.md", saved[0].name), saved
    text = saved[0].read_text()
    head, _, tables = text.partition("\n### ")
    assert head.startswith(f"# Benchmark run of {saved[0].name[:10]} ")
    for line in (
        f"- Command: `python -m benchmarks.run --endpoint {endpoint_url} --quick --only W6 --save`",
        f"- DynamoDB Local: at {endpoint_url}",
        f"- SQLAlchemy {sqlalchemy.__version__}",
        f"- boto3 {boto3.__version__}",
        f"- botocore {botocore.__version__}",
    ):
        assert line in head.splitlines(), (line, head)
    assert re.search(r"^- Machine: \d+ cores, [\d.]+ GB memory, .+; load average", head, re.M), head
    assert re.search(r"^- Python 3\.\d+\.\d+", head, re.M), head
    assert re.search(r"^- (pynamodb|aiodynamo) ", head, re.M), head
    assert tables.startswith("W6 ") and "| Contender |" in tables
    assert f"saved: {saved[0]}" in capsys.readouterr().err
