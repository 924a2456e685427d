"""Cursor behaviour against DynamoDB Local: lazy paging, max_rows, description, rowcount,
RETURNING, and executemany's batching in autocommit."""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from typing import Any

import pytest

from sa_dynamo import dbapi
from sa_dynamo.dbapi.limits import BATCH_SIZE

from .support import Table, fetch_dicts

PartitionRows = list[tuple[str, Decimal]]


def select_partition(cur: dbapi.Cursor, table: Table, where: str = "", params: tuple = ()) -> None:
    cur.execute(f'SELECT "sk", "n" FROM {table.ref} WHERE "pk" = ?{where}', ["p", *params])


def test_pages_are_read_lazily(cur: dbapi.Cursor, table: Table, partition: PartitionRows) -> None:
    cur.page_size = 2
    select_partition(cur, table)
    assert cur.pages == 1
    assert cur.fetchone() == partition[0]
    assert cur.fetchmany(1) == partition[1:2]
    assert cur.pages == 1  # the first page's two rows are used up, nothing more was read
    assert cur.fetchone() == partition[2]
    assert cur.pages == 2
    assert cur.fetchall() == partition[3:]
    assert cur.pages == 4  # 2 + 2 + 2 + 1 items; the short last page has no NextToken
    assert cur.fetchone() is None
    assert cur.pages == 4


def test_iteration_and_fetchmany_follow_all_pages(
    cur: dbapi.Cursor, table: Table, partition: PartitionRows
) -> None:
    cur.page_size = 3
    select_partition(cur, table)
    assert cur.fetchmany(4) == partition[:4]
    cur.arraysize = 2
    assert cur.fetchmany() == partition[4:6]
    assert list(cur) == partition[6:]
    assert cur.fetchmany(5) == []


def test_empty_pages_with_a_next_token_are_followed(
    cur: dbapi.Cursor, table: Table, partition: PartitionRows
) -> None:
    """With Limit=2 the first two pages evaluate items that the filter rejects: both come back
    empty but with a NextToken, and reading must go on."""
    cur.page_size = 2
    select_partition(cur, table, ' AND ("n" >= ?)', (4,))
    assert cur.fetchall() == partition[4:]
    assert cur.pages == 4


def test_select_star_names_columns_from_the_first_non_empty_page(
    cur: dbapi.Cursor, table: Table, partition: PartitionRows
) -> None:
    cur.page_size = 2
    cur.execute(f'SELECT * FROM {table.ref} WHERE "pk" = ? AND ("n" >= ?)', ["p", 5])
    assert cur.pages == 3
    assert sorted(column[0] for column in cur.description) == ["n", "pk", "sk"]
    assert fetch_dicts(cur) == [{"pk": "p", "sk": sk, "n": n} for sk, n in partition[5:]]


@pytest.mark.parametrize("page_size", [None, 2])
def test_max_rows_stops_reading(
    cur: dbapi.Cursor, table: Table, partition: PartitionRows, page_size: int | None
) -> None:
    cur.page_size = page_size
    cur.max_rows = 3
    select_partition(cur, table)
    assert cur.fetchall() == partition[:3]
    assert cur.fetchone() is None
    assert cur.rowcount == 3
    assert cur.pages == (1 if page_size is None else 2)


def descending(table: Table, columns: str = '"pk", "sk", "n"') -> str:
    return f'SELECT {columns} FROM {table.ref} WHERE "pk" = ? ORDER BY "sk" DESC'


def test_a_descending_read_over_several_pages_comes_in_order(
    conn: dbapi.Connection, table: Table, partition: PartitionRows
) -> None:
    """DynamoDB Local returns the pages of ORDER BY ... DESC upwards, each page reversed: the
    connection's first such read judges its server by two pages, then its reads are sorted."""
    expected = [("p", sk, n) for sk, n in reversed(partition)]
    for page_size, max_rows in [(2, None), (3, None), (2, 3)]:
        cur = conn.cursor()
        cur.page_size, cur.max_rows = page_size, max_rows
        cur.execute(descending(table), ["p"])
        assert cur.fetchall() == expected[:max_rows]
    assert conn.transport.descending_pages is False


