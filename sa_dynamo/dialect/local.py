"""``dynamodb+local://``: the dialect over an embedded DynamoDB Local (see sa_dynamo/local_server.py)."""

from __future__ import annotations

import os
import threading
from typing import Any

from sqlalchemy.exc import ArgumentError

from .. import local_server
from .base import DynamoDBDialect
from .url import credentials_of, no_database, transport_of


class DynamoDBLocalDialect(DynamoDBDialect):
    """``dynamodb+local://``: a private DynamoDB Local on a free loopback port, started on first
    connect and stopped at exit; ``?data_dir=PATH`` keeps the data between runs. When
    ``SA_DYNAMO_LOCAL_ENDPOINT`` is set, that running server is used instead."""

    driver = "local"
    supports_statement_cache = True
    _servers: dict[str | None, Any] = {}
    _lock = threading.Lock()

    def create_connect_args(self, url: Any) -> tuple[list, dict[str, Any]]:
        query = dict(url.query)
        data_dir = query.pop("data_dir", None)
        transport = transport_of(query)
        if query:
            raise ValueError(
                f"dynamodb+{self.driver}:// accepts only ?data_dir=PATH and ?transport=, not "
                f"{', '.join(sorted(query))}"
            )
        no_database(url)
        credentials = credentials_of(url)
        if url.host or url.port is not None:
            raise ArgumentError(
                f"dynamodb+{self.driver}:// starts its own server on a free port and takes no HOST:PORT: "
                "write dynamodb://HOST:PORT to connect to a server that is already running"
            )
        return [], {"local_data_dir": data_dir, **transport, **credentials}

    def connect(self, *cargs: Any, local_data_dir: str | None = None, **cparams: Any) -> Any:
        """Start the private DynamoDB Local on first connect (not at create_engine), once per data dir."""
        return super().connect(*cargs, endpoint_url=self.local_endpoint(local_data_dir), **cparams)

    @classmethod
    def local_endpoint(cls, data_dir: str | None) -> str:
        """The endpoint of the server for ``data_dir``, started (blocking, seconds) if none runs yet."""
        endpoint = os.environ.get(local_server.ENV_ENDPOINT)
        if endpoint is not None:
            return endpoint
        with cls._lock:
            server = cls._servers.get(data_dir)
            if server is None:
                server = cls._servers[data_dir] = local_server.start(data_dir=data_dir)
        return server.endpoint_url
