"""W0: the client CPU of one point read, without a server: every contender answered from a canned
HTTP response, so that only client-side work counts (issue 28's first target). Raw boto3
``get_item`` and ``execute_statement`` are answered through botocore's public ``before-send``
event (which skips urllib3); the driver's HTTP transport through a stand-in for its HTTP pool
that returns the same answer (which skips the socket); sa_dynamo on ``transport=botocore``
the way boto3 is. Each canned answer carries its ``x-amz-crc32``, as DynamoDB's do, so the
checksum is checked as in a real read. The asyncio rows are the same: aiobotocore's
``get_item`` answered at its ``before-send`` event, ``AsyncSession.get`` on each transport
(the default's pool for the event loop replaced by a canned one), each read awaited in turn
on one event loop.
"""

from __future__ import annotations

import asyncio
import json
import uuid
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import boto3
from botocore.awsrequest import AWSResponse
from sqlalchemy import create_engine, select
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from sqlalchemy.orm import Session

from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

from . import common
from .common import BOTOCORE, Env, Result, least_cpu_in_turns
from .models import orm_model

NAME = "W0 client CPU per point read (canned answers)"
# The driver's layers from the bottom up: each row of one adds its CPU to the row of the one below.
LAYERS = ("transport.send", "DBAPI cursor.execute", "Core select().one()", "session.get")
# Never reached: every request is answered before it would be sent.
ENDPOINT = "http://canned.invalid:9"
_ITEM = {
    "pk": {"S": "P"},
    "sk": {"S": "000001"},
    "n": {"N": "1"},
    "name": {"S": "item 1"},
    "flag": {"BOOL": True},
}
_ANSWERS = {
    "ExecuteStatement": json.dumps({"Items": [_ITEM]}).encode(),
    "GetItem": json.dumps({"Item": _ITEM}).encode(),
}


def _headers(body: bytes) -> dict[str, str]:
    return {
        "content-type": "application/x-amz-json-1.0",
        "x-amzn-requestid": "canned",
        "x-amz-crc32": str(zlib.crc32(body) & 0xFFFFFFFF),
    }


def _operation(target: Any) -> str:
    return (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]


class _Raw:
    """What botocore reads an HTTP body from."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body


def canned(request: Any, **_: Any) -> AWSResponse:
    """botocore's ``before-send`` hook: the answer DynamoDB would give, without a socket."""
    body = _ANSWERS[_operation(request.headers["X-Amz-Target"])]
    return AWSResponse(request.url, 200, _headers(body), _Raw(body))


class _AsyncRaw(_Raw):
    """What aiobotocore reads an HTTP body from."""

    async def read(self) -> bytes:
        return self.body


def canned_async(request: Any, **_: Any) -> Any:
    """aiobotocore's ``before-send`` hook: the answer DynamoDB would give, without a socket."""
    from aiobotocore.awsrequest import AioAWSResponse

    body = _ANSWERS[_operation(request.headers["X-Amz-Target"])]
    return AioAWSResponse(request.url, 200, _headers(body), _AsyncRaw(body))


class CannedPool:
    """Stands in for the HTTP transport's pool: the answer DynamoDB would give."""

    def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        body = _ANSWERS[_operation(headers["X-Amz-Target"])]
        return 200, _headers(body), body

    def close(self) -> None:
        pass


