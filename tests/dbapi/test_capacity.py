"""What each statement cost (``Cursor.consumed``, ``Connection.consumed`` for a commit, the INFO
line), on DynamoDB Local through both transports. Local reports consumed capacity for
BatchWriteItem and BatchGetItem but for no PartiQL request (docs/partiql-findings.md), so the
unit figures asserted here are those two; the PartiQL ones are asserted as not reported."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sa_dynamo import dbapi
from sa_dynamo.dbapi import capacity
from sa_dynamo.dbapi.counters import Counters, ensure_table
from sa_dynamo.dbapi.paging import Discriminator

from .support import Table


@pytest.fixture
def indexed(client: Any, table_name: str) -> Iterator[Table]:
    """A table with key (pk, sk) and a global secondary index ``gsi1`` on ``g`` projecting all."""
    client.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g")],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "gsi1",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    yield Table(table_name)
    client.delete_table(TableName=table_name)


def put(cursor: dbapi.Cursor, table: Table, rows: list[tuple[str, str, str]]) -> None:
    cursor.executemany(f"PUT INTO {table.ref} VALUE {{'pk': ?, 'sk': ?, 'g': ?}}", rows)


def update_matching(cursor: dbapi.Cursor, table: Table, keys: list[tuple[str, str]]) -> None:
    """A transaction's UPDATE of several keys with its WHERE as a test of the item: the items
    as committed are read first, consistently, with one BatchGetItem."""
    cursor.write_matches = [lambda item: True] * len(keys)
    cursor.executemany(f'UPDATE {table.ref} SET "n" = ? WHERE "pk" = ? AND "sk" = ?', [[1, *k] for k in keys])


def workload(connect: Callable[..., dbapi.Connection], table: Table, transport: str) -> list[dict[str, Any]]:
    """Every kind of data-plane request, each statement's figures as a dict."""
    auto = connect(autocommit=True, transport=transport)
    tx = connect(autocommit=False, transport=transport)
    cursor, figures = auto.cursor(), []
    cursor.executemany(table.insert_sql(["pk", "sk", "n"]), [["p", f"{i:02}", i % 5] for i in range(12)])
    figures.append(cursor.consumed)
    cursor.page_size = 4
    cursor.execute(f'SELECT "sk" FROM {table.ref} WHERE "pk" = ? AND "n" = ?', ["p", 1])
    cursor.fetchall()
    figures.append(cursor.consumed)
    cursor.execute(f'UPDATE {table.ref} SET "n" = ? WHERE "pk" = ? AND "sk" = ?', [7, "p", "00"])
    figures.append(cursor.consumed)
    put(cursor, table, [("q", "1", "x"), ("q", "2", "x")])
    figures.append(cursor.consumed)
    update_matching(tx.cursor(), table, [("q", "1"), ("q", "2")])
    figures.append(tx.cursor().consumed)  # a fresh cursor's record is empty
    figures.append(tx.cursor().execute(table.insert_sql(["pk", "sk"]), ["r", "1"]).consumed)
    # an autoincrement block (UpdateItem, 1 WCU on Local), counted with the statement it numbers
    ensure_table(tx.transport)  # else the first transport's first UpdateItem finds no table
    counter = Counters(block=1).next_value(tx.transport, table.name, "n")
    figures.append(tx.cursor().execute(table.insert_sql(["pk", "sk", "n"]), ["r", "2", counter]).consumed)
    tx.commit()
    figures.append(tx.consumed)
    return [
        {name: value for name, value in dataclasses.asdict(consumed).items() if name != "milliseconds"}
        for consumed in figures
    ]


def test_every_data_plane_request_asks_for_capacity_by_index_and_both_transports_agree(
    connect: Callable[..., dbapi.Connection], client: Any, table_name: str
) -> None:
    figures, asked = {}, {}
    for transport in ("http", "botocore"):
        asked[transport] = seen = defaultdict(set)

        def watching(seen: defaultdict = seen, **options: Any) -> dbapi.Connection:
            connection = connect(**options)
            connection.transport.observers.append(
                lambda operation, body, answer: seen[operation].add(body.get("ReturnConsumedCapacity"))
            )
            return connection

        client.create_table(
            TableName=table_name,
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")],
            BillingMode="PAY_PER_REQUEST",
        )
        try:
            figures[transport] = workload(watching, Table(table_name), transport)
        finally:
            client.delete_table(TableName=table_name)
    for seen in asked.values():
        assert {operation: seen[operation] for operation in capacity.DATA_PLANE} == {
            operation: {"INDEXES"} for operation in capacity.DATA_PLANE
        }
    assert figures["http"] == figures["botocore"]
    reads, writes = figures["http"][3]["reads"], figures["http"][3]["writes"]
    assert (reads, writes) == ({}, {table_name: 2.0})  # the PUT's BatchWriteItem: 1 WCU an item
    numbered = figures["http"][-2]
    assert (numbered["requests"], numbered["writes"]) == (1, {"sa_dynamo_counters": 1.0})