def test_pages_of_rows_of_a_descending_read_come_in_order(
    conn: dbapi.Connection, table: Table, partition: PartitionRows
) -> None:
    """One page of rows at a time (paginate()), resumed by the token of the page before."""
    pages, token = [], None
    while not pages or token is not None:
        cur = conn.cursor()
        cur.page_rows, cur.start_token = 3, token
        cur.execute(descending(table), ["p"])
        pages.append(cur.fetchall())
        token = cur.resume_token
    assert pages == [[("p", sk, n) for sk, n in reversed(partition)][i : i + 3] for i in (0, 3, 6)]
    cur = conn.cursor()
    cur.page_rows, cur.start_token = 3, "sa_dynamo:sorted:x"
    with pytest.raises(dbapi.ProgrammingError, match="not a resume token this driver wrote") as refused:
        cur.execute(descending(table), ["p"])
    assert cur.start_token not in str(refused.value)


def test_a_descending_read_over_several_pages_needs_its_sort_key(
    conn: dbapi.Connection, table: Table, partition: PartitionRows
) -> None:
    cur = conn.cursor()
    cur.page_size = 2
    with pytest.raises(dbapi.ProgrammingError, match="needs 'sk' in the select list"):
        cur.execute(descending(table, '"pk", "n"'), ["p"])
    cur.page_size = None  # one page: in order on any server
    cur.execute(descending(table, '"pk", "n"'), ["p"])
    assert [n for _, n in cur.fetchall()] == [n for _, n in reversed(partition)]


def test_rowcount_of_a_select_is_known_once_the_rows_are_read(
    cur: dbapi.Cursor, table: Table, partition: PartitionRows
) -> None:
    select_partition(cur, table)
    assert cur.rowcount == -1
    assert len(cur.fetchall()) == len(partition)
    assert cur.rowcount == len(partition)


def test_select_of_nothing(cur: dbapi.Cursor, table: Table) -> None:
    cur.execute(f'SELECT * FROM {table.ref} WHERE "pk" = ?', ["nobody"])
    assert cur.description == []
    assert cur.fetchall() == []
    assert cur.rowcount == 0


def test_projection_columns_are_keyed_by_the_last_path_step(cur: dbapi.Cursor, table: Table) -> None:
    """The driver's reading of the projection (statement.py) agrees with DynamoDB's result keys."""
    table.insert(
        cur,
        {
            "pk": "a",
            "sk": "1",
            "doc": {"a": {"b": "deep"}, "l": [10, 20], "x, y": "comma", "from": "kw", 'q"t': "quote"},
            "l": [[1, 2], [3]],
            'a"b': "dq",
            "my attr": 1,
            "$type": "T",
            "order": 2,
        },
    )
    cur.execute(
        'SELECT "doc"."a"."b", "doc"."l"[1], "l"[0][1], doc[\'x, y\'], doc[\'from\'], "doc"[\'q"t\'], '
        f'"a""b", "my attr", "$type", "order", "absent" FROM {table.ref} WHERE "pk" = ? AND "sk" = ?',
        ["a", "1"],
    )
    names = ["b", "l[1]", "l[0][1]", "x, y", "from", 'q"t', 'a"b', "my attr", "$type", "order", "absent"]
    assert cur.description == [(name, None, None, None, None, None, None) for name in names]
    assert cur.fetchall() == [
        ("deep", Decimal(20), Decimal(2), "comma", "kw", "quote", "dq", Decimal(1), "T", Decimal(2), None)
    ]


