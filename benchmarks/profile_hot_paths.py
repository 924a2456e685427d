"""The CPU that sa_dynamo and SQLAlchemy add to W1 (point reads) and W2 (a partition into
objects), without DynamoDB: a fake client answers every ExecuteStatement from canned items, so
what is timed is only the driver, the dialect and the ORM, layer by layer. For profiling, never
as a test of behaviour (the fake client skips botocore, and so the driver's own JSON reading).

    python -m benchmarks.profile_hot_paths            # microseconds per read / per item
    python -m benchmarks.profile_hot_paths --profile  # plus the top of a cProfile of each
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
from collections.abc import Callable
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from sqlalchemy import bindparam, create_engine, select
from sqlalchemy.orm import Session

from sa_dynamo import dbapi

from . import common
from .models import orm_model


def _item(i: int) -> dict[str, Any]:
    return {
        "pk": {"S": "P"},
        "sk": {"S": f"{i:06}"},
        "n": {"N": str(i)},
        "name": {"S": f"item {i}"},
        "flag": {"BOOL": i % 2 == 0},
    }


class FakeClient:
    """Answers ExecuteStatement from canned items (as botocore parses them): one item for a
    statement with a sort-key condition, else the partition in pages of ``page`` items."""

    def __init__(self, size: int, page: int = 1000) -> None:
        self.items = [_item(i) for i in range(max(size, 1))]
        self.page = page

    def execute_statement(self, **body: Any) -> dict[str, Any]:
        if '"sk" = ?' in body["Statement"]:
            return {"Items": self.items[:1], "ConsumedCapacity": {"CapacityUnits": 0.5}}
        start = int(body.get("NextToken") or 0)
        end = start + min(self.page, body.get("Limit", self.page))
        response: dict[str, Any] = {
            "Items": self.items[start:end],
            "ConsumedCapacity": {"CapacityUnits": 1.0},
        }
        if end < len(self.items):
            response["NextToken"] = str(end)
        return response


def _report(label: str, work: Callable[[], Any], runs: int, unit: int, profile: bool) -> None:
    print(f"{label:50s} {common.least_cpu(work, runs) * 1e6 / unit:8.1f} us")
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(work)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each ORM path")
    parser.add_argument("--reads", type=int, default=1000, help="point reads per run (W1)")
    parser.add_argument("--size", type=int, default=1000, help="items in the partition (W2)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    client = FakeClient(args.size)
    # common registers sa_dynamo's dialect for dynamodb://, which PyDynamoDB also claims.
    engine = create_engine(f"{common.DIALECT}://", creator=lambda: dbapi.connect(client=client))
    model = orm_model("bench_profile")
    keys = [("P", f"{i:06}") for i in range(args.reads)]
    statement = 'SELECT "pk", "sk", "n", "name", "flag" FROM "bench_profile" WHERE "pk" = ? AND "sk" = ?'
    core = select(model.__table__).where(model.pk == bindparam("pk"), model.sk == bindparam("sk"))
    deserializer = TypeDeserializer()

    with engine.connect() as connection, Session(engine) as session:
        cursor = connection.connection.dbapi_connection.cursor()

        def dbapi_reads() -> None:
            for key in keys:
                cursor.execute(statement, list(key))
                cursor.fetchall()

        def core_reads() -> None:
            for pk, sk in keys:
                connection.execute(core, {"pk": pk, "sk": sk}).all()

        def session_gets() -> None:
            for key in keys:
                session.get(model, key)
                session.expunge_all()  # a real read each time, not the identity map

        def orm_query() -> None:
            session.scalars(select(model).where(model.pk == "P")).all()
            session.expunge_all()

        def boto3_deserialize() -> None:
            page = client.execute_statement(Statement='SELECT * FROM "t" WHERE "pk" = ?')
            [{k: deserializer.deserialize(v) for k, v in item.items()} for item in page["Items"]]

        print("CPU per point read (W1), canned response, no botocore:")
        _report("  DBAPI cursor.execute + fetchall", dbapi_reads, args.runs, args.reads, False)
        _report("  Core connection.execute(select(table))", core_reads, args.runs, args.reads, False)
        _report("  ORM session.get", session_gets, args.runs, args.reads, args.profile)
        print("CPU per item of a partition into objects (W2):")
        _report("  ORM select(...).all()", orm_query, args.runs, args.size, args.profile)
        _report(
            "  boto3 TypeDeserializer (what the baseline does)",
            boto3_deserialize,
            args.runs,
            args.size,
            False,
        )


if __name__ == "__main__":
    main()
