"""Backfills: interrupted and resumed without writing any item twice, a crash between the
backfill and the version commit, conflicts, copies into a new key schema, attribute removal."""

from __future__ import annotations

import logging

import pytest
from alembic import command
from sqlalchemy import Column, MetaData, String, Table

from alembic_like_migrations import BackfillConflict, KeySchemaChangeError

ITEMS = 500
BATCH = 50

CREATE_APP = """
op.create_table(
    "T_app",
    sa.Column("pk", sa.String(), primary_key=True),
    sa.Column("sk", sa.String(), primary_key=True),
)
"""

# A non-idempotent change (a counter) that a double application would show, and two switches
# the test flips through config.attributes: a crash after N batches, a crash after the backfill.
COUNTING_BACKFILL = """
switches = op.get_context().config.attributes


def interrupt(progress):
    if progress.batches == switches.get("crash_after_batches"):
        raise RuntimeError(f"crash after batch {progress.batches}")


op.backfill(
    "T_app",
    transform=lambda item: {"n": (item.get("n") or 0) + 1, "gsi1pk": "TYPE#" + item["$type"]},
    batch_size=50,
    on_batch=interrupt,
)
if switches.get("crash_after_backfill"):
    raise RuntimeError("crash before the version row moves")
"""


def app_table(env) -> Table:
    return Table(
        env.table("app"),
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("$type", String),
    )


def seeded(env, count: int = ITEMS) -> Table:
    env.revision("r1", None, CREATE_APP, 'op.drop_table("T_app")')
    command.upgrade(env.config, "r1")
    table = app_table(env)
    env.fill(table, [{"pk": f"P#{i % 17}", "sk": f"S#{i:04}", "$type": "Order"} for i in range(count)])
    return table


def scan(raw, table: str) -> list[dict]:
    found, request = [], {"TableName": table}
    while True:
        page = raw.scan(**request)
        found += page["Items"]
        if "LastEvaluatedKey" not in page:
            return found
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def counters(raw, table: str) -> list[int]:
    return sorted(int(item["n"]["N"]) if "n" in item else 0 for item in scan(raw, table))


def test_an_interrupted_backfill_resumes_and_writes_every_item_once(migration_env, raw):
    env = migration_env
    seeded(env)
    env.revision("r2", "r1", COUNTING_BACKFILL)
    checkpoints = f"{env.version_table}_backfill"

    env.config.attributes["crash_after_batches"] = 3
    with pytest.raises(RuntimeError, match="crash after batch 3"):
        command.upgrade(env.config, "head")
    assert env.version_rows() == ["r1"]
    assert counters(raw, env.table("app")) == [0] * (ITEMS - 3 * BATCH) + [1] * (3 * BATCH)
    [checkpoint] = scan(raw, checkpoints)
    assert checkpoint["batches"] == {"N": "3"} and checkpoint["done"] == {"BOOL": False}

    # Resumed, it finishes; then a crash before the version row moves loses nothing...
    del env.config.attributes["crash_after_batches"]
    env.config.attributes["crash_after_backfill"] = True
    with pytest.raises(RuntimeError, match="crash before the version row moves"):
        command.upgrade(env.config, "head")
    assert env.version_rows() == ["r1"]
    assert counters(raw, env.table("app")) == [1] * ITEMS

    # ...and the re-run finds the backfill complete: no item is written a second time.
    del env.config.attributes["crash_after_backfill"]
    command.upgrade(env.config, "head")
    assert env.version_rows() == ["r2"]
    items = scan(raw, env.table("app"))
    assert {item["n"]["N"] for item in items} == {"1"} and len(items) == ITEMS
    assert {item["gsi1pk"]["S"] for item in items} == {"TYPE#Order"}
    # The checkpoint was forgotten in the commit that moved the version row.
    assert scan(raw, checkpoints) == []


