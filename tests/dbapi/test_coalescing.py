"""Several writes of one item in one transaction become one action at COMMIT, with the effect
of running them in order; what the merge decides is the rowcount at once."""

from __future__ import annotations

import pytest
from support.sent import observed

from sa_dynamo import dbapi

from .support import Table


def update(
    cursor: dbapi.Cursor, table: Table, sets: dict, removes: tuple = (), where: dict | None = None
) -> int:
    text = f"UPDATE {table.ref}"
    if sets:
        text += " SET " + ", ".join(f'"{n}" = ?' for n in sets)
    text += "".join(f' REMOVE "{n}"' for n in removes)
    text += ' WHERE "pk" = ? AND "sk" = ?'
    where = where or {}
    if where:
        text += " AND (" + " AND ".join(f'"{n}" = ?' for n in where) + ")"
    cursor.execute(text, [*sets.values(), "a", "1", *where.values()])
    return cursor.rowcount


def delete(cursor: dbapi.Cursor, table: Table, where: dict | None = None, sk: str = "1") -> int:
    where = where or {}
    text = f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?'
    if where:
        text += " AND (" + " AND ".join(f'"{n}" = ?' for n in where) + ")"
    cursor.execute(text + " RETURNING ALL OLD *", ["a", sk, *where.values()])
    return cursor.rowcount


@pytest.fixture
def actions(tx_conn: dbapi.Connection) -> list[int]:
    """How many statements each ExecuteTransaction carried."""

    def count(operation, body, answer):
        return len(body["TransactStatements"]) if operation == "ExecuteTransaction" else None

    with observed(tx_conn, count) as counts:
        yield counts


def test_insert_then_updates_become_one_insert(tx_conn, tx, table, actions):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1, "n": 5, "gone": "x"})
    assert update(tx, table, {"v": 2}, where={"v": 1}) == 1
    assert update(tx, table, {"v": 3, "w": "new"}, removes=("gone",), where={"v": 2}) == 1
    tx_conn.commit()
    assert actions == [1]
    assert table.item(tx, "a", "1") == {"pk": "a", "sk": "1", "v": 3, "n": 5, "w": "new"}


def test_a_version_check_against_values_written_in_the_transaction_is_decided_at_once(tx_conn, tx, table):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1})
    assert update(tx, table, {"v": 9}, where={"v": 7}) == 0
    tx_conn.commit()
    assert table.item(tx, "a", "1") == {"pk": "a", "sk": "1", "v": 1}


def test_updates_of_a_stored_item_merge_and_keep_the_first_condition(tx_conn, tx, table, actions):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1, "n": 5})
    tx_conn.commit()
    assert update(tx, table, {"v": 2}, where={"v": 1}) == 1
    assert update(tx, table, {"v": 3}, removes=("n",), where={"v": 2}) == 1
    tx_conn.commit()
    assert actions == [1, 1]
    assert table.item(tx, "a", "1") == {"pk": "a", "sk": "1", "v": 3}


def test_merged_condition_still_guards_the_stored_item(tx_conn, tx, table):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 5})
    tx_conn.commit()
    update(tx, table, {"v": 2}, where={"v": 1})
    update(tx, table, {"w": 1}, where={"v": 2})
    with pytest.raises(dbapi.IntegrityError, match="ConditionalCheckFailed"):
        tx_conn.commit()
    assert table.item(tx, "a", "1") == {"pk": "a", "sk": "1", "v": 5}


def test_insert_then_delete_sends_nothing(tx_conn, tx, table, actions):
    table.insert(tx, {"pk": "a", "sk": "1"})
    assert delete(tx, table) == 1
    tx_conn.commit()
    assert actions == []
    assert table.keys(tx) == []


def test_an_insert_of_a_stored_key_fails_though_a_delete_follows(tx_conn, tx, cur, table, actions):
    """SQL refuses the INSERT of a stored key; the DELETE after it cannot make it succeed, so it
    fails at once and the commit that would hold the INSERT fails too: nothing is written."""
    table.insert(cur, {"pk": "a", "sk": "1", "v": "stored"})
    table.insert(tx, {"pk": "a", "sk": "1", "v": "new"})
    with pytest.raises(
        dbapi.IntegrityError, match=r"duplicate key \{'pk': 'a', 'sk': '1'\} in table .* already stored"
    ):
        delete(tx, table)
    assert tx_conn.pending == 1
    with pytest.raises(dbapi.IntegrityError, match="Duplicate primary key"):
        tx_conn.commit()
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "v": "stored"}


def test_update_then_delete_becomes_one_conditional_delete(tx_conn, tx, table, actions):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1})
    tx_conn.commit()
    update(tx, table, {"v": 2}, where={"v": 1})
    assert delete(tx, table, where={"v": 2}) == 1
    tx_conn.commit()
    assert actions == [1, 1]
    assert table.keys(tx) == []


def test_writes_after_a_delete_match_nothing(tx_conn, tx, table):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1})
    tx_conn.commit()
    delete(tx, table)
    assert update(tx, table, {"v": 2}) == 0
    assert delete(tx, table) == 0
    tx_conn.commit()
    assert table.keys(tx) == []


def test_an_item_deleted_and_inserted_again_is_written_anew(tx_conn, tx, table, calls):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1, "old": "x"})
    tx_conn.commit()
    delete(tx, table)
    table.insert(tx, {"pk": "a", "sk": "1", "v": 2, "new": "y"})
    assert tx.rowcount == 1
    table.insert(tx, {"pk": "a", "sk": "2", "v": 3})  # never stored: deleted, then inserted
    delete(tx, table, sk="2")
    table.insert(tx, {"pk": "a", "sk": "2", "v": 4})
    tx_conn.commit()
    assert table.item(tx, "a", "1") == {"pk": "a", "sk": "1", "v": 2, "new": "y"}
    assert table.item(tx, "a", "2") == {"pk": "a", "sk": "2", "v": 4}
    assert [len(c["TransactStatements"]) for c in calls["ExecuteTransaction"]] == [1, 2]


def test_a_condition_that_cannot_be_decided_is_refused(tx_conn, tx, table):
    table.insert(tx, {"pk": "a", "sk": "1", "v": 1})
    text = f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ? AND ("v" > ?)'
    with pytest.raises(dbapi.NotSupportedError, match="commit before this statement"):
        tx.execute(text, [2, "a", "1", 0])