def test_a_batch_write_counts_write_units_of_the_table_and_each_index_apart(
    cur: dbapi.Cursor, indexed: Table
) -> None:
    put(cur, indexed, [("p", str(i), "x") for i in range(3)])
    assert cur.consumed == capacity.Consumed(
        operation="BatchWriteItem",
        source=indexed.name,
        requests=1,
        reported=True,
        writes={indexed.name: 3.0, f"{indexed.name}/gsi1": 3.0},  # 1 KB or less: 1 WCU, and 1 for the index
    )
    assert (cur.consumed.read_units, cur.consumed.write_units) == (0.0, 6.0)


def test_a_consistent_read_of_full_keys_costs_one_read_unit_an_item(
    cur: dbapi.Cursor, tx_conn: dbapi.Connection, indexed: Table
) -> None:
    put(cur, indexed, [("p", "1", "x"), ("p", "2", "x")])
    tx = tx_conn.cursor()
    update_matching(tx, indexed, [("p", "1"), ("p", "2")])
    assert (tx.consumed.operation, tx.consumed.requests, tx.consumed.items) == ("BatchGetItem", 1, 2)
    assert (tx.consumed.reads, tx.consumed.writes) == ({indexed.name: 2.0}, {})  # held until commit


def test_a_read_whose_filter_discards_most_items_counts_pages_items_and_rows(
    cur: dbapi.Cursor, table: Table
) -> None:
    cur.executemany(table.insert_sql(["pk", "sk", "n"]), [["p", f"{i:02}", i % 5] for i in range(12)])
    cur.page_size = 4  # DynamoDB's Limit: 4 items evaluated per request
    cur.max_rows = 1
    cur.execute(f'SELECT "sk" FROM {table.ref} WHERE "pk" = ? AND "n" = ?', ["p", 1])
    assert cur.fetchall() == [("01",)]
    assert cur.consumed == capacity.Consumed(
        operation="ExecuteStatement", source=table.name, requests=1, items=1, rows=1
    )
    cur.max_rows = None
    cur.execute(f'SELECT "sk" FROM {table.ref} WHERE "pk" = ? AND "n" = ?', ["p", 1])
    assert cur.fetchall() == [("01",), ("06",), ("11",)]
    # 12 items evaluated 4 a page, and a last empty page: Local hands out a NextToken after the 12th
    assert cur.consumed == capacity.Consumed(
        operation="ExecuteStatement", source=table.name, requests=4, items=3, rows=3
    )


def test_a_commit_counts_its_transaction_and_a_held_write_logs_nothing(
    tx_conn: dbapi.Connection, table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    tx = tx_conn.cursor()
    with caplog.at_level(logging.INFO, logger="sa_dynamo"):
        tx.executemany(table.insert_sql(["pk", "sk"]), [["p", "1"], ["p", "2"]])
        assert tx.consumed.requests == 0  # held: nothing sent yet
        tx_conn.commit()
    assert tx_conn.consumed == capacity.Consumed(
        operation="ExecuteTransaction", source=table.name, requests=1
    )
    lines = timed_lines(caplog)
    assert lines == [
        f"ExecuteTransaction {table.name}: 1 request, 0 items read, 0 rows, capacity not reported, <ms>"
    ]


def timed_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The statements' INFO lines, each ending in its time: the time itself as ``<ms>``."""
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.name == "sa_dynamo.dbapi" and re.search(r": [0-9,]+ requests?, ", r.getMessage())
    ]
    timed = [re.sub(r", [0-9,]+\.[0-9] ms$", ", <ms>", line) for line in lines]
    assert all(line.endswith(", <ms>") for line in timed), lines
    return timed


