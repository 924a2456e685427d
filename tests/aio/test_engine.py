"""create_async_engine("dynamodb+asyncio://"): Core and the driver's behaviour under asyncio,
on the real DynamoDB Local (transactions, AUTOCOMMIT batches, the scan guard, text(), stream(),
DDL through run_sync)."""

from __future__ import annotations

import json
import sys
import warnings

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, delete, insert, select, text, update
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import create_async_engine

import sa_dynamo
from sa_dynamo.dbapi import values
from sa_dynamo.dbapi.transport import TRANSPORTS, WIRE_ITEMS, chosen
from sa_dynamo.exc import ScanNotAllowed, ScanWarning
from sa_dynamo.sqlalchemy_private import greenlet_spawn


def rows_of(table: Table, *pks: str) -> list[dict]:
    return [{"pk": pk, "sk": f"s{i}", "n": i, "name": f"name {i}"} for pk in pks for i in range(3)]


async def test_core_writes_commit_as_one_transaction_and_read_back(aio_engine, calls, items):
    async with aio_engine.begin() as conn:
        await conn.execute(insert(items), rows_of(items, "a"))
        await conn.execute(update(items).where(items.c.pk == "a", items.c.sk == "s1").values(n=10))
        await conn.execute(delete(items).where(items.c.pk == "a", items.c.sk == "s2"))
    assert calls["ExecuteTransaction"] == 1
    async with aio_engine.connect() as conn:
        found = (await conn.execute(select(items.c.sk, items.c.n).where(items.c.pk == "a"))).all()
    assert found == [("s0", 0), ("s1", 10)]


async def test_a_rolled_back_transaction_sends_no_write(aio_engine, calls, items):
    async with aio_engine.connect() as conn:
        await conn.execute(insert(items), rows_of(items, "a"))
        await conn.rollback()
        assert (await conn.execute(select(items).where(items.c.pk == "a"))).all() == []
    assert calls["ExecuteTransaction"] == 0


async def test_autocommit_executemany_is_sent_in_batches_of_25(aio_engine, calls, items):
    rows = [{"pk": "b", "sk": f"s{i:02}", "n": i, "name": None} for i in range(30)]
    async with aio_engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(insert(items), rows)
        count = (await conn.execute(select(items.c.sk).where(items.c.pk == "b"))).all()
    assert len(count) == 30
    assert calls["BatchExecuteStatement"] == 2
    assert calls["ExecuteTransaction"] == 0


async def test_the_scan_guard_refuses_or_warns_as_configured(make_aio_engine, items):
    refusing = make_aio_engine(dynamodb_scan="error")
    async with refusing.connect() as conn:
        with pytest.raises(ScanNotAllowed, match="scans the whole table"):
            await conn.execute(select(items).where(items.c.n == 1))
    async with make_aio_engine().connect() as conn:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await conn.execute(select(items).where(items.c.n == 1))
    assert [w.category for w in caught] == [ScanWarning]


async def test_text_executes_as_the_statement_it_becomes(aio_engine, items):
    async with aio_engine.begin() as conn:
        await conn.execute(insert(items), rows_of(items, "t"))
    async with aio_engine.connect() as conn:
        sql = text(f'SELECT sk, n FROM "{items.name}" WHERE pk = :pk AND n >= :low')
        found = (await conn.execute(sql, {"pk": "t", "low": 1})).all()
    assert sorted(found) == [("s1", 1), ("s2", 2)]


async def test_stream_reads_one_page_per_partition_consumed(aio_engine, calls, items):
    rows = [{"pk": "p", "sk": f"s{i:02}", "n": i, "name": None} for i in range(10)]
    async with aio_engine.begin() as conn:
        await conn.execute(insert(items), rows)
    calls.clear()
    async with aio_engine.connect() as conn:
        query = select(items.c.n).where(items.c.pk == "p").execution_options(dynamodb_page_size=4)
        result = await conn.stream(query)
        partitions = result.partitions(4)
        first = await partitions.__anext__()
        assert (first, calls["ExecuteStatement"]) == ([(0,), (1,), (2,), (3,)], 1)
        rest = [row for partition in [p async for p in partitions] for row in partition]
    assert rest == [(n,) for n in range(4, 10)]
    assert calls["ExecuteStatement"] == 3  # 4 + 4 + 2 items: the third page has no NextToken


