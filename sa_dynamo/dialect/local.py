"""``dynamodb+local://``: the dialect over an embedded DynamoDB Local (see sa_dynamo/local_server.py)."""

from __future__ import annotations

import os
import threading
import uuid
from typing import Any

from sqlalchemy.dialects import registry
from sqlalchemy.exc import ArgumentError

from .. import local_server
from .base import DynamoDBDialect
from .url import credentials_of, no_database, transport_of

# The secret of the access keys that pick an engine's tables (DynamoDB Local accepts any).
_SECRET = "sadynamolocal"


class DynamoDBLocalDialect(DynamoDBDialect):
    """``dynamodb+local://``: a private DynamoDB Local on a free loopback port, started on first
    connect and stopped at exit; ``?data_dir=PATH`` keeps the data between runs. When
    ``SA_DYNAMO_LOCAL_ENDPOINT`` is set, that running server is used instead.

    In memory, each engine sees only its own tables, as each ``sqlite://`` engine does: the
    server keeps a database per access key id (it runs without ``-sharedDb``), and each engine
    has a key of its own; ``?shared=NAME`` gives every engine that names NAME (sync and async)
    one key, so they share the tables."""

    driver = "local"
    supports_statement_cache = True
    _servers: dict[str | None, Any] = {}
    _lock = threading.Lock()
    _own_key: str | None = None

    def create_connect_args(self, url: Any) -> tuple[list, dict[str, Any]]:
        query = dict(url.query)
        data_dir = query.pop("data_dir", None)
        shared = query.pop("shared", None)
        transport = transport_of(query)
        if query:
            raise ValueError(
                f"dynamodb+{self.driver}:// accepts only ?data_dir=PATH, ?shared=NAME and ?transport=, "
                f"not {', '.join(sorted(query))}"
            )
        no_database(url)
        credentials = credentials_of(url)
        if url.host or url.port is not None:
            raise ArgumentError(
                f"dynamodb+{self.driver}:// starts its own server on a free port and takes no HOST:PORT: "
                "write dynamodb://HOST:PORT to connect to a server that is already running"
            )
        if shared is None:
            return [], {"local_data_dir": data_dir, **transport, **credentials}
        if data_dir is not None or credentials:
            raise ArgumentError(
                f"dynamodb+{self.driver}://?shared= names the tables of an in-memory server; engines "
                "on one data_dir, or with one access key in the URL, share theirs already: drop shared="
            )
        if not (shared.isascii() and shared.isalnum()):
            raise ArgumentError(f"?shared={shared!r}: the name is letters and digits only")
        return [], {"local_data_dir": None, "local_shared": shared, **transport}

    def connect(
        self, *cargs: Any, local_data_dir: str | None = None, local_shared: str | None = None, **cparams: Any
    ) -> Any:
        """Start the private DynamoDB Local on first connect (not at create_engine), once per
        data dir; in memory, with the access key that picks this engine's tables."""
        if local_data_dir is None and "aws_access_key_id" not in cparams:
            with self._lock:
                if self._own_key is None:
                    self._own_key = f"sadynamo{uuid.uuid4().hex}"
            key = f"sadynamoshared{local_shared}" if local_shared is not None else self._own_key
            cparams.update(aws_access_key_id=key, aws_secret_access_key=_SECRET)
        return super().connect(*cargs, endpoint_url=self.local_endpoint(local_data_dir), **cparams)

    @classmethod
    def get_async_dialect_cls(cls, url: Any) -> type:
        """``create_async_engine("dynamodb+local://")``: ``dynamodb+aiolocal://`` (loaded by name,
        as the async dialects build on this module)."""
        return registry.load("dynamodb.aiolocal")

    @staticmethod
    def throwaway(url: Any) -> bool:
        """Whether the URL's tables live in a server of this process's own, in memory, that no
        other engine sees (no ``data_dir``, no ``shared``, no ``SA_DYNAMO_LOCAL_ENDPOINT``): what
        is written there is gone when the process exits."""
        query = url.query
        return (
            os.environ.get(local_server.ENV_ENDPOINT) is None
            and query.get("data_dir") is None
            and query.get("shared") is None
        )

    @classmethod
    def local_endpoint(cls, data_dir: str | None) -> str:
        """The endpoint of the server for ``data_dir``, started (blocking, seconds) if none runs
        yet; the in-memory one keeps each access key's tables apart."""
        endpoint = os.environ.get(local_server.ENV_ENDPOINT)
        if endpoint is not None:
            return endpoint
        with cls._lock:
            server = cls._servers.get(data_dir)
            if server is None:
                started = local_server.start(data_dir=data_dir, shared_db=data_dir is not None)
                server = cls._servers[data_dir] = started
        return server.endpoint_url
