"""What DynamoDB cannot alter is refused with the way to get there; schemaless column
operations send nothing."""

from __future__ import annotations

import logging

import pytest
from alembic import command
from alembic.util import CommandError

from alembic_like_migrations import KeySchemaChangeError

CREATE_APP = """
op.create_table(
    "T_app",
    sa.Column("pk", sa.String(), primary_key=True),
    sa.Column("sk", sa.String(), primary_key=True),
    sa.Index("gsi1", "gsi1pk", "gsi1sk"),
    sa.Column("gsi1pk", sa.String()),
    sa.Column("gsi1sk", sa.String()),
)
"""


@pytest.fixture
def app(migration_env):
    migration_env.revision("r1", None, CREATE_APP)
    command.upgrade(migration_env.config, "r1")
    return migration_env


@pytest.mark.parametrize(
    ("operation", "refusal"),
    [
        ('op.alter_column("T_app", "sk", new_column_name="sort")', "cannot alter key column 'sk'"),
        ('op.alter_column("T_app", "pk", type_=sa.Integer())', "cannot alter key column 'pk'"),
        ('op.create_primary_key("pk2", "T_app", ["pk", "other"])', "cannot change the primary key"),
        ('op.drop_constraint("pk", "T_app", type_="primary")', "cannot change the primary key"),
        ('op.drop_column("T_app", "sk")', "cannot drop key column 'sk'"),
        (
            'op.add_column("T_app", sa.Column("tenant", sa.String(), primary_key=True))',
            "cannot add key column 'tenant'",
        ),
        (
            'op.create_index("lsi1", "T_app", ["pk", "x"], dynamodb_local=True)',
            "local index 'lsi1' can only be created together with table",
        ),
        ('op.alter_column("T_app", "gsi1sk", type_=sa.Integer())', "it is an index key of type S"),
    ],
)
def test_key_schema_changes_are_refused_with_the_way_around(app, operation, refusal):
    app.revision("r2", "r1", operation)
    with pytest.raises(KeySchemaChangeError, match=refusal) as refused:
        command.upgrade(app.config, "r2")
    assert "op.copy_items(" in str(refused.value) or "op.drop_index" in str(refused.value)
    assert app.version_rows() == ["r1"]


@pytest.mark.parametrize(
    ("operation", "refusal"),
    [
        ('op.rename_table("T_app", "T_other")', r"cannot rename table .* op.copy_items\("),
        (
            'op.alter_column("T_app", "status", new_column_name="state")',
            r"cannot rename attribute .* op.backfill\(",
        ),
        ('op.drop_index("gsi1")', "needs table_name="),
    ],
)
def test_what_dynamodb_has_no_equivalent_for_is_refused(app, operation, refusal):
    app.revision("r2", "r1", operation)
    with pytest.raises(CommandError, match=refusal):
        command.upgrade(app.config, "r2")
    assert app.version_rows() == ["r1"]


def test_schemaless_column_operations_send_nothing_and_say_so(app, caplog):
    app.revision(
        "r2",
        "r1",
        """
        op.add_column("T_app", sa.Column("email", sa.String()))
        op.alter_column("T_app", "email", nullable=False, type_=sa.Text())
        op.drop_column("T_app", "email")
        """,
    )
    with caplog.at_level(logging.INFO, logger="alembic.dynamodb"):
        command.upgrade(app.config, "r2")
    notes = [record.getMessage() for record in caplog.records if record.name == "alembic.dynamodb"]
    assert [note.split(":")[0] for note in notes] == [
        f"add_column {app.table('app')}.email",
        f"alter_column {app.table('app')}.email",
        f"drop_column {app.table('app')}.email",
    ]
    assert app.version_rows() == ["r2"]
