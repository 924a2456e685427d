"""Autogenerate against live tables: the operations a changed model needs, rendered into a
script that runs; key-schema differences refused."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import Column, Index, Integer, MetaData, Numeric, String, Table

from alembic_like_migrations import KeySchemaChangeError

LIVE = """
op.create_table(
    "T_app",
    sa.Column("pk", sa.String(), primary_key=True),
    sa.Column("sk", sa.String(), primary_key=True),
    sa.Column("status", sa.String()),
    sa.Index("by_status", "status", dynamodb_projection="KEYS_ONLY"),
    sa.Index("gsi2", "pk", "status"),
    dynamodb_ttl="ttl_a",
)
op.create_table("T_gone", sa.Column("id", sa.String(), primary_key=True))
"""


def model(env) -> MetaData:
    """The application's models after the change: GSI by_status gone, gsi1 (with a numeric sort
    key) added, gsi2 projecting less, TTL on another attribute, T_new added, T_gone dropped."""
    metadata = MetaData()
    Table(
        env.table("app"),
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("status", String),
        Column("gsi1pk", String),
        Column("gsi1sk", Integer),
        Column("total", Numeric(10, 2)),  # an ordinary attribute: nothing for DynamoDB to do
        Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
        Index("gsi2", "pk", "status", dynamodb_projection="KEYS_ONLY"),
        dynamodb_ttl="expires_at",
    )
    Table(
        env.table("new"),
        metadata,
        Column("tenant", String, primary_key=True),
        Column("id", String, primary_key=True),
        Column("created", String),
        Index("by_created", "tenant", "created", dynamodb_local=True),
    )
    return metadata


def script(env, revision: str) -> str:
    return (env.directory / "versions" / f"{revision}_changes.py").read_text()


def test_autogenerate_writes_the_operations_a_changed_model_needs(migration_env, raw):
    env = migration_env
    env.revision("r1", None, LIVE, 'op.drop_table("T_gone")\nop.drop_table("T_app")')
    command.upgrade(env.config, "r1")
    env.config.attributes["target_metadata"] = model(env)

    command.revision(env.config, "changes", autogenerate=True, rev_id="r2")
    text = script(env, "r2")
    app, new, gone = env.table("app"), env.table("new"), env.table("gone")
    upgrade = text[text.index("def upgrade") : text.index("def downgrade")]
    for expected in (
        f"op.create_table('{new}',",
        "sa.Index('by_created', 'tenant', 'created', dynamodb_local=True)",
        f"op.drop_index('by_status', table_name='{app}')",
        f"op.create_index('gsi1', '{app}', ['gsi1pk', sa.Column('gsi1sk', sa.Integer())], dynamodb_projection='ALL')",
        f"op.drop_index('gsi2', table_name='{app}')",
        f"op.create_index('gsi2', '{app}', ['pk', 'status'], dynamodb_projection='KEYS_ONLY')",
        f"op.remove_ttl('{app}', 'ttl_a')",
        f"op.set_ttl('{app}', 'expires_at')",
        f"op.drop_table('{gone}')",
    ):
        assert expected in upgrade
    assert "add_column" not in text and "alter_column" not in text
    assert "'total'" not in text  # non-key attributes are not part of a DynamoDB table

    command.upgrade(env.config, "head")
    described = raw.describe_table(TableName=app)["Table"]
    assert sorted(i["IndexName"] for i in described["GlobalSecondaryIndexes"]) == ["gsi1", "gsi2"]
    assert {"AttributeName": "gsi1sk", "AttributeType": "N"} in described["AttributeDefinitions"]
    assert raw.describe_time_to_live(TableName=app)["TimeToLiveDescription"]["AttributeName"] == "expires_at"
    assert raw.describe_table(TableName=new)["Table"]["LocalSecondaryIndexes"][0]["IndexName"] == "by_created"
    assert gone not in raw.list_tables()["TableNames"]
    command.check(env.config)  # the models and DynamoDB now agree

    command.downgrade(env.config, "r1")
    described = raw.describe_table(TableName=app)["Table"]
    assert sorted(i["IndexName"] for i in described["GlobalSecondaryIndexes"]) == ["by_status", "gsi2"]
    assert raw.describe_time_to_live(TableName=app)["TimeToLiveDescription"]["AttributeName"] == "ttl_a"
    assert gone in raw.list_tables()["TableNames"] and new not in raw.list_tables()["TableNames"]


def test_autogenerate_refuses_key_schema_and_local_index_changes(migration_env):
    env = migration_env
    env.revision("r1", None, LIVE, 'op.drop_table("T_gone")\nop.drop_table("T_app")')
    command.upgrade(env.config, "r1")
    metadata = MetaData()
    Table(
        env.table("app"),
        metadata,
        Column("pk", String, primary_key=True),
        Column("created", Integer, primary_key=True),
        Column("status", String),
        Index("by_status", "status", dynamodb_projection="KEYS_ONLY"),
        Index("gsi2", "pk", "status"),
        Index("lsi1", "pk", "status", dynamodb_local=True),
        dynamodb_ttl="ttl_a",
    )
    Table(env.table("gone"), metadata, Column("id", String, primary_key=True))
    env.config.attributes["target_metadata"] = metadata

    with pytest.raises(KeySchemaChangeError) as refused:
        command.revision(env.config, "changes", autogenerate=True, rev_id="r2")
    message = str(refused.value)
    assert (
        "key schema pk HASH S, sk RANGE S in DynamoDB and pk HASH S, created RANGE N in the model" in message
    )
    assert "local index 'lsi1' is added to the model" in message
    assert "op.copy_items(" in message
    assert not (env.directory / "versions" / "r2_changes.py").exists()
