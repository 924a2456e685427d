"""Unique constraints through Alembic: op.create_table with one creates the guard table;
op.create_unique_constraint on a stored table writes a guard per value of its rows (refused,
writing nothing, when two rows share a value); op.drop_constraint by name deletes them. Once
the guards are there, the model's writes are refused a taken value like on any unique table."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.util import CommandError
from sqlalchemy import Column, Integer, MetaData, String, Table, UniqueConstraint, insert
from sqlalchemy.exc import IntegrityError

from sa_dynamo.dbapi.guard_names import guard_table

CREATE_USERS = """
op.create_table(
    "T_users",
    sa.Column("id", sa.Integer(), primary_key=True),
)
"""


def users(env, *constraints) -> Table:
    return Table(
        env.table("users"),
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("email", String),
        *constraints,
    )


def guards(raw, env) -> list[str]:
    """The keys of the guard table's items (every one, records included), sorted."""
    items = raw.scan(TableName=guard_table(env.table("users")), ConsistentRead=True)["Items"]
    return sorted(item["guard"]["S"] for item in items)


@pytest.fixture
def stored(migration_env):
    """A users table with three rows, one without an email; no constraint yet."""
    migration_env.revision("r1", None, CREATE_USERS)
    command.upgrade(migration_env.config, "r1")
    migration_env.fill(
        users(migration_env),
        [{"id": 1, "email": "a@x"}, {"id": 2, "email": "b@x"}, {"id": 3, "email": None}],
    )
    return migration_env


def test_adding_a_constraint_writes_the_guards_and_dropping_it_deletes_them(stored, raw):
    env = stored
    env.revision("r2", "r1", 'op.create_unique_constraint("uq_email", "T_users", ["email"])')
    command.upgrade(env.config, "r2")
    assert guards(raw, env) == [
        '[["email"],[{"S":"a@x"}]]',
        '[["email"],[{"S":"b@x"}]]',
        "constraint:uq_email",
    ]
    table = users(env, UniqueConstraint("email", name="uq_email"))
    refused = pytest.raises(IntegrityError, match=rf"UNIQUE constraint failed: {table.name}\.email")
    with refused, env.engine.begin() as conn:
        conn.execute(insert(table).values(id=4, email="a@x"))
    env.revision("r3", "r2", 'op.drop_constraint("uq_email", "T_users", type_="unique")')
    command.upgrade(env.config, "r3")
    assert guards(raw, env) == []


def test_adding_a_constraint_over_duplicates_is_refused_and_writes_nothing(stored, raw):
    env = stored
    env.fill(users(env), [{"id": 4, "email": "a@x"}])
    env.revision("r2", "r1", 'op.create_unique_constraint("uq_email", "T_users", ["email"])')
    with pytest.raises(
        CommandError, match=r"UNIQUE constraint failed: .*email: 1 value\(s\) are held by more"
    ):
        command.upgrade(env.config, "r2")
    assert env.version_rows() == ["r1"]
    assert guard_table(env.table("users")) not in raw.list_tables()["TableNames"]


def test_dropping_a_constraint_not_recorded_is_refused(stored):
    env = stored
    env.revision("r2", "r1", 'op.drop_constraint("uq_other", "T_users", type_="unique")')
    with pytest.raises(CommandError, match="no unique constraint 'uq_other' is recorded"):
        command.upgrade(env.config, "r2")


def test_create_table_with_a_unique_column_brings_its_guard_table(migration_env, raw):
    env = migration_env
    env.revision(
        "r1",
        None,
        """
        op.create_table(
            "T_users",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("email", sa.String()),
            sa.UniqueConstraint("email", name="uq_email"),
        )
        """,
    )
    command.upgrade(env.config, "r1")
    assert guards(raw, env) == ["constraint:uq_email"]
    table = users(env, UniqueConstraint("email", name="uq_email"))
    with env.engine.begin() as conn:
        conn.execute(insert(table).values(id=1, email="a@x"))
    with pytest.raises(IntegrityError, match="UNIQUE constraint failed"), env.engine.begin() as conn:
        conn.execute(insert(table).values(id=2, email="a@x"))
    env.revision("r2", "r1", 'op.drop_table("T_users")')
    command.upgrade(env.config, "r2")
    assert guard_table(env.table("users")) not in raw.list_tables()["TableNames"]