def test_item_without_any_projected_attribute_is_still_a_row(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    cur.execute(f'SELECT "x", "y" FROM {table.ref} WHERE "pk" = ?', ["a"])
    assert cur.fetchall() == [(None, None)]


def test_consistent_read_and_parameters_reach_the_request(
    cur: dbapi.Cursor, table: Table, calls: Any
) -> None:
    cur.consistent_read = True
    cur.page_size = 5
    cur.execute(f'SELECT * FROM {table.ref} WHERE "pk" = ?', ["a"])
    cur.consistent_read = False
    cur.page_size = None
    cur.execute(f"SELECT * FROM {table.ref} WHERE \"pk\" = 'a'")
    first, second = calls["ExecuteStatement"]
    assert first == {
        "Statement": f'SELECT * FROM {table.ref} WHERE "pk" = ?',
        "Parameters": [{"S": "a"}],
        "ConsistentRead": True,
        "Limit": 5,
        "ReturnConsumedCapacity": "INDEXES",
    }
    # no empty Parameters list
    assert second == {
        "Statement": f"SELECT * FROM {table.ref} WHERE \"pk\" = 'a'",
        "ReturnConsumedCapacity": "INDEXES",
    }


def test_page_size_below_one_is_a_programming_error(cur: dbapi.Cursor, table: Table) -> None:
    cur.page_size = 0
    with pytest.raises(dbapi.ProgrammingError, match="must be 1 or more, not 0"):
        cur.execute(f'SELECT * FROM {table.ref} WHERE "pk" = ?', ["a"])


# -- writes in autocommit ------------------------------------------------------------------


def update_sql(table: Table, tail: str = "") -> str:
    return f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ?{tail}'


def delete_sql(table: Table, returning: str = " RETURNING ALL OLD *") -> str:
    return f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?{returning}'


def test_insert_counts_one(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    assert cur.rowcount == 1
    assert cur.description is None
    assert table.keys(cur) == [("a", "1")]


def test_update_counts_matched_items(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    cur.execute(update_sql(table), ["new", "a", "1"])
    assert cur.rowcount == 1
    cur.execute(update_sql(table), ["new", "a", "missing"])
    assert cur.rowcount == 0
    assert table.keys(cur) == [("a", "1")]  # UPDATE never creates an item
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "v": "new"}


def test_update_with_a_failed_extra_condition_counts_zero(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1", "version": 1})
    cur.execute(update_sql(table, ' AND "version" = ?'), ["new", "a", "1", 2])
    assert cur.rowcount == 0
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "version": Decimal(1)}


def test_delete_returning_old_counts_and_returns_the_item(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1", "v": "old"})
    cur.execute(delete_sql(table), ["a", "1"])
    assert cur.rowcount == 1
    assert fetch_dicts(cur) == [{"pk": "a", "sk": "1", "v": "old"}]
    cur.execute(delete_sql(table), ["a", "1"])
    assert cur.rowcount == 0
    assert cur.fetchall() == []
    assert table.keys(cur) == []


def test_count_only_keeps_the_count_and_drops_the_rows(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    cur.count_only = True
    cur.execute(delete_sql(table), ["a", "1"])
    assert cur.rowcount == 1
    assert cur.description is None
    with pytest.raises(dbapi.ProgrammingError, match="no result set"):
        cur.fetchone()


def test_delete_without_returning_has_an_unknown_count(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    cur.execute(delete_sql(table, returning=""), ["a", "1"])
    assert cur.rowcount == -1
    assert table.keys(cur) == []


def test_update_returning_new(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1", "v": "old"})
    cur.execute(update_sql(table, " RETURNING MODIFIED NEW *"), ["new", "a", "1"])
    assert cur.rowcount == 1
    assert [c[0] for c in cur.description] == ["v"]
    assert cur.fetchall() == [("new",)]


def test_fetch_after_a_write_is_a_programming_error(cur: dbapi.Cursor, table: Table) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    with pytest.raises(dbapi.ProgrammingError, match="no result set"):
        cur.fetchall()


def test_fetch_after_a_failed_select_is_a_programming_error(cur: dbapi.Cursor) -> None:
    with pytest.raises(dbapi.ProgrammingError):
        cur.execute('SELECT * FROM "no_such_table"')
    with pytest.raises(dbapi.ProgrammingError, match="no result set"):
        cur.fetchone()


@pytest.mark.parametrize(
    "text",
    ['EXISTS(SELECT * FROM "t" WHERE "pk" = ?)', 'CREATE TABLE "t"', "", "-- only a comment\n"],
)
def test_statements_other_than_select_and_dml_are_refused_before_sending(
    cur: dbapi.Cursor, calls: Any, text: str
) -> None:
    with pytest.raises(dbapi.ProgrammingError, match="use SELECT, INSERT, UPDATE, DELETE or PUT"):
        cur.execute(text)
    assert dict(calls) == {}


# -- executemany in autocommit -------------------------------------------------------------


def batch_sizes(calls: Any) -> list[int]:
    return [len(request["Statements"]) for request in calls["BatchExecuteStatement"]]


def test_executemany_sends_batches_of_25(cur: dbapi.Cursor, table: Table, calls: Any) -> None:
    rows = [("a", f"{i:03}", i) for i in range(2 * BATCH_SIZE + 10)]
    cur.executemany(table.insert_sql(["pk", "sk", "n"]), rows)
    assert batch_sizes(calls) == [25, 25, 10]
    assert "ExecuteStatement" not in calls
    assert cur.rowcount == len(rows)
    assert table.keys(cur) == [(pk, sk) for pk, sk, _ in rows]


def test_executemany_reports_failed_statements_and_applies_the_rest(
    cur: dbapi.Cursor, table: Table, calls: Any
) -> None:
    """Rows 3 and 27 (in different batches) are duplicates; every other row is written, the
    second batch included, and the error names both rows with DynamoDB's message."""
    cur.executemany(table.insert_sql(["pk", "sk"]), [("a", "003"), ("a", "027")])
    rows = [("a", f"{i:03}") for i in range(30)]
    with pytest.raises(dbapi.IntegrityError) as raised:
        cur.executemany(table.insert_sql(["pk", "sk"]), rows)
    message = str(raised.value)
    assert "2 of 30 batched statements failed" in message
    assert "row 3: DuplicateItem: Duplicate primary key exists in table" in message
    assert "row 27: DuplicateItem" in message
    assert raised.value.code == "DuplicateItem"
    assert cur.rowcount == 28
    assert batch_sizes(calls) == [2, 25, 5]
    assert table.keys(cur) == rows


def test_executemany_update_counts_only_existing_items(cur: dbapi.Cursor, table: Table) -> None:
    cur.executemany(table.insert_sql(["pk", "sk"]), [("a", "1"), ("a", "2")])
    cur.executemany(update_sql(table), [("x", "a", "1"), ("x", "a", "missing"), ("x", "a", "2")])
    assert cur.rowcount == 2
    assert table.keys(cur) == [("a", "1"), ("a", "2")]


@pytest.mark.parametrize(("returning", "expected"), [(" RETURNING ALL OLD *", 2), ("", -1)])
def test_executemany_delete_counts(cur: dbapi.Cursor, table: Table, returning: str, expected: int) -> None:
    cur.executemany(table.insert_sql(["pk", "sk"]), [("a", "1"), ("a", "2")])
    cur.executemany(delete_sql(table, returning), [("a", "1"), ("a", "missing"), ("a", "2")])
    assert cur.rowcount == expected
    assert table.keys(cur) == []


def test_executemany_of_nothing(cur: dbapi.Cursor, table: Table, calls: Any) -> None:
    cur.executemany(table.insert_sql(["pk", "sk"]), [])
    assert cur.rowcount == 0
    assert dict(calls) == {}


def test_executemany_refuses_select(cur: dbapi.Cursor, table: Table, calls: Any) -> None:
    with pytest.raises(dbapi.NotSupportedError, match="run a SELECT with execute"):
        cur.executemany(f'SELECT * FROM {table.ref} WHERE "pk" = ?', [["a"]])
    assert dict(calls) == {}


def test_paths_dynamodb_refuses_side_by_side_are_read_from_their_attributes(
    cur: dbapi.Cursor, table: Table, calls: dict[str, list[dict[str, Any]]]
) -> None:
    """DynamoDB refuses a projection naming one result key twice ("a", "doc"."a") or a path
    inside another ("doc", "doc"."l"[0]); the driver asks for each attribute once instead and
    reads every path from it, so each column gets what its own path holds."""
    table.insert(cur, {"pk": "p", "sk": "1", "a": "top", "doc": {"a": "inner", "l": [10, {"x": "deep"}]}})
    table.insert(cur, {"pk": "p", "sk": "2", "a": "only"})
    cur.execute(
        'SELECT "sk", "a", "a", "doc"."a", "doc", "doc"."l"[0], "doc"."l"[1]."x", "doc"."l"[5], "doc"."a"."no" '
        f'FROM {table.ref} WHERE "pk" = ?',
        ["p"],
    )
    names = ["sk", "a", "a", "a", "doc", "l[0]", "x", "l[5]", "no"]
    assert [column[0] for column in cur.description] == names
    assert cur.fetchall() == [
        (
            "1",
            "top",
            "top",
            "inner",
            {"a": "inner", "l": [Decimal(10), {"x": "deep"}]},
            Decimal(10),
            "deep",
            None,
            None,
        ),
        ("2", "only", "only", None, None, None, None, None, None),
    ]
    assert (
        calls["ExecuteStatement"][-1]["Statement"]
        == f'SELECT "sk", "a", "doc" FROM {table.ref} WHERE "pk" = ?'
    )


def test_describe_sends_nothing_and_names_the_projection(conn):
    cursor = conn.cursor()
    cursor.describe('SELECT "a", "doc"."b" FROM "no_such_table" WHERE "pk" = ?')
    assert [d[0] for d in cursor.description] == ["a", "b"]
    assert cursor.fetchall() == []
    assert cursor.pages == 0


def test_a_finished_select_is_logged_with_its_pages_and_rows(
    cur: dbapi.Cursor, table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    cur.executemany(
        f"INSERT INTO {table.ref} VALUE {{'pk': ?, 'sk': ?}}", [["log", f"{i:02}"] for i in range(5)]
    )
    cur.page_size = 2
    with caplog.at_level(logging.INFO, logger="sa_dynamo"):
        cur.execute(f'SELECT "sk" FROM {table.ref} WHERE "pk" = ?', ["log"])
        assert len(cur.fetchall()) == 5
        cur.fetchall()
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ExecuteStatement")]
    # DynamoDB Local reports no consumed capacity for PartiQL (docs/partiql-findings.md); the time varies
    assert [re.sub(r", [0-9,]+\.[0-9] ms$", ", <ms>", line) for line in lines] == [
        f"ExecuteStatement {table.name}: 3 requests, 5 items read, 5 rows, capacity not reported, <ms>"
    ]
    assert "log" not in lines[0]  # parameters never appear in the log


@pytest.mark.parametrize("hidden", [False, True])
def test_a_lone_surrogate_in_a_read_s_parameter_is_refused_before_sending(
    connect: Any, table: Table, hidden: bool
) -> None:
    cur = connect(hide_parameters=hidden).cursor()
    with pytest.raises(dbapi.DataError, match="a string holds a lone surrogate at character 1") as refused:
        select_partition(cur, table, ' AND "sk" = ?', ("a\udcff",))
    assert cur.pages == 0
    assert ("a\\udcff" in str(refused.value)) is not hidden
