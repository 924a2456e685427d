"""The transport on botocore's client (``transport="botocore"``): boto3's credentials, signing,
endpoints, retries and event system, for the tracing libraries (which wrap
``BaseClient._make_api_call``) and test doubles (moto, botocore's Stubber) that live in botocore.

The connections of an engine share one client, made from the process's session for their
profile (shared.py); the driver's own clients validate no parameters, so that the bodies of the
requests carrying statements or items are encoded by the driver, and pages of items read by it
(botocore_wire.py). A client the user passes in is used as it is.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ..errors import translate
from . import botocore_attempts, botocore_wire, shared
from .base import Sending
from .endpoint import listening_check, loopback_defaults

# The botocore clients of the engines, by connect arguments.
CLIENTS: shared.Shared[Any] = shared.Shared()


@functools.lru_cache(maxsize=64)
def _method(operation: str) -> str:
    """botocore's method for an API operation: "ExecuteStatement" -> "execute_statement"."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in operation).lstrip("_")


class BotocoreTransport(Sending):
    """Requests through one botocore (or aiobotocore, its calls awaited) DynamoDB client."""

    def __init__(
        self,
        client: Any,
        encode_bodies: bool = False,
        pause: Callable[[float], None] = time.sleep,
        first_request: Callable[[], None] | None = None,
        close: Callable[[], None] | None = None,
    ):
        super().__init__(first_request)
        self.client = client
        # Only for a client that validates no parameters (one client() made): the driver
        # encodes the bodies of its statements and items itself (botocore_wire.encoded).
        self.encode_bodies = encode_bodies
        self.pause = pause
        self._close = close  # how the driver lets go of a client it made; None: the caller's
        meta = getattr(client, "meta", None)
        self._url = ""
        if meta is not None:
            self.where = f"in region {meta.region_name} at {meta.endpoint_url}"
            self._url = meta.endpoint_url.rstrip("/") + "/"  # as botocore names it in its errors
        botocore_wire.register(client)
        botocore_attempts.register(client)
        self._retries = botocore_attempts.retries_of(client)

    def _request(self, operation: str, body: dict[str, Any], wire: bool) -> dict[str, Any]:
        """The client's answer, or its exception; one for an answer that arrived cut short or
        corrupted, which the client would take for whole (botocore_attempts.py)."""
        with botocore_attempts.watched(self._url, self._retries) as attempts:
            try:
                answer = self._call(operation, body, wire)
            except ClientError as refused:
                damaged = attempts.last_failure()
                if damaged is not None:
                    raise damaged from None
                attempts.note_lost(refused.response)
                raise
        damaged = attempts.last_failure()
        if damaged is not None:
            raise damaged
        attempts.note_lost(answer)
        return answer

    def _call(self, operation: str, body: dict[str, Any], wire: bool) -> dict[str, Any]:
        call = getattr(self.client, _method(operation))
        with botocore_wire.wire_items(wire):
            if not self.encode_bodies:
                return call(**body)
            with botocore_wire.encoded(self.client, operation, body) as params:
                return call(**params)

    def close(self) -> None:
        """Let go of the client if the driver made it (a client of the caller's stays theirs):
        the last connection of an engine to do so closes its connections."""
        close, self._close = self._close, None
        if close is not None:
            close()


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


def client(session: shared.Session, to: shared.Destination) -> tuple[Any, bool, dict[str, Any]]:
    """A boto3 DynamoDB client from ``session`` (hold its lock), lean (``lean_client_config``)
    unless ``client_config`` says otherwise; whether it validates parameters; and the key pair
    it was given (placeholders on a loopback endpoint without credentials)."""
    from botocore.config import Config

    try:
        region_name, credentials = loopback_defaults(
            to.endpoint_url,
            to.region_name or session.main.region_name,
            to.credentials,
            session.main.get_credentials,
        )
        options = {**lean_client_config(session.core), **(to.client_config or {})}
        made = session.main.client(
            "dynamodb",
            endpoint_url=to.endpoint_url,
            region_name=region_name,
            config=Config(**options),
            **credentials,
        )
    except Exception as exc:  # e.g. NoRegionError: a PEP 249 error that says what to configure
        raise translate(exc) from None
    return made, options["parameter_validation"], credentials


def transport(to: shared.Destination) -> BotocoreTransport:
    """A connection's transport on its engine's botocore client (made by its first connection,
    closed after its last)."""
    key = to.key()

    def make() -> tuple[Any, bool]:
        session = shared.session(to.profile_name)
        with session.lock:
            made, validating, _ = client(session, to)
        return made, validating

    made, validating = CLIENTS.take(key, make)

    def close() -> None:
        if CLIENTS.give_back(key):
            made.close()

    return BotocoreTransport(
        made, encode_bodies=not validating, first_request=listening_check(to.endpoint_url), close=close
    )