def test_each_statement_logs_one_info_line_without_values(
    cur: dbapi.Cursor, indexed: Table, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="sa_dynamo"):
        put(cur, indexed, [("secret-key", str(i), "secret-value") for i in range(3)])
        cur.execute(f'SELECT "sk" FROM {indexed.ref}."gsi1" WHERE "g" = ?', ["secret-value"])
        cur.fetchall()
    lines = timed_lines(caplog)
    assert lines == [
        f"BatchWriteItem {indexed.name}: 1 request, 0 items read, 0 rows, 6.0 WCU ({indexed.name} 3.0 gsi1 3.0), <ms>",
        f"ExecuteStatement {indexed.name}/gsi1: 1 request, 3 items read, 3 rows, capacity not reported, <ms>",
    ]


def test_with_info_off_the_line_is_not_built(
    cur: dbapi.Cursor, table: Table, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = []

    def counted(consumed: capacity.Consumed) -> str:
        built.append(consumed)
        return "line"

    monkeypatch.setattr(capacity, "line", counted)
    select = f'SELECT "sk" FROM {table.ref} WHERE "pk" = ?'
    caplog.set_level(logging.WARNING, logger="sa_dynamo")
    cur.execute(select, ["p"]).fetchall()
    cur.executemany(table.insert_sql(["pk", "sk"]), [["p", "1"]])
    assert built == []
    caplog.set_level(logging.INFO, logger="sa_dynamo")
    cur.execute(select, ["p"]).fetchall()
    assert len(built) == 1


def test_items_of_unknown_kinds_skipped_are_counted_and_the_time_is_the_driver_s(
    cur: dbapi.Cursor, table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    kinds = ["order", "line", "refund", "line", "line"]
    cur.executemany(table.insert_sql(["pk", "sk", "t"]), [["p", str(i), t] for i, t in enumerate(kinds)])
    cur.discriminator = Discriminator("t", frozenset({"order", "line"}), "skip", "order")
    with caplog.at_level(logging.INFO, logger="sa_dynamo.dbapi"):
        cur.execute(f'SELECT "sk" FROM {table.ref} WHERE "pk" = ?', ["secret-key"])
        cur.fetchall()
        cur.execute(f'SELECT "sk", "t" FROM {table.ref} WHERE "pk" = ?', ["p"])
        assert [row[1] for row in cur.fetchall()] == ["order", "line", "line", "line"]
    assert cur.consumed == capacity.Consumed(
        operation="ExecuteStatement",
        source=table.name,
        requests=1,
        items=5,
        rows=4,
        skipped=1,
        unknown_kinds=("refund",),
    )
    assert cur.consumed.milliseconds > 0.0
    assert timed_lines(caplog)[-2:] == [
        f"ExecuteStatement {table.name}: 1 request, 0 items read, 0 rows, capacity not reported, <ms>",
        f"ExecuteStatement {table.name}: 1 request, 5 items read, 4 rows, 1 of unknown kinds skipped "
        "('refund'), capacity not reported, <ms>",
    ]
    assert "secret" not in caplog.text


@pytest.mark.parametrize("hidden", [False, True])
def test_many_skipped_items_are_one_line_naming_their_first_kinds_unless_values_are_hidden(
    connect: Callable[..., dbapi.Connection], table: Table, caplog: pytest.LogCaptureFixture, hidden: bool
) -> None:
    """A partition of many items of unknown kinds logs one line, not one per item; the kinds are
    values, not named with hide_parameters."""
    cur = connect(autocommit=True, hide_parameters=hidden).cursor()
    kinds = ["order", *[f"kind-{i % 5}" for i in range(60)]]
    cur.executemany(table.insert_sql(["pk", "sk", "t"]), [["p", f"{i:02}", t] for i, t in enumerate(kinds)])
    cur.discriminator = Discriminator("t", frozenset({"order"}), "skip", "order")
    with caplog.at_level(logging.DEBUG, logger="sa_dynamo"):
        cur.execute(f'SELECT "sk", "t" FROM {table.ref} WHERE "pk" = ?', ["p"])
        assert cur.fetchall() == [("00", "order")]
    named = "" if hidden else " ('kind-0', 'kind-1', 'kind-2', ...)"
    assert [line for line in timed_lines(caplog) if "skipped" in line] == [
        f"ExecuteStatement {table.name}: 1 request, 61 items read, 1 rows, 60 of unknown kinds "
        f"skipped{named}, capacity not reported, <ms>"
    ]
    assert cur.consumed.unknown_kinds == (() if hidden else ("kind-0", "kind-1", "kind-2", "kind-3"))
    assert ("kind-" in caplog.text) is not hidden