async def test_run_sync_creates_and_drops_tables(aio_engine, raw, table_name):
    metadata = MetaData()
    Table(table_name, metadata, Column("pk", String, primary_key=True), Column("n", Integer))
    async with aio_engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    described = raw.describe_table(TableName=table_name)["Table"]
    assert described["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    async with aio_engine.begin() as conn:
        assert await conn.run_sync(lambda sync: sync.dialect.has_table(sync, table_name))
        await conn.run_sync(metadata.drop_all)
    assert table_name not in raw.list_tables()["TableNames"]


async def test_explain_and_paginate_run_through_run_sync(aio_engine, items):
    async with aio_engine.begin() as conn:
        await conn.execute(insert(items), rows_of(items, "g"))
    query = select(items.c.sk).where(items.c.pk == "g")
    async with aio_engine.connect() as conn:
        plan = await conn.run_sync(sa_dynamo.explain, query)
        first = await conn.run_sync(sa_dynamo.paginate, query, 2)
        second = await conn.run_sync(sa_dynamo.paginate, query, 2, first.next)
    assert (plan.operation, plan.key_condition) == ("Query", '"pk" = ?')
    assert (first.rows, second.rows, second.next) == ([("s0",), ("s1",)], [("s2",)], None)


async def test_pages_are_read_from_dynamodb_json_on_asyncio(aio_engine, items):
    """The response fast path (wire.py; on aiobotocore, botocore_wire.py's before-parse hook) holds
    under asyncio too."""
    async with aio_engine.begin() as conn:
        await conn.execute(insert(items), [{"pk": "w", "sk": "s", "n": 1, "name": "x"}])
    async with aio_engine.connect() as conn:
        driver = (await conn.get_raw_connection()).dbapi_connection
        body = {"Statement": f'SELECT * FROM "{items.name}" WHERE "pk" = ?', "Parameters": [{"S": "w"}]}
        page = await greenlet_spawn(driver.transport.send, "ExecuteStatement", body, True)
    assert page[WIRE_ITEMS] is True
    assert [values.deserialize_wire(item["n"]) for item in page["Items"]] == [1]


async def test_without_aiobotocore_the_default_transport_runs_and_botocore_s_names_the_extra(
    monkeypatch, make_aio_engine, aio_url, items
):
    monkeypatch.setitem(sys.modules, "aiobotocore", None)  # as if never installed
    async with make_aio_engine(f"{aio_url}?transport=http").begin() as conn:
        await conn.execute(insert(items), rows_of(items, "no-aio"))
        found = (await conn.execute(select(items.c.sk).where(items.c.pk == "no-aio"))).scalars().all()
    assert found == ["s0", "s1", "s2"]
    with pytest.raises(ImportError, match=r"pip install 'sa-dynamo\[async\]', or leave transport unset"):
        async with make_aio_engine(f"{aio_url}?transport=botocore").connect():
            pass


async def test_the_aiobotocore_client_is_as_lean_as_boto3_s(make_aio_engine, aio_url, items):
    """No parameter validation and bodies the driver encodes itself (botocore_wire.py) on aiobotocore
    too: botocore serializes a stand-in with its lists empty, and what goes out is the whole
    request all the same."""
    aio_engine = make_aio_engine(f"{aio_url}?transport=botocore")
    serialized: list[dict] = []
    sent: list[dict] = []

    def record(request, **_) -> None:
        sent.append(json.loads(bytes(request.body)))

    def before_serializing(params, **_) -> None:
        serialized.append(params)

    async with aio_engine.connect() as conn:
        driver = (await conn.get_raw_connection()).dbapi_connection
        events = driver.client.meta.events
        events.register("before-send.dynamodb", record)
        events.register("before-parameter-build.dynamodb.BatchExecuteStatement", before_serializing)
        try:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(insert(items), [{"pk": "lean", "sk": f"s{i}", "n": i} for i in range(30)])
        finally:
            events.unregister("before-send.dynamodb", record)
            events.unregister("before-parameter-build.dynamodb.BatchExecuteStatement", before_serializing)
        with pytest.raises(sa_dynamo.dbapi.Error, match="greater than or equal to 1"):
            await greenlet_spawn(driver.transport.send, "ListTables", {"Limit": 0})
    assert serialized == [{"Statements": [], "ReturnConsumedCapacity": "INDEXES"}] * 2
    assert [len(body["Statements"]) for body in sent] == [25, 5]
    assert sent[1]["Statements"][4]["Parameters"] == [{"S": "lean"}, {"S": "s29"}, {"N": "29"}]


@pytest.mark.parametrize(
    ("name", "sends_by"),
    [
        ("aiobotocore", "aiobotocore"),
        ("asyncio", None),  # the default transport: the driver's own, or SA_DYNAMO_TRANSPORT's
        ("", None),  # create_async_engine("dynamodb://") is dynamodb+asyncio://
    ],
)
async def test_the_url_s_driver_name_is_what_sends(make_aio_engine, endpoint_url, name, sends_by):
    url = f"dynamodb{'+' if name else ''}{name}://{endpoint_url.removeprefix('http://')}"
    engine = make_aio_engine(url)
    async with engine.connect() as conn:
        names = await conn.run_sync(lambda sync: sync.dialect.get_table_names(sync))
        transport = (await conn.get_raw_connection()).dbapi_connection.transport
    assert isinstance(names, list)
    expected = sends_by or ("aiobotocore" if chosen(None) == "botocore" else "asyncio_http")
    assert type(transport).__module__ == f"sa_dynamo.dbapi.transport.{expected}"
    assert engine.dialect.driver == (name or "asyncio")


def test_aiobotocore_s_url_takes_no_other_transport(endpoint_url):
    with pytest.raises(ArgumentError, match=r"write dynamodb\+asyncio:// for the driver's own asyncio"):
        create_async_engine(f"dynamodb+aiobotocore://{endpoint_url.removeprefix('http://')}?transport=http")


async def test_both_asyncio_transports_send_the_same_bytes(make_aio_engine, proxy, items):
    """The driver's own asyncio requests (its own encoding and signing) carry exactly the bodies
    aiobotocore's do, as the fault proxy in front of DynamoDB Local receives them."""
    rows = [{"pk": "same", "sk": f"s{i}", "n": i, "name": "x \u00fc"} for i in range(30)]
    sent = {}
    for transport in TRANSPORTS:
        engine = make_aio_engine(f"dynamodb+asyncio://127.0.0.1:{proxy.port}?transport={transport}")
        before = len(proxy.received)
        async with engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(sa_dynamo.upsert(items), rows)
            found = (await conn.execute(select(items.c.n).where(items.c.pk == "same"))).scalars().all()
            await conn.execute(delete(items).where(items.c.pk == "same", items.c.sk == "s1"))
        assert sorted(found) == list(range(30))
        sent[transport] = [(operation, body) for operation, _, body in proxy.received[before:]]
    assert [operation for operation, _ in sent["http"]] == [
        "BatchWriteItem",
        "BatchWriteItem",
        "ExecuteStatement",
        "ExecuteStatement",
    ]
    assert sent["http"] == sent["botocore"]