class CannedAsyncPool(CannedPool):
    """Stands in for the asyncio transport's pool."""

    async def post(self, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:  # type: ignore[override]
        return CannedPool.post(self, headers, payload)


@contextmanager
def contenders(reads: int) -> Iterator[dict[str, Callable[[], None]]]:
    """Each contender's ``reads`` point reads, by name, all answered from canned responses."""
    raw = boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name=common.REGION, **LOCAL_CREDENTIALS)
    raw.meta.events.register("before-send.dynamodb", canned)
    key = f"{LOCAL_CREDENTIALS['aws_access_key_id']}:{quote(LOCAL_CREDENTIALS['aws_secret_access_key'])}"
    url = f"{common.DIALECT}://{key}@canned.invalid:9?region_name={common.REGION}"
    engines = {
        "": create_engine(f"{url}&transport=http"),
        BOTOCORE: create_engine(f"{url}&transport=botocore"),
    }
    table = f"bench_request_path_{uuid.uuid4().hex[:6]}"  # never created: nothing is sent
    model = orm_model(table)
    columns = model.__table__.c
    keys = [("P", f"{i:06}") for i in range(reads)]
    statement = f'SELECT "pk", "sk", "n", "name", "flag" FROM "{table}" WHERE "pk" = ? AND "sk" = ?'
    works: dict[str, Callable[[], None]] = {
        "boto3 get_item": lambda: [
            raw.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}) for pk, sk in keys
        ],
        "boto3 execute_statement": lambda: [
            raw.execute_statement(Statement=statement, Parameters=[{"S": pk}, {"S": sk}]) for pk, sk in keys
        ],
    }
    opened: list[Any] = []

    def layers(connection: Any, session: Session) -> dict[str, Callable[[], None]]:
        """From the transport alone up to the ORM: what each layer adds to a read."""
        dbapi_connection = connection.connection.dbapi_connection
        cursor, transport = dbapi_connection.cursor(), dbapi_connection.transport

        def send() -> None:
            for pk, sk in keys:
                body = {"Statement": statement, "Parameters": [{"S": pk}, {"S": sk}]}
                transport.send("ExecuteStatement", {**body, "ReturnConsumedCapacity": "TOTAL"}, True)

        def cursor_execute() -> None:
            for pk, sk in keys:
                cursor.execute(statement, [pk, sk])
                cursor.fetchall()

        def core_one() -> None:
            for pk, sk in keys:
                connection.execute(select(model.__table__).where(columns.pk == pk, columns.sk == sk)).one()

        def session_get() -> None:
            for key in keys:
                session.get(model, key)
                session.expunge_all()  # a real read each time, not the identity map

        return dict(zip(LAYERS, (send, cursor_execute, core_one, session_get), strict=True))

    for suffix, engine in engines.items():
        connection, session = engine.connect(), Session(engine)
        opened += [connection, session]
        transport = connection.connection.dbapi_connection.transport
        if suffix:
            transport.client.meta.events.register("before-send.dynamodb", canned)
        else:
            transport.route.pool = CannedPool()
        works.update(
            {f"sa_dynamo {name}{suffix}": work for name, work in layers(connection, session).items()}
        )
    loop = asyncio.new_event_loop()
    closing = loop.run_until_complete(_async_contenders(url, model, keys, works))
    try:
        yield works
    finally:
        for each in opened:
            each.close()
        for engine in engines.values():
            engine.dispose()
        loop.run_until_complete(closing())
        loop.close()


async def _async_contenders(
    url: str, model: Any, keys: list[tuple[str, str]], works: dict[str, Callable[[], None]]
) -> Callable[[], Any]:
    """aiobotocore's ``get_item`` and ``AsyncSession.get`` on each transport, canned, added to
    ``works`` (each runs its reads on the running loop); what closes them."""
    from aiobotocore.session import AioSession

    loop = asyncio.get_running_loop()
    creating = AioSession().create_client(
        "dynamodb", endpoint_url=ENDPOINT, region_name=common.REGION, **LOCAL_CREDENTIALS
    )
    client = await creating.__aenter__()
    client.meta.events.register("before-send.dynamodb", canned_async)
    table = model.__tablename__

    async def get_items() -> None:
        for pk, sk in keys:
            await client.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}})

    works["aiobotocore get_item"] = lambda: loop.run_until_complete(get_items())
    engines, sessions = [], []
    for suffix, transport_name in (("", "http"), (BOTOCORE, "botocore")):
        engine = create_async_engine(
            f"{common.DIALECT}+asyncio:{url.partition(':')[2]}&transport={transport_name}"
        )
        connection = await engine.connect()
        transport = (await connection.get_raw_connection()).dbapi_connection.transport
        if suffix:
            transport.client.meta.events.register("before-send.dynamodb", canned_async)
        else:
            transport.route.pool = CannedAsyncPool()
        session = AsyncSession(bind=connection)
        engines.append((engine, connection))
        sessions.append(session)

        async def session_gets(session: AsyncSession = session) -> None:
            for key in keys:
                await session.get(model, key)
                session.expunge_all()  # a real read each time, not the identity map

        works[f"sa_dynamo AsyncSession.get{suffix}"] = lambda gets=session_gets: loop.run_until_complete(
            gets()
        )

    async def close() -> None:
        for session in sessions:
            await session.close()
        for engine, connection in engines:
            await connection.close()
            await engine.dispose()
        await creating.__aexit__(None, None, None)

    return close


def run(env: Env, reads: int = 1000) -> None:
    """Each contender's least CPU over the repetitions, in turns; each layer of the driver's also
    what it adds to the layer below it on the same transport."""
    below: dict[str, tuple[str, float]] = {}  # by transport suffix: the last layer measured
    with contenders(reads) as works:
        for contender, cpu in least_cpu_in_turns(works, max(env.repetitions, 3)).items():
            note = f"{cpu / reads * 1e6:.0f} us CPU per read"
            layer = next((each for each in LAYERS if contender.startswith(f"sa_dynamo {each}")), None)
            if layer is not None:
                suffix = contender.removeprefix(f"sa_dynamo {layer}")
                if suffix in below:
                    under, under_cpu = below[suffix]
                    note += f", {(cpu - under_cpu) / reads * 1e6:+.0f} us over {under}"
                below[suffix] = layer, cpu
            env.results.append(Result(NAME, contender, cpu, note=note))
