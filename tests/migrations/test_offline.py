"""``alembic upgrade --sql``: the planned DynamoDB calls, readably, and nothing sent."""

from __future__ import annotations

import io
import json

from alembic import command


def test_offline_upgrade_and_downgrade_print_the_planned_calls(migration_env, raw):
    env = migration_env
    env.revision(
        "r1",
        None,
        """
        app = op.create_table(
            "T_app",
            sa.Column("pk", sa.String(), primary_key=True),
            sa.Column("sk", sa.String(), primary_key=True),
            sa.Column("when", sa.Integer()),
            sa.Index("by_when", "pk", "when", dynamodb_local=True),
        )
        op.bulk_insert(app, [{"pk": "P#1", "sk": "S#1", "when": 7}])
        """,
        'op.drop_table("T_app")',
    )
    env.revision(
        "r2",
        "r1",
        """
        op.create_index("gsi1", "T_app", ["gsi1pk", sa.Column("gsi1sk", sa.Numeric())])
        op.backfill("T_app", templates={"gsi1pk": "STATUS#{status}"}, where={"$type": "Order"})
        op.set_ttl("T_app", "expires_at")
        op.add_column("T_app", sa.Column("email", sa.String()))
        """,
        """
        op.remove_ttl("T_app", "expires_at")
        op.drop_index("gsi1", table_name="T_app")
        """,
    )
    env.config.output_buffer = output = io.StringIO()

    command.upgrade(env.config, "head", sql=True)
    lines = [line for line in output.getvalue().splitlines() if line]
    calls = [line.split(" ", 1) for line in lines if not line.startswith("--")]
    app = env.table("app")
    assert [name for name, _ in calls] == [
        "CreateTable",  # the version table
        "CreateTable",
        "ExecuteStatement",
        "ExecuteTransaction",
        "UpdateTable",
        "UpdateTimeToLive",
        "ExecuteTransaction",
    ]
    table = json.loads(calls[1][1])
    assert table["TableName"] == app
    assert table["LocalSecondaryIndexes"][0]["IndexName"] == "by_when"
    assert json.loads(calls[2][1]) == {
        "Statement": f"INSERT INTO \"{app}\" VALUE {{'pk': ?, 'sk': ?, 'when': ?}}",
        "Parameters": ["P#1", "S#1", 7],
    }
    index = json.loads(calls[4][1])
    assert {"AttributeName": "gsi1sk", "AttributeType": "N"} in index["AttributeDefinitions"]
    assert json.loads(calls[6][1])["TransactStatements"] == [
        {
            "Statement": f'DELETE FROM "{env.version_table}" WHERE "version_num" = ? AND (attribute_exists("version_num"))',
            "Parameters": ["r1"],
        },
        {
            "Statement": f"INSERT INTO \"{env.version_table}\" VALUE {{'version_num': ?}}",
            "Parameters": ["r2"],
        },
    ]
    comments = [line for line in lines if line.startswith("--")]
    assert any(f"-- backfill: update the items of '{app}'; where {{'$type': 'Order'}}" in c for c in comments)
    assert any(f"-- add_column {app}.email: DynamoDB items are schemaless" in c for c in comments)
    assert app not in raw.list_tables()["TableNames"]

    output.seek(0)
    output.truncate()
    command.downgrade(env.config, "r2:base", sql=True)
    calls = [
        line.split(" ", 1)[0] for line in output.getvalue().splitlines() if line and not line.startswith("--")
    ]
    assert calls == [
        "UpdateTimeToLive",
        "UpdateTable",
        "ExecuteTransaction",
        "DeleteTable",
        "ExecuteTransaction",
    ]
