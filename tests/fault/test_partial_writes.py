"""Writes that are not atomic together, cut off by lost connections: the error says which rows
were applied, which were not and which are unknown, and that matches what DynamoDB stores. A
single INSERT whose answer was lost is never a duplicate of itself."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, MetaData, String, Table, create_engine, insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from support.faultproxy import Faults

import sa_dynamo
from sa_dynamo.dbapi.transport import LOST_ANSWERS

AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}
RUNS = 20
ROWS = 200  # eight batches
THEIRS = 60  # a row whose key someone else holds: DynamoDB refuses it whatever else happens


@pytest.fixture
def notes(engine: Engine) -> Iterator[Table]:
    table = Table(
        f"cut_{uuid.uuid4().hex[:10]}",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("v", String),
    )
    table.create(engine)
    yield table
    table.drop(engine)


def stored(raw, table: Table, pk: str) -> dict[str, str]:
    """sk -> v of the partition's items, read with raw boto3 (consistent)."""
    found: dict[str, str] = {}
    request = {"TableName": table.name, "ConsistentRead": True}
    request |= {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": {"S": pk}}}
    while True:
        page = raw.query(**request)
        found |= {item["sk"]["S"]: item["v"]["S"] for item in page["Items"]}
        if "LastEvaluatedKey" not in page:
            return found
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_a_batch_cut_off_midway_says_what_was_applied(engine, raw, notes, start_proxy, through) -> None:
    """Twenty seeded runs of 200 rows through a proxy that resets connections before and after
    DynamoDB sees a batch, or throttles it (botocore retries once, or not at all): every row is
    applied, not applied or unknown, exactly as the error says and as DynamoDB stores it."""
    seen = {"cut off": 0, "unknown": 0, "resent and resolved": 0, "refused": 0}
    for seed in range(RUNS):
        pk = f"run{seed:02}"
        rows = [{"pk": pk, "sk": f"{i:03}", "v": f"ours {i}"} for i in range(ROWS)]
        raw.put_item(
            TableName=notes.name, Item={"pk": {"S": pk}, "sk": {"S": f"{THEIRS:03}"}, "v": {"S": "theirs"}}
        )
        proxy = start_proxy(seed=seed)
        proxy.faults = Faults(
            reset_before=0.1, reset_after=0.1, throttle=0.1, operations=frozenset({"BatchExecuteStatement"})
        )
        with (
            pytest.raises(DBAPIError) as raised,
            through(proxy, retries=seed % 2).connect().execution_options(**AUTOCOMMIT) as conn,
        ):
            conn.execute(insert(notes), rows)
        proxy.stop()
        error = raised.value.orig
        applied, unapplied, unknown = set(error.applied), set(error.unapplied), set(error.unknown)
        assert sorted([*applied, *unapplied, *unknown]) == list(range(ROWS)), seed
        assert THEIRS not in applied, (seed, str(error))
        items = stored(raw, notes, pk)
        assert items[f"{THEIRS:03}"] == "theirs"
        ours = {int(sk) for sk, v in items.items() if v.startswith("ours")}
        assert applied <= ours, seed
        assert not (unapplied & ours), seed
        assert ours <= applied | unknown, seed
        # The batch in flight was applied whole or not at all (but for the row DynamoDB refuses).
        in_flight = unknown - {THEIRS}
        assert in_flight <= ours or not (in_flight & ours), seed
        seen["cut off"] += bool(isinstance(raised.value, OperationalError))
        seen["unknown"] += bool(unknown)
        seen["resent and resolved"] += proxy.counts.requests["BatchGetItem"]
        if isinstance(raised.value, OperationalError):
            assert f"an AUTOCOMMIT executemany of {ROWS} rows stopped" in str(error)
            # A throttled call was refused, not lost: its rows are known not to be applied,
            # unless an earlier attempt of it lost its answer.
            refused = error.code == "ThrottlingException"
            assert ("connection to DynamoDB failed" in str(error)) != refused
            lost_before = error.response.get("ResponseMetadata", {}).get(LOST_ANSWERS, 0) > 0
            assert not (refused and unknown) or lost_before, seed
            seen["refused"] += refused
        else:
            assert type(raised.value) is IntegrityError and unapplied == {THEIRS}, seed
    # The faults really cut batches off, with answers lost both ways.
    assert seen["cut off"] >= 5 and seen["unknown"] >= 3 and seen["resent and resolved"] >= 1, seen
    assert seen["refused"] >= 1, seen


def test_an_upsert_cut_off_midway_says_what_was_written(raw, notes, start_proxy, through) -> None:
    """The same for upsert()'s BatchWriteItem calls (they overwrite, so a resend is harmless):
    ten seeded runs, no retries, a reset before or after DynamoDB sees a call."""
    cut_off = 0
    for seed in range(10):
        pk = f"upsert{seed:02}"
        rows = [{"pk": pk, "sk": f"{i:03}", "v": f"ours {i}"} for i in range(ROWS)]
        proxy = start_proxy(seed=seed)
        proxy.faults = Faults(reset_before=0.1, reset_after=0.1, operations=frozenset({"BatchWriteItem"}))
        try:
            with through(proxy, retries=0).connect().execution_options(**AUTOCOMMIT) as conn:
                conn.execute(sa_dynamo.upsert(notes), rows)
            applied, unapplied, unknown = set(range(ROWS)), set(), set()
        except OperationalError as raised:
            error = raised.orig
            applied, unapplied, unknown = set(error.applied), set(error.unapplied), set(error.unknown)
            cut_off += 1
            assert (
                unknown
                and max(applied, default=-1) < min(unknown)
                and max(unknown) < min(unapplied, default=ROWS)
            )
        proxy.stop()
        ours = set(map(int, stored(raw, notes, pk)))
        assert sorted([*applied, *unapplied, *unknown]) == list(range(ROWS)), seed
        assert applied <= ours and not (unapplied & ours) and ours <= applied | unknown, seed
    assert cut_off >= 3


def test_a_chunked_commit_cut_off_says_which_writes_are_unknown(raw, notes, proxy, through) -> None:
    """250 writes in chunks of 100: the first chunk commits, the second is applied but never
    answered (both attempts reset after DynamoDB saw them), the third is not sent."""
    pk = "chunked"
    proxy.faults = Faults(delay_seconds=0.01)
    proxy.script("ExecuteTransaction", "delay", "reset_after", "reset_after")
    engine = through(proxy, retries=1)
    chunked = create_engine(engine.url, dynamodb_chunked_commit=True)
    try:
        with pytest.raises(OperationalError) as raised, chunked.begin() as conn:
            conn.execute(insert(notes), [{"pk": pk, "sk": f"{i:03}", "v": "x"} for i in range(250)])
    finally:
        chunked.dispose()
    error = raised.value.orig
    assert (error.applied, error.unknown, error.unapplied) == (
        list(range(100)),
        list(range(100, 200)),
        list(range(200, 250)),
    )
    assert "chunk 2 of 3 of a chunked commit" in str(error)
    assert "applied: writes 0-99; not applied: writes 200-249; outcome unknown" in str(error)
    assert sorted(map(int, stored(raw, notes, pk))) == list(range(200))


LOST_ANSWER_RUNS = 30  # about a second each: well inside the fault proxy's 60 s limit


@pytest.mark.parametrize("fault", ["reset_after", "late"])
def test_a_single_insert_whose_answer_was_lost_is_not_its_own_duplicate(raw, notes, proxy, through, fault):
    """Thirty INSERTs, each first attempt applied by DynamoDB and its answer lost (a reset, or
    held past the client's read timeout while botocore resends): each succeeds, stored once.
    Each run has its own client: botocore's retry quota would run dry after some forty
    connection errors on one."""
    pk = f"lost-{fault}"
    options = {"read_timeout": 0.3} if fault == "late" else {}
    proxy.faults = Faults(delay_seconds=0.6)
    for i in range(LOST_ANSWER_RUNS):
        with through(proxy, retries=3, **options).connect().execution_options(**AUTOCOMMIT) as conn:
            proxy.script("ExecuteStatement", "reset_after" if fault == "reset_after" else "delay")
            assert conn.execute(insert(notes), {"pk": pk, "sk": f"{i:03}", "v": f"ours {i}"}).rowcount == 1
    assert proxy.counts.requests["ExecuteStatement"] >= 2 * LOST_ANSWER_RUNS
    assert stored(raw, notes, pk) == {f"{i:03}": f"ours {i}" for i in range(LOST_ANSWER_RUNS)}


def test_a_lost_answer_does_not_hide_a_real_duplicate(raw, notes, proxy, through) -> None:
    raw.put_item(TableName=notes.name, Item={"pk": {"S": "dup"}, "sk": {"S": "1"}, "v": {"S": "theirs"}})
    proxy.script("ExecuteStatement", "reset_after")
    with (
        pytest.raises(IntegrityError, match="the stored item differs from this row"),
        through(proxy, retries=3).connect().execution_options(**AUTOCOMMIT) as conn,
    ):
        conn.execute(insert(notes), {"pk": "dup", "sk": "1", "v": "ours"})
    assert stored(raw, notes, "dup") == {"1": "theirs"}
