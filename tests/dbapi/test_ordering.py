"""The driver's client-side ORDER BY sorts as SQLite does (sqlite3 is the judge)."""

from __future__ import annotations

import itertools
import sqlite3
from decimal import Decimal

import pytest

from sa_dynamo.dbapi import DataError
from sa_dynamo.dbapi.ordering import sort_rows

VALUES = [None, 3, -1, Decimal("2.5"), True, "b", "B", "é", "", "ab", b"\x00", b"a", 0, None]


def _sqlite_order(rows: list[tuple], order_by: str) -> list[tuple]:
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE TABLE t (i INTEGER, a, b)")
        db.executemany(
            "INSERT INTO t VALUES (?, ?, ?)",
            [(row[0], *(float(v) if isinstance(v, Decimal) else v for v in row[1:])) for row in rows],
        )
        positions = [i for (i,) in db.execute(f"SELECT i FROM t ORDER BY {order_by}, i")]
    return [rows[i] for i in positions]


@pytest.mark.parametrize(
    ("order", "order_by"),
    [
        ([(1, False, None)], "a"),
        ([(1, True, None)], "a DESC"),
        ([(2, False, None), (1, True, None)], "b, a DESC"),
        ([(2, True, None), (1, False, None)], "b DESC, a"),
        ([(1, False, False)], "a NULLS LAST"),
        ([(1, True, True)], "a DESC NULLS FIRST"),
        ([(1, False, True), (2, True, False)], "a NULLS FIRST, b DESC NULLS LAST"),
        ([(2, True, True), (1, False, False)], "b DESC NULLS FIRST, a ASC NULLS LAST"),
    ],
)
def test_rows_sort_as_sqlite_sorts_them(order, order_by):
    pairs = list(itertools.product(VALUES[:8], VALUES[6:]))
    rows = [(i, a, b) for i, (a, b) in enumerate(pairs)]
    assert sort_rows(rows, order) == _sqlite_order(rows, order_by)


def test_equal_rows_keep_their_order_and_the_input_is_not_changed():
    rows = [(1, "x"), (0, "x"), (2, None)]
    assert sort_rows(rows, [(1, True, None)]) == [(1, "x"), (0, "x"), (2, None)]
    assert sort_rows(rows, []) == rows
    assert rows == [(1, "x"), (0, "x"), (2, None)]


def test_a_document_cannot_be_sorted():
    with pytest.raises(DataError, match="cannot sort by a dict value"):
        sort_rows([({"a": 1},), ({"a": 2},)], [(0, False, None)])
