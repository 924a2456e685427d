"""PEP 249 driver for DynamoDB's PartiQL API over boto3. It knows nothing of SQLAlchemy."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from .connection import Connection
from .cursor import Cursor
from .errors import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
    translate,
)

apilevel = "2.0"
threadsafety = 1
paramstyle = "qmark"

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


# PEP 249's constructors from POSIX ticks, in local time like the standard library's.
def DateFromTicks(ticks: float) -> datetime.date:
    return Date(*time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:
    return Time(*time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:
    return Timestamp(*time.localtime(ticks)[:6])


class _TypeCode(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other in self.split(",")

    __hash__ = str.__hash__


STRING = _TypeCode("S")
NUMBER = _TypeCode("N")
BINARY = _TypeCode("B")
DATETIME = _TypeCode("S")
ROWID = _TypeCode("S,N,B")

# DynamoDB Local accepts any key made of letters and digits only.
LOCAL_CREDENTIALS = {"aws_access_key_id": "sadynamolocal", "aws_secret_access_key": "sadynamolocal"}


def is_loopback(endpoint_url: str | None) -> bool:
    """True for an endpoint on this machine (DynamoDB Local), where any credentials are accepted."""
    if not endpoint_url:
        return False
    host = urlparse(endpoint_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listening_check(endpoint_url: str | None) -> Callable[[], None] | None:
    """What a connection runs before its first request to a loopback endpoint: fail at once when
    nothing listens there, since botocore would retry the refused connection for half a minute
    before saying so. Connecting itself sends nothing (``sa-dynamo explain --models`` needs no
    server at all)."""
    if not is_loopback(endpoint_url):
        return None
    return lambda: _check_listening(endpoint_url)


def _check_listening(endpoint_url: str) -> None:
    address = urlparse(endpoint_url)
    port = address.port or (443 if address.scheme == "https" else 80)
    try:
        socket.create_connection((address.hostname, port), timeout=2).close()
    except ConnectionRefusedError:
        raise OperationalError(
            f"nothing is listening on {address.hostname}:{port}: start DynamoDB Local there "
            f"(sa-dynamo local start --port {port}), or use dynamodb+local:// for an embedded one"
        ) from None
    except OSError:  # a firewall or a slow start: botocore's retries and message apply
        pass


def loopback_defaults(
    endpoint_url: str | None,
    region_name: str | None,
    credentials: dict[str, Any],
    configured_credentials: Callable[[], Any],
) -> tuple[str | None, dict[str, Any]]:
    """The region and credentials a client gets: on a loopback endpoint (DynamoDB Local), a
    region and placeholder credentials when none are given or configured
    (``configured_credentials``: the credential chain's, None when it finds none)."""
    if is_loopback(endpoint_url):
        region_name = region_name or "us-east-1"
        if not credentials and configured_credentials() is None:
            credentials = dict(LOCAL_CREDENTIALS)
    return region_name, credentials


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


def connect(
    endpoint_url: str | None = None,
    region_name: str | None = None,
    profile_name: str | None = None,
    client: Any = None,
    autocommit: bool = False,
    client_config: dict[str, Any] | None = None,
    hide_parameters: bool = False,
    **credentials: Any,
) -> Connection:
    """Open a connection. Credentials come from the AWS default chain unless given; a loopback
    endpoint (DynamoDB Local) gets placeholder credentials and region when none are configured.
    ``hide_parameters``: keep parameter values out of every message the driver writes."""
    if client is None:
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
            client = session.client(
                "dynamodb",
                endpoint_url=endpoint_url,
                region_name=region_name,
                config=Config(**options),
                **credentials,
            )
        except Exception as exc:  # e.g. NoRegionError: a PEP 249 error that says what to configure
            raise translate(exc) from None
        return Connection(
            client,
            autocommit=autocommit,
            hide_parameters=hide_parameters,
            encode_bodies=not options["parameter_validation"],
            first_request=listening_check(endpoint_url),
        )
    return Connection(client, autocommit=autocommit, hide_parameters=hide_parameters)
