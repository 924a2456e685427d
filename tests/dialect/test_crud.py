"""Core CRUD against DynamoDB Local: what comes back, what is written, and what echo shows."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError


def rows(n: int, partition: str = "A") -> list[dict]:
    return [{"pk": partition, "sk": f"{i:03}", "n": i, "name": f"name{i}"} for i in range(n)]


def test_insert_then_select_by_partition(engine, items):
    with engine.begin() as conn:
        conn.execute(items.insert(), rows(3) + rows(2, partition="B"))
    with engine.connect() as conn:
        result = conn.execute(select(items.c.sk, items.c.n).where(items.c.pk == "A")).all()
    assert result == [("000", 0), ("001", 1), ("002", 2)]
    assert all(type(n) is int for _, n in result)


def test_filters_and_sort_key_conditions(engine, items):
    with engine.begin() as conn:
        conn.execute(items.insert(), rows(10))
    query = select(items.c.sk).where(items.c.pk == "A", items.c.sk >= "003", items.c.n != 5, items.c.n < 8)
    with engine.connect() as conn:
        assert conn.scalars(query).all() == ["003", "004", "006", "007"]
        descending = select(items.c.sk).where(items.c.pk == "A").order_by(items.c.sk.desc())
        assert conn.execute(descending).all()[:3] == [("009",), ("008",), ("007",)]


def test_limit_counts_rows_across_pages(engine, items, sent):
    """DynamoDB's Limit counts items read; .limit(n) must still give n matching rows."""
    with engine.begin() as conn:
        conn.execute(items.insert(), rows(40))
    query = select(items.c.sk).where(items.c.pk == "A", items.c.n >= 30).limit(4)
    with engine.connect().execution_options(dynamodb_page_size=5) as conn:
        result = conn.execute(query)
        assert result.scalars().all() == ["030", "031", "032", "033"]
    assert "LIMIT" not in sent[-1]


def test_update_and_delete_rowcounts_in_autocommit(engine, items):
    with engine.begin() as conn:
        conn.execute(items.insert(), rows(2))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        key = (items.c.pk == "A", items.c.sk == "001")
        missing = (items.c.pk == "A", items.c.sk == "999")
        assert conn.execute(items.update().where(*key).values(n=10)).rowcount == 1
        assert conn.execute(items.update().where(*missing).values(n=10)).rowcount == 0
        assert conn.execute(items.update().where(*key, items.c.n == 3).values(n=11)).rowcount == 0
        assert conn.execute(items.delete().where(*key)).rowcount == 1
        assert conn.execute(items.delete().where(*key)).rowcount == 0
        assert conn.scalars(select(items.c.sk).where(items.c.pk == "A")).all() == ["000"]


@pytest.mark.parametrize("autocommit", [True, False])
def test_a_write_that_tests_its_key_again_matches_as_sqlite_says(engine, items, sent, autocommit):
    """DynamoDB refuses a second condition on a key attribute in a write; with the key pinned by
    ==, the other tests of it are decided on the key's values, and the write runs or matches
    nothing, as SQLite's would."""
    with engine.begin() as conn:
        conn.execute(items.insert(), rows(2))
    key = (items.c.pk == "A", items.c.sk == "001")
    options = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
    with engine.connect().execution_options(**options) as conn:
        held = conn.execute(items.update().where(*key, items.c.sk.startswith("00")).values(n=10))
        failed = conn.execute(items.update().where(*key, items.c.pk != "A").values(n=20))
        deleted = conn.execute(items.delete().where(*key, items.c.sk.in_(["000", "002"])))
        twice = conn.execute(items.delete().where(*key, items.c.sk == "002"))
        conn.commit()
        assert (held.rowcount, failed.rowcount, deleted.rowcount, twice.rowcount) == (1, 0, 0, 0)
        assert conn.execute(select(items.c.sk, items.c.n).where(items.c.pk == "A")).all() == [
            ("000", 0),
            ("001", 10),
        ]
    assert not [s for s in sent if s.startswith(("UPDATE", "DELETE")) and s.count('"sk"') > 1]


def test_none_leaves_attributes_absent_and_echo_shows_the_statement_sent(engine, items, raw, sent, caplog):
    with caplog.at_level(logging.INFO, logger="sqlalchemy.engine"):
        with engine.begin() as conn:
            conn.execute(items.insert().values(pk="A", sk="1", n=None, name="x"))
        with engine.begin() as conn:
            conn.execute(items.update().where(items.c.pk == "A", items.c.sk == "1").values(name=None, n=2))
    expected_insert = f"INSERT INTO \"{items.name}\" VALUE {{'pk': ?, 'sk': ?, 'name': ?}}"
    expected_update = f'UPDATE "{items.name}" SET "n" = ? REMOVE "name" WHERE "pk" = ? AND "sk" = ?'
    assert sent == [expected_insert, expected_update]
    logged = [record.getMessage() for record in caplog.records]
    assert expected_insert in logged
    assert expected_update in logged
    item = raw.get_item(TableName=items.name, Key={"pk": {"S": "A"}, "sk": {"S": "1"}})["Item"]
    assert item == {"pk": {"S": "A"}, "sk": {"S": "1"}, "n": {"N": "2"}}


def test_executemany_with_different_absent_attributes(engine, items, raw):
    with engine.begin() as conn:
        conn.execute(items.insert(), [{"pk": "A", "sk": "1", "n": 1}, {"pk": "A", "sk": "2", "n": None}])
    stored = raw.execute_statement(
        Statement=f'SELECT * FROM "{items.name}" WHERE "pk" = ?', Parameters=[{"S": "A"}]
    )
    assert sorted(stored["Items"], key=lambda i: i["sk"]["S"]) == [
        {"pk": {"S": "A"}, "sk": {"S": "1"}, "n": {"N": "1"}},
        {"pk": {"S": "A"}, "sk": {"S": "2"}},
    ]


def test_rollback_discards_buffered_writes(engine, items):
    with engine.connect() as conn:
        conn.execute(items.insert(), rows(2))
        conn.rollback()
        conn.execute(items.insert(), rows(1, partition="B"))
        conn.commit()
        assert conn.scalars(select(items.c.pk).where(items.c.pk.in_(["A", "B"]))).all() == ["B"]


def test_duplicate_key_fails_the_whole_commit(engine, items):
    with engine.begin() as conn:
        conn.execute(items.insert(), rows(1))
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(items.insert(), rows(1, partition="B"))
        conn.execute(items.insert(), rows(1))
    with engine.connect() as conn:
        assert conn.scalars(select(items.c.pk).where(items.c.pk.in_(["A", "B"]))).all() == ["A"]
