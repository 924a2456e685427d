"""The transactional buffer (autocommit=False): writes wait for commit(), which sends them as
one ExecuteTransaction with a ClientRequestToken; rollback() and close() discard them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.aio import connect_for

from sa_dynamo import dbapi
from sa_dynamo.dbapi.limits import MAX_TRANSACTION_ACTIONS

from .support import Table


@pytest.fixture
def connect(driver: str, endpoint_url: str) -> Iterator[Callable[..., dbapi.Connection]]:
    """This module's tests run on the sync driver and on the asyncio one: one driver, either I/O."""
    made: list[dbapi.Connection] = []

    def make(**options: Any) -> dbapi.Connection:
        made.append(connect_for(driver, endpoint_url, **options))
        return made[-1]

    yield make
    for connection in made:
        connection.close()


def test_writes_are_invisible_until_commit(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, cur: dbapi.Cursor, table: Table, calls: Any
) -> None:
    table.insert(cur, {"pk": "a", "sk": "old", "v": 1})
    table.insert(tx, {"pk": "a", "sk": "1", "v": "x"})
    assert tx.rowcount == 1
    tx.execute(f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ?', [2, "a", "old"])
    assert tx.rowcount == 1
    tx.execute(f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?', ["a", "gone"])
    assert tx.rowcount == -1  # a DELETE of a missing item commits silently: the count is unknown
    assert tx_conn.pending == 3
    assert table.keys(tx) == [("a", "1"), ("a", "old")]  # the transaction reads its own writes
    assert table.item(tx, "a", "old") == {"pk": "a", "sk": "old", "v": 2}
    assert table.item(cur, "a", "old") == {"pk": "a", "sk": "old", "v": 1}  # others read committed data
    assert len(calls["ExecuteStatement"]) == 4  # the seed INSERT and the three reads; no buffered write
    assert len(calls["BatchGetItem"]) == 1  # the committed item the UPDATE changes, read once

    tx_conn.commit()

    (request,) = calls["ExecuteTransaction"]
    assert [s["Statement"] for s in request["TransactStatements"]] == [
        table.insert_sql(["pk", "sk", "v"]),
        f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ?',
        f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?',
    ]
    assert isinstance(request["ClientRequestToken"], str) and 1 <= len(request["ClientRequestToken"]) <= 36
    assert tx_conn.pending == 0
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "v": "x"}
    assert table.item(cur, "a", "old") == {"pk": "a", "sk": "old", "v": 2}


def test_each_commit_has_its_own_token(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table, calls: Any
) -> None:
    for sk in ("1", "2"):
        table.insert(tx, {"pk": "a", "sk": sk})
        tx_conn.commit()
    first, second = calls["ExecuteTransaction"]
    assert first["ClientRequestToken"] != second["ClientRequestToken"]
    assert table.keys(tx) == [("a", "1"), ("a", "2")]


def test_commit_of_nothing_sends_nothing(tx_conn: dbapi.Connection, calls: Any) -> None:
    tx_conn.commit()
    assert dict(calls) == {}


@pytest.mark.parametrize("discard", [dbapi.Connection.rollback, dbapi.Connection.close])
def test_rollback_and_close_discard_the_writes(
    connect: Any, table: Table, cur: dbapi.Cursor, calls: Any, discard: Any
) -> None:
    connection = connect()
    calls.watch(connection)
    table.insert(connection.cursor(), {"pk": "a", "sk": "1"})
    assert connection.pending == 1
    discard(connection)
    assert connection.pending == 0
    if not connection.closed:
        connection.commit()
    assert "ExecuteTransaction" not in calls
    assert table.keys(cur) == []


def test_executemany_is_buffered_into_the_same_transaction(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table, calls: Any
) -> None:
    rows = [("a", f"{i:02}") for i in range(30)]
    tx.executemany(table.insert_sql(["pk", "sk"]), rows)
    assert tx.rowcount == 30
    tx.executemany(f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?', [("b", "1"), ("b", "2")])
    assert tx.rowcount == -1
    tx_conn.commit()
    assert "BatchExecuteStatement" not in calls
    (request,) = calls["ExecuteTransaction"]
    assert len(request["TransactStatements"]) == 32
    assert table.keys(tx) == rows


def test_delete_returning_old_is_committed_without_returning(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, cur: dbapi.Cursor, table: Table, calls: Any
) -> None:
    """ExecuteTransaction rejects RETURNING, so the buffered DELETE is sent without it."""
    table.insert(cur, {"pk": "a", "sk": "1"})
    tx.execute(f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ? RETURNING ALL OLD *', ["a", "1"])
    assert tx.rowcount == -1
    tx_conn.commit()
    (request,) = calls["ExecuteTransaction"]
    assert (
        request["TransactStatements"][0]["Statement"]
        == f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?'
    )
    assert table.keys(cur) == []


def test_update_returning_is_not_supported_in_a_transaction(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    with pytest.raises(dbapi.NotSupportedError, match="RETURNING cannot run inside a DynamoDB transaction"):
        tx.execute(
            f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ? RETURNING ALL NEW *', [1, "a", "1"]
        )
    assert tx_conn.pending == 0


def test_exactly_100_writes_commit(tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table) -> None:
    rows = [("a", f"{i:03}") for i in range(MAX_TRANSACTION_ACTIONS)]
    tx.executemany(table.insert_sql(["pk", "sk"]), rows)
    tx_conn.commit()
    assert table.keys(tx) == rows


def test_more_than_100_writes_is_an_error_and_writes_nothing(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table, calls: Any
) -> None:
    tx.executemany(
        table.insert_sql(["pk", "sk"]), [("a", f"{i:03}") for i in range(MAX_TRANSACTION_ACTIONS + 1)]
    )
    with pytest.raises(dbapi.ProgrammingError, match="holds 101 writes; DynamoDB commits at most 100"):
        tx_conn.commit()
    assert "ExecuteTransaction" not in calls
    assert tx_conn.pending == 0
    assert table.keys(tx) == []


def test_insert_of_an_existing_key_fails_the_whole_commit(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, cur: dbapi.Cursor, table: Table
) -> None:
    table.insert(cur, {"pk": "a", "sk": "1", "v": "first"})
    table.insert(tx, {"pk": "a", "sk": "2"})
    table.insert(tx, {"pk": "a", "sk": "1", "v": "second"})
    with pytest.raises(
        dbapi.IntegrityError, match="statement 1: ValidationError: Duplicate primary key exists in table"
    ) as raised:
        tx_conn.commit()
    assert raised.value.code == "TransactionCanceledException"
    assert tx_conn.pending == 0
    assert table.keys(cur) == [("a", "1")]
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "v": "first"}


def test_update_of_a_missing_item_fails_the_whole_commit(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    """Inside a transaction a failed UPDATE condition cannot become rowcount 0: it cancels all."""
    table.insert(tx, {"pk": "a", "sk": "1"})
    tx.execute(f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ?', [1, "a", "missing"])
    with pytest.raises(
        dbapi.IntegrityError, match=r"statement 1: ConditionalCheckFailed: The conditional request failed"
    ):
        tx_conn.commit()
    assert table.keys(tx) == []


def test_oversize_item_in_a_commit_is_a_data_error(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    table.insert(tx, {"pk": "a", "sk": "2"})
    with pytest.raises(
        dbapi.DataError, match=r"410007 bytes, over DynamoDB's 400 KB item limit \(largest attribute: 'v'"
    ):
        table.insert(tx, {"pk": "a", "sk": "1", "v": "x" * 410_000})
    tx_conn.rollback()
    assert table.keys(tx) == []


def test_an_empty_key_is_refused_before_sending(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    with pytest.raises(dbapi.DataError, match=r"key attribute 'sk' of table '.*' is empty"):
        table.insert(tx, {"pk": "a", "sk": ""})
    assert tx_conn.pending == 0


def test_a_second_insert_of_one_item_is_an_integrity_error_at_once(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    table.insert(tx, {"pk": "a", "sk": "2"})
    table.insert(tx, {"pk": "a", "sk": "1"})
    with pytest.raises(dbapi.IntegrityError, match="this transaction already wrote that item"):
        table.insert(tx, {"pk": "a", "sk": "1"})
    tx_conn.rollback()
    assert table.keys(tx) == []


def test_insert_then_update_of_one_item_in_one_commit(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1})
    tx.execute(f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ?', [2, "a", "1"])
    tx_conn.commit()
    assert table.item(tx, "a", "1") == {"pk": "a", "sk": "1", "v": 2}


def test_a_missing_key_attribute_is_refused_before_sending(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    with pytest.raises(dbapi.DataError, match="has no 'sk': every item needs its key attributes"):
        tx.execute(f"INSERT INTO {table.ref} VALUE {{'pk': ?}}", ["a"])
    assert tx_conn.pending == 0


def test_a_failed_commit_names_the_keys_that_failed(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    table.insert(tx, {"pk": "a", "sk": "1"})
    tx_conn.commit()
    table.insert(tx, {"pk": "a", "sk": "2"})
    table.insert(tx, {"pk": "a", "sk": "1"})
    with pytest.raises(dbapi.IntegrityError, match=r"failed: INSERT of \{'pk': 'a', 'sk': '1'\}"):
        tx_conn.commit()
    assert table.keys(tx) == [("a", "1")]


def test_a_bad_row_leaves_the_transaction_as_it_was(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table, calls: Any
) -> None:
    """Every row of an executemany is checked before any is held for commit."""
    table.insert(tx, {"pk": "a", "sk": "0"})
    with pytest.raises(dbapi.DataError, match=r"key attribute 'pk' of table .* is empty"):
        tx.executemany(table.insert_sql(["pk", "sk"]), [["a", "1"], ["a", "2"], ["", "3"]])
    assert tx_conn.pending == 1
    with pytest.raises(dbapi.IntegrityError, match="this transaction already wrote that item"):
        tx.executemany(table.insert_sql(["pk", "sk"]), [["a", "1"], ["a", "0"]])
    assert tx_conn.pending == 1
    tx_conn.commit()
    assert table.keys(tx) == [("a", "0")]
    assert len(calls["ExecuteTransaction"]) == 1


def test_a_failed_chunk_of_a_chunked_commit_says_what_was_committed(
    tx_conn: dbapi.Connection, tx: dbapi.Cursor, table: Table
) -> None:
    """Writes numbered as executed: 0-119 inserts, 120 an existing key, 121 and 122 an insert
    and its delete (nothing to send, so nothing that can fail), 123-149 more inserts. The first
    chunk (100 actions) commits, the second is refused whole."""
    table.insert(tx, {"pk": "a", "sk": "taken"})
    tx_conn.commit()
    tx_conn.chunked_commit = True
    insert = table.insert_sql(["pk", "sk"])
    tx.executemany(insert, [["a", f"{i:03}"] for i in range(120)])
    tx.execute(insert, ["a", "taken"])
    tx.execute(insert, ["a", "gone"])
    tx.execute(f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?', ["a", "gone"])
    tx.executemany(insert, [["a", f"{i:03}"] for i in range(123, 150)])
    with pytest.raises(dbapi.IntegrityError, match="chunk 2 of 2 of a chunked commit") as raised:
        tx_conn.commit()
    error = raised.value
    assert (error.applied, error.unapplied, error.unknown) == (
        [*range(100), 121, 122],
        [*range(100, 121), *range(123, 150)],
        [],
    )
    assert str(error).endswith("applied: writes 0-99, 121-122; not applied: writes 100-120, 123-149")
    assert table.keys(tx) == sorted([("a", f"{i:03}") for i in range(100)] + [("a", "taken")])
