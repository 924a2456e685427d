"""PEP 249 driver for DynamoDB's PartiQL API. It knows nothing of SQLAlchemy."""

from __future__ import annotations

import datetime
import time
from typing import Any

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
)
from .transport import botocore as botocore_transport
from .transport import chosen
from .transport import http as http_transport
from .transport.botocore import BotocoreTransport
from .transport.shared import Destination

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


def connect(
    endpoint_url: str | None = None,
    region_name: str | None = None,
    profile_name: str | None = None,
    client: Any = None,
    autocommit: bool = False,
    client_config: dict[str, Any] | None = None,
    hide_parameters: bool = False,
    transport: str | None = None,
    **credentials: Any,
) -> Connection:
    """Open a connection. Credentials come from the AWS default chain unless given; a loopback
    endpoint (DynamoDB Local) gets placeholder credentials and region when none are configured.
    ``transport``: "http", the default, sends DynamoDB's JSON API itself (its own keep-alive HTTP
    connections and SigV4 signer, botocore's endpoint and retry rules); "botocore" sends through
    a botocore client, for the tracing libraries and test doubles that hook into botocore.
    ``SA_DYNAMO_TRANSPORT`` sets the default. Connections with the same arguments share one
    botocore session, credential provider, endpoint and HTTP pool (or botocore client);
    ``client_config``: botocore ``Config`` options.
    ``client``: a boto3 DynamoDB client of your own, used as it is.
    ``hide_parameters``: keep parameter values out of every message the driver writes."""
    if client is not None:
        return Connection(BotocoreTransport(client), autocommit=autocommit, hide_parameters=hide_parameters)
    sending = botocore_transport if chosen(transport) == "botocore" else http_transport
    made = sending.transport(Destination(endpoint_url, region_name, profile_name, client_config, credentials))
    return Connection(made, autocommit=autocommit, hide_parameters=hide_parameters)
