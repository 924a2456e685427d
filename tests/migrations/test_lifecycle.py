"""upgrade / downgrade / current / history across several revisions: a table, a GSI added and
backfilled over more than 1,000 items, Time to Live, a discriminator renamed."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Column, MetaData, String, Table

ORDERS = 1_100
CUSTOMERS = 40


def items(raw, table: str, **scan) -> list[dict]:
    found, request = [], {"TableName": table, **scan}
    while True:
        page = raw.scan(**request)
        found += page["Items"]
        if "LastEvaluatedKey" not in page:
            return found
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def write_revisions(env) -> None:
    env.revision(
        "r1",
        None,
        """
        op.create_table(
            "T_app",
            sa.Column("pk", sa.String(), primary_key=True),
            sa.Column("sk", sa.String(), primary_key=True),
        )
        """,
        'op.drop_table("T_app")',
    )
    env.revision(
        "r2",
        "r1",
        """
        op.create_index("gsi1", "T_app", ["gsi1pk", "gsi1sk"], dynamodb_projection="ALL")
        op.backfill(
            "T_app",
            templates={"gsi1pk": "STATUS#{status}", "gsi1sk": "{created}"},
            where={"$type": "Order"},
            batch_size=99,
        )
        """,
        """
        op.drop_index("gsi1", table_name="T_app")
        op.backfill("T_app", values={"gsi1pk": None, "gsi1sk": None}, where={"$type": "Order"}, batch_size=99)
        """,
    )
    env.revision("r3", "r2", 'op.set_ttl("T_app", "expires_at")', 'op.remove_ttl("T_app", "expires_at")')
    env.revision(
        "r4",
        "r3",
        'op.rename_discriminator("T_app", "Customer", "Client")',
        'op.rename_discriminator("T_app", "Client", "Customer")',
    )


def test_upgrade_and_downgrade_across_revisions(migration_env, raw):
    env = migration_env
    app = env.table("app")
    write_revisions(env)

    command.upgrade(env.config, "r1")
    assert env.version_rows() == ["r1"]

    table = Table(
        app,
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("$type", String),
        Column("status", String),
        Column("created", String),
    )
    env.fill(
        table,
        [
            {
                "pk": f"CUSTOMER#{i % 50}",
                "sk": f"ORDER#{i:05}",
                "$type": "Order",
                "status": ("open", "shipped")[i % 2],
                "created": f"2024-01-{i % 28 + 1:02}",
            }
            for i in range(ORDERS)
        ],
    )
    env.fill(table, [{"pk": f"CUSTOMER#{i}", "sk": "PROFILE", "$type": "Customer"} for i in range(CUSTOMERS)])

    command.upgrade(env.config, "head")
    assert env.version_rows() == ["r4"]
    indexed = items(raw, app, IndexName="gsi1")
    assert len(indexed) == ORDERS
    assert sum(item["gsi1pk"]["S"] == "STATUS#open" for item in indexed) == ORDERS // 2
    assert raw.describe_time_to_live(TableName=app)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED",
        "AttributeName": "expires_at",
    }
    types = [item["$type"]["S"] for item in items(raw, app)]
    assert types.count("Client") == CUSTOMERS and "Customer" not in types

    command.current(env.config)
    command.history(env.config)
    output = env.stdout.getvalue()
    assert "r4 (head)" in output
    assert "r3 -> r4 (head)" in output and "<base> -> r1" in output

    command.downgrade(env.config, "r1")
    assert env.version_rows() == ["r1"]
    assert "GlobalSecondaryIndexes" not in raw.describe_table(TableName=app)["Table"]
    everything = items(raw, app)
    assert not [item for item in everything if "gsi1pk" in item or "gsi1sk" in item]
    assert [item["$type"]["S"] for item in everything].count("Customer") == CUSTOMERS
    assert raw.describe_time_to_live(TableName=app)["TimeToLiveDescription"]["TimeToLiveStatus"] == "DISABLED"

    command.downgrade(env.config, "base")
    assert env.version_rows() == []
    assert app not in raw.list_tables()["TableNames"]
