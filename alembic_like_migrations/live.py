"""What a live DynamoDB table looks like: key schema, attribute types, indexes, TTL.

DescribeTable and DescribeTimeToLive come through the driver's control plane
(``sa_dynamo.dbapi.control_plane``), which the dialect's reflection reads too.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Connection, LargeBinary, MetaData, Numeric, String, Table

from sa_dynamo.dbapi import control_plane
from sa_dynamo.dbapi.control_plane import key_names

KEY_TYPES = {"S": String, "N": Numeric, "B": LargeBinary}


def send(connection: Connection, operation: str, request: dict[str, Any]) -> dict[str, Any]:
    """DynamoDB's answer to a request the dialect does not make (a Scan, UpdateTimeToLive), sent
    through the connection's transport; a PEP 249 error when DynamoDB refuses it."""
    return connection.connection.dbapi_connection.transport.send(operation, request)


def describe(connection: Connection, table: str) -> dict[str, Any] | None:
    """DescribeTable's Table, or None when there is no such table."""
    return control_plane.describe_table(connection.connection.dbapi_connection.transport, table)


def attribute_types(described: dict[str, Any]) -> dict[str, str]:
    """Each key attribute (of the table or an index) and its type: S, N or B. Like the other
    helpers here, it accepts ``{}`` for a table not known (offline, or not created yet)."""
    return {a["AttributeName"]: a["AttributeType"] for a in described.get("AttributeDefinitions", [])}


def index(described: dict[str, Any], name: str) -> tuple[bool, dict[str, Any]] | None:
    """(is_local, description) of the table's index ``name``, or None."""
    for local, key in ((False, "GlobalSecondaryIndexes"), (True, "LocalSecondaryIndexes")):
        for entry in described.get(key, []):
            if entry["IndexName"] == name:
                return local, entry
    return None


def key_table(described: dict[str, Any]) -> Table:
    """A Table holding just the key columns of a described table, typed, HASH first."""
    types = attribute_types(described)
    columns = [Column(name, KEY_TYPES[types[name]](), primary_key=True) for name in key_names(described)]
    return Table(described["TableName"], MetaData(), *columns)


def ttl_attribute(connection: Connection, table: str) -> str | None:
    """The attribute Time to Live reads on ``table``, or None when TTL is off (or turning off)."""
    return control_plane.time_to_live_attribute(connection.connection.dbapi_connection.transport, table)
