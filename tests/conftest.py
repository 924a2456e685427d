"""Test fixtures: one real DynamoDB Local for the whole session, on a free 127.0.0.1 port."""

from __future__ import annotations

import os
import uuid

import pytest

from sa_dynamo import local


@pytest.fixture(scope="session")
def dynamodb_local():
    server = local.start()
    # `dynamodb+local://` URLs (docs, examples) reuse this server instead of starting their own.
    os.environ[local.ENV_ENDPOINT] = server.endpoint_url
    yield server
    os.environ.pop(local.ENV_ENDPOINT, None)
    server.stop()


@pytest.fixture(scope="session")
def endpoint_url(dynamodb_local) -> str:
    return dynamodb_local.endpoint_url


@pytest.fixture
def table_name() -> str:
    """A table name no other test uses."""
    return f"t_{uuid.uuid4().hex[:12]}"