def test_a_second_runner_on_the_same_backfill_is_stopped(migration_env, raw):
    env = migration_env
    seeded(env, 200)
    checkpoints = f"{env.version_table}_backfill"
    env.revision(
        "r2",
        "r1",
        f"""
        def meddle(progress):
            if progress.batches == 2:  # another process commits a batch of the same backfill
                transport = op.get_bind().connection.dbapi_connection.transport
                transport.send(
                    "UpdateItem",
                    {{
                        "TableName": "{checkpoints}",
                        "Key": {{"id": {{"S": progress.name}}}},
                        "UpdateExpression": "SET batches = :b",
                        "ExpressionAttributeValues": {{":b": {{"N": "3"}}}},
                    }},
                )

        op.backfill("T_app", values={{"flag": True}}, batch_size=50, name="flag-all", on_batch=meddle)
        """,
    )
    with pytest.raises(BackfillConflict, match="another process is running backfill 'flag-all'"):
        command.upgrade(env.config, "head")
    assert env.version_rows() == ["r1"]
    assert sum("flag" in item for item in scan(raw, env.table("app"))) == 100


def test_copy_items_builds_a_table_with_another_key_schema(migration_env, raw):
    env = migration_env
    seeded(env, 120)
    env.revision(
        "r2",
        "r1",
        """
        op.create_table(
            "T_by_sk",
            sa.Column("sk", sa.String(), primary_key=True),
            sa.Column("pk", sa.String(), primary_key=True),
        )
        op.copy_items("T_app", "T_by_sk", values={"copied": True}, where={"$type": "Order"})
        """,
        'op.drop_table("T_by_sk")',
    )
    command.upgrade(env.config, "head")
    copies = scan(raw, env.table("by_sk"))
    assert len(copies) == 120
    assert all(item["copied"] == {"BOOL": True} and item["$type"] == {"S": "Order"} for item in copies)
    key = raw.describe_table(TableName=env.table("by_sk"))["Table"]["KeySchema"]
    assert key == [{"AttributeName": "sk", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}]


def test_a_backfill_cannot_rewrite_a_key(migration_env):
    env = migration_env
    seeded(env, 10)
    env.revision("r2", "r1", 'op.backfill("T_app", templates={"sk": "NEW#{sk}"})')
    with pytest.raises(KeySchemaChangeError, match=r"cannot change its key attribute\(s\) sk.*op.copy_items"):
        command.upgrade(env.config, "head")
    assert env.version_rows() == ["r1"]


def test_drop_column_can_remove_the_attribute_from_every_item(migration_env, raw):
    env = migration_env
    seeded(env, 60)
    env.revision(
        "r2",
        "r1",
        """
        op.add_column("T_app", sa.Column("legacy", sa.String()))
        op.backfill("T_app", values={"legacy": "x"})
        """,
    )
    env.revision("r3", "r2", 'op.drop_column("T_app", "legacy")')
    env.revision("r4", "r3", 'op.drop_column("T_app", "legacy", dynamodb_remove=True)')

    command.upgrade(env.config, "r3")
    assert all(item["legacy"] == {"S": "x"} for item in scan(raw, env.table("app")))
    command.upgrade(env.config, "r4")
    assert not [item for item in scan(raw, env.table("app")) if "legacy" in item]


@pytest.mark.parametrize(("count", "batches"), [(3, 1), (120, 3)])
def test_the_progress_reaches_done_without_a_last_99_percent(migration_env, caplog, count, batches):
    """Each batch but the last is a progress line; the last one is reported as done."""
    env = migration_env
    seeded(env, count=count)
    env.revision("r2", "r1", COUNTING_BACKFILL)
    with caplog.at_level(logging.INFO, logger="alembic.dynamodb"):
        command.upgrade(env.config, "head")
    label = f"backfill {env.table('app')}"
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith(label)]
    plural = "es" if batches > 1 else ""
    assert lines[-1] == f"{label}: done, {count} scanned, {count} written in {batches} batch{plural}"
    progress = [int(line.split(": ")[1].split("%")[0]) for line in lines[:-1]]
    assert len(progress) == batches - 1 and all(percent < 100 for percent in progress)
    assert f"{count} scanned" not in " ".join(lines[:-1])
