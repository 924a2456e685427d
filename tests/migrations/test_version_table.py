"""The version row moves in one ExecuteTransaction: never zero rows, never two."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy.orm.exc import StaleDataError
from support.sent import bodies_sent


def test_each_step_moves_the_version_row_in_one_transaction(migration_env):
    env = migration_env
    env.revision("r1", None, "pass")
    env.revision("r2", "r1", "pass")
    env.revision("r3", "r2", "pass")
    with (
        env.engine.connect() as connection,
        bodies_sent(connection.connection.dbapi_connection, "ExecuteTransaction") as sent,
    ):
        env.config.attributes["connection"] = connection
        command.upgrade(env.config, "head")
        command.downgrade(env.config, "r1")
    transactions = [[s["Statement"].split(" WHERE")[0] for s in body["TransactStatements"]] for body in sent]
    assert env.version_rows() == ["r1"]
    insert = f"INSERT INTO \"{env.version_table}\" VALUE {{'version_num': ?}}"
    delete = f'DELETE FROM "{env.version_table}"'
    assert transactions == [[insert], [delete, insert], [delete, insert], [delete, insert], [delete, insert]]


def test_a_revision_moved_by_someone_else_is_not_doubled(migration_env, raw):
    env = migration_env
    env.revision("r1", None, "pass")
    # While r2 runs, another process moves the version row from r1 to "elsewhere".
    env.revision(
        "r2",
        "r1",
        f"""
        raw = op.get_bind().connection.dbapi_connection.transport
        raw.send("DeleteItem", {{"TableName": "{env.version_table}", "Key": {{"version_num": {{"S": "r1"}}}}}})
        raw.send("PutItem", {{"TableName": "{env.version_table}", "Item": {{"version_num": {{"S": "elsewhere"}}}}}})
        """,
    )
    command.upgrade(env.config, "r1")
    with pytest.raises(StaleDataError, match=f'DELETE FROM "{env.version_table}"'):
        command.upgrade(env.config, "r2")
    assert env.version_rows() == ["elsewhere"]


def test_a_failed_step_leaves_the_previous_revision(migration_env):
    env = migration_env
    env.revision("r1", None, "pass")
    env.revision("r2", "r1", 'raise RuntimeError("step fails")')
    command.upgrade(env.config, "r1")
    with pytest.raises(RuntimeError, match="step fails"):
        command.upgrade(env.config, "head")
    assert env.version_rows() == ["r1"]


def test_stamp_moves_the_row_without_running_anything(migration_env):
    env = migration_env
    env.revision("r1", None, 'raise RuntimeError("not run by stamp")')
    env.revision("r2", "r1", 'raise RuntimeError("not run by stamp")')
    command.stamp(env.config, "r1")
    assert env.version_rows() == ["r1"]
    command.stamp(env.config, "head")
    assert env.version_rows() == ["r2"]
    command.stamp(env.config, "base")
    assert env.version_rows() == []
