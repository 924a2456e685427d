"""The transport on botocore's client: boto3's credentials, signing, endpoints and retries.

The driver's own clients (``client()``) validate no parameters, so that the bodies of the
requests carrying statements or items are encoded by the driver, and pages of items read by it
(botocore_wire.py); a client the user passes in is used as it is.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from .. import statement as stmt
from ..errors import MISSING_TABLE_CODES, Error, missing_table, translate
from . import botocore_wire
from .endpoint import loopback_defaults

log = logging.getLogger("sa_dynamo.dbapi")


@functools.lru_cache(maxsize=64)
def _method(operation: str) -> str:
    """botocore's method for an API operation: "ExecuteStatement" -> "execute_statement"."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in operation).lstrip("_")


class BotocoreTransport:
    """Requests through one botocore (or aiobotocore, its calls awaited) DynamoDB client."""

    def __init__(
        self,
        client: Any,
        encode_bodies: bool = False,
        pause: Callable[[float], None] = time.sleep,
        first_request: Callable[[], None] | None = None,
        owns_client: bool = False,
    ):
        self.client = client
        self.owns_client = owns_client  # closed with the transport: one the driver made
        # Only for a client that validates no parameters (one client() made): the driver
        # encodes the bodies of its statements and items itself (botocore_wire.encoded).
        self.encode_bodies = encode_bodies
        self.pause = pause
        self._first_request = first_request  # run before the first request, then dropped
        self.descending_pages: bool | None = None
        meta = getattr(client, "meta", None)
        self.where = (
            f"in region {meta.region_name} at {meta.endpoint_url}" if meta is not None else "in DynamoDB"
        )
        botocore_wire.register(client)

    def send(self, operation: str, body: dict[str, Any], wire: bool = False) -> dict[str, Any]:
        if self._first_request is not None:
            check, self._first_request = self._first_request, None
            check()
        started = time.perf_counter()
        call = getattr(self.client, _method(operation))
        try:
            with botocore_wire.wire_items(wire):
                if not self.encode_bodies:
                    return call(**body)
                with botocore_wire.encoded(self.client, operation, body) as params:
                    return call(**params)
        except Exception as exc:
            raise self._error(exc, body) from None  # DynamoDB's code and message are in it
        finally:
            log.debug("%s took %.1f ms", operation, (time.perf_counter() - started) * 1000)

    def _error(self, exc: Exception, body: dict[str, Any]) -> Error:
        """The PEP 249 error for what a request raised, naming the tables it is about."""
        error = translate(exc)
        tables = stmt.tables(body)
        if error.code in MISSING_TABLE_CODES and tables:
            error.args = (missing_table(tables, self.where),)
        return error

    def close(self) -> None:
        """Close the client's connections, if the driver made the client (a client of the
        caller's stays theirs)."""
        if self.owns_client:
            self.client.close()


def lean_client_config(session: Any) -> dict[str, Any]:
    """botocore options that spare every request work (a user's ``client_config`` overrides
    them): no parameter validation, since the driver builds every request itself from values it
    has checked (values.py, validate.py), the bytes sent are the same, and DynamoDB still refuses
    what is wrong; and a User-Agent built once, not again for every request."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = f" sa-dynamo/{version('sa-dynamo')}"
    except PackageNotFoundError:  # run from a source tree without being installed
        ours = ""
    # botocore appends the session's user_agent_extra to this itself
    base = session.user_agent().removesuffix(f" {session.user_agent_extra}")
    return {"parameter_validation": False, "user_agent": f"{base}{ours}"}


def client(
    endpoint_url: str | None,
    region_name: str | None,
    profile_name: str | None,
    client_config: dict[str, Any] | None,
    credentials: dict[str, Any],
) -> tuple[Any, bool]:
    """A boto3 DynamoDB client, lean (``lean_client_config``) unless ``client_config`` says
    otherwise, and whether it validates parameters."""
    import boto3
    import botocore.session
    from botocore.config import Config

    core = botocore.session.get_session()
    session = boto3.session.Session(botocore_session=core, profile_name=profile_name or None)
    region_name, credentials = loopback_defaults(
        endpoint_url, region_name or session.region_name, credentials, session.get_credentials
    )
    options = {**lean_client_config(core), **(client_config or {})}
    try:
        made = session.client(
            "dynamodb",
            endpoint_url=endpoint_url,
            region_name=region_name,
            config=Config(**options),
            **credentials,
        )
    except Exception as exc:  # e.g. NoRegionError: a PEP 249 error that says what to configure
        raise translate(exc) from None
    return made, options["parameter_validation"]
