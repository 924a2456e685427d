"""Runs SQLAlchemy's dialect compliance suite against a private DynamoDB Local.

SQLAlchemy's pytest plugin owns this pytest run (options, test generation, engines); this file
adds the server and the provisioning steps DynamoDB needs. (Names here are qualified: the star
import of the plugin brings names such as ``inspect`` of its own.)
"""

from __future__ import annotations

import os

import pytest

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

import sqlalchemy as sa  # noqa: E402
from sqlalchemy.testing import provision  # noqa: E402
from sqlalchemy.testing.plugin import pytestplugin  # noqa: E402
from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402, F403

from sa_dynamo import local_server  # noqa: E402

_server = None


def pytest_configure(config):
    """Start DynamoDB Local before SQLAlchemy's plugin connects to [db] default."""
    global _server
    _server = local_server.start()
    os.environ[local_server.ENV_ENDPOINT] = _server.endpoint_url
    pytestplugin.pytest_configure(config)


def pytest_unconfigure(config):
    pytestplugin.pytest_unconfigure(config)
    if _server is not None:
        os.environ.pop(local_server.ENV_ENDPOINT, None)
        _server.stop()


@provision.update_db_opts.for_db("dynamodb")
def _update_db_opts(db_url, db_opts, options):
    """Engine options for every engine of the run.

    AUTOCOMMIT: the suite's tests insert and then select in one transaction; in the default mode
    writes wait for COMMIT (one ExecuteTransaction) and a transaction does not read its own
    writes. The classes that test transactions themselves run in the default mode
    (test_suite.py). dynamodb_scan="allow": the suite reads whole tables on purpose, and a
    ScanWarning is an SAWarning, which the suite turns into an error.
    """
    db_opts["isolation_level"] = "AUTOCOMMIT"
    db_opts["dynamodb_scan"] = "allow"


@provision.delete_from_all_tables.for_db("dynamodb")
def _delete_from_all_tables(connection, cfg, metadata):
    """A DELETE names the whole key: read the keys, then delete item by item."""
    existing = set(sa.inspect(connection).get_table_names())
    for table in metadata.tables.values():
        if table.name in existing:
            key = list(table.primary_key.columns)
            for row in connection.execute(sa.select(*key)).all():
                connection.execute(table.delete().where(*(c == v for c, v in zip(key, row, strict=True))))
