"""Alembic on ``dynamodb+local://`` (issue 40 item 23): a migration of the in-memory DynamoDB Local
that the process starts for itself would vanish with the process, so it is refused, saying how
to migrate a server that lasts; a server that lasts is migrated as any other."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.util import CommandError
from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from sa_dynamo.dialect.local import DynamoDBLocalDialect

from .conftest import MigrationEnv

CREATE = "op.create_table('T_shop', sa.Column('pk', sa.String, primary_key=True))"


def test_a_server_of_the_process_s_own_is_refused_and_nothing_is_migrated(
    tmp_path, table_name, monkeypatch, dynamodb_local
) -> None:
    monkeypatch.delenv("SA_DYNAMO_LOCAL_ENDPOINT")  # the session's server set it
    env = MigrationEnv(tmp_path / "migrations", "dynamodb+local://", table_name)
    env.revision("0001", None, CREATE)
    try:
        with env.engine.connect() as connection, pytest.raises(CommandError) as refused:
            env.config.attributes["connection"] = connection  # so that its tables can be looked at
            command.upgrade(env.config, "head")
        assert str(refused.value) == (
            "dynamodb+local:// migrates a DynamoDB Local of this process's own, in memory, which is "
            "gone when the process exits: the migration would be lost. Start a server (sa-dynamo "
            "local start) and export SA_DYNAMO_LOCAL_ENDPOINT=http://127.0.0.1:8000, keep the tables "
            "with dynamodb+local://?data_dir=PATH, or connect to a running server with "
            "dynamodb://HOST:PORT"
        )
        assert inspect(env.engine).get_table_names() == []
    finally:
        env.engine.dispose()


@pytest.mark.parametrize(
    ("url", "endpoint", "throwaway"),
    [
        ("dynamodb+local://", None, True),
        ("dynamodb+local://", "http://127.0.0.1:8000", False),
        ("dynamodb+local://?data_dir=/srv/ddb", None, False),
        ("dynamodb+local://?shared=app", None, False),
    ],
)
def test_which_local_urls_are_throwaway(url, endpoint, throwaway, monkeypatch) -> None:
    """``shared`` tables outlive the engine in the process, for a test that migrates and reads."""
    if endpoint is None:
        monkeypatch.delenv("SA_DYNAMO_LOCAL_ENDPOINT", raising=False)
    else:
        monkeypatch.setenv("SA_DYNAMO_LOCAL_ENDPOINT", endpoint)
    assert DynamoDBLocalDialect.throwaway(make_url(url)) is throwaway


def test_the_session_s_server_through_the_endpoint_variable_is_migrated(
    tmp_path, table_name, dynamodb_local
) -> None:
    env = MigrationEnv(tmp_path / "migrations", "dynamodb+local://", table_name)
    env.revision("0001", None, CREATE)
    try:
        command.upgrade(env.config, "head")
        assert env.version_rows() == ["0001"]
    finally:
        env.engine.dispose()
