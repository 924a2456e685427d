"""The CPU of a whole point read through botocore, without a server: the driver's real client
(signing, serializing, the event system, parsing) answered from a canned HTTP response through
botocore's public ``before-send`` event. W1's three contenders side by side: Core
``select().one()``, ``session.get`` and raw boto3 ``get_item``. For profiling only.

    python -m benchmarks.profile_request_path            # CPU per call, best of --runs rounds
    python -m benchmarks.profile_request_path --profile  # plus the top of a cProfile of each
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from typing import Any

import boto3
from botocore.awsrequest import AWSResponse
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from sa_dynamo import dbapi
from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

from . import common
from .models import orm_model

TABLE = "bench_request_path"
ENDPOINT = "http://127.0.0.1:9"  # never reached: every request is answered before it is sent
_ITEM = {
    "pk": {"S": "P"},
    "sk": {"S": "000001"},
    "n": {"N": "1"},
    "name": {"S": "item 1"},
    "flag": {"BOOL": True},
}
_ANSWERS = {
    "ExecuteStatement": {"Items": [_ITEM]},
    "GetItem": {"Item": _ITEM},
}


class _Raw:
    """What botocore reads an HTTP body from."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body


def canned(request: Any, **_: Any) -> AWSResponse:
    """botocore's ``before-send`` hook: the answer DynamoDB would give, without a socket."""
    operation = request.headers["X-Amz-Target"].decode().rpartition(".")[2]
    body = json.dumps(_ANSWERS[operation]).encode()
    headers = {"content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "canned"}
    return AWSResponse(request.url, 200, headers, _Raw(body))


def answered(client: Any) -> Any:
    client.meta.events.register("before-send.dynamodb", canned)
    return client


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each contender")
    parser.add_argument("--reads", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=30, help="rows of each profile")
    parser.add_argument("--sort", default="tottime", help="pstats order: tottime, cumulative")
    args = parser.parse_args(argv)
    raw = answered(
        boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name=common.REGION, **LOCAL_CREDENTIALS)
    )
    engine = create_engine(
        f"{common.DIALECT}://",
        creator=lambda: dbapi.connect(
            client=answered(dbapi.connect(endpoint_url=ENDPOINT, region_name=common.REGION).client)
        ),
    )
    model = orm_model(TABLE)
    columns = model.__table__.c
    keys = [("P", f"{i:06}") for i in range(args.reads)]

    with engine.connect() as connection, Session(engine) as session:

        def core_one() -> None:
            for pk, sk in keys:
                connection.execute(select(model.__table__).where(columns.pk == pk, columns.sk == sk)).one()

        def session_get() -> None:
            for key in keys:
                session.get(model, key)
                session.expunge_all()  # a real read each time, not the identity map

        def boto3_get_item() -> None:
            for pk, sk in keys:
                raw.get_item(TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": sk}})

        contenders = {
            "boto3 get_item": boto3_get_item,
            "sa_dynamo Core select().one()": core_one,
            "sa_dynamo session.get": session_get,
        }
        baseline = None
        for label, work in contenders.items():
            cpu = common.least_cpu(work, args.runs) / args.reads
            baseline = baseline or cpu
            print(f"{label:35s} {cpu * 1e6:8.1f} us per call   {cpu / baseline:5.2f}x boto3 get_item")
        if args.profile:
            for label, work in contenders.items():
                print(f"\n== {label}")
                profiler = cProfile.Profile(time.process_time)  # CPU, not the wall clock
                profiler.runcall(work)
                pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
