"""The dialect's reflection (``DynamoDBDialect`` is made of ``Reflection``): the table list,
each table's keys, indexes and options from its one DescribeTable, and the other attributes
from a sample of its items (item_sample.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import reflection
from sqlalchemy.exc import DBAPIError, NoSuchTableError

from .. import dbapi as dynamo_dbapi
from ..dbapi import control_plane
from ..dbapi.transport import Transport
from . import item_sample


def _sample_items(transport: Transport, table_name: str, size: int) -> list[dict[str, Any]]:
    return transport.send("Scan", item_sample.scan_request(table_name, size))["Items"]


class Reflection:
    """Mixed into ``DynamoDBDialect``, whose ``dynamodb_reflect_sample`` it reads."""

    dynamodb_reflect_sample: int

    @staticmethod
    def _dbapi_connection(connection: Any) -> Any:
        return connection.connection.dbapi_connection

    def _control_plane(self, call: Any, connection: Any, *args: Any) -> Any:
        """A control-plane call for reflection, its driver errors raised as SQLAlchemy's (as
        statement execution does)."""
        try:
            return call(self._dbapi_connection(connection).transport, *args)
        except dynamo_dbapi.Error as error:
            raise DBAPIError.instance(None, None, error, dynamo_dbapi.Error) from error

    @reflection.cache
    def _describe(self, connection: Any, table_name: str, **kw: Any) -> dict[str, Any] | None:
        return self._control_plane(control_plane.describe_table, connection, table_name)

    def _described(self, connection: Any, table_name: str, **kw: Any) -> dict[str, Any]:
        described = self._describe(connection, table_name, **kw)
        if described is None:
            raise NoSuchTableError(table_name)
        return described

    @reflection.cache
    def has_table(self, connection: Any, table_name: str, schema: str | None = None, **kw: Any) -> bool:
        return self._describe(connection, table_name, **kw) is not None

    @reflection.cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        # sa_dynamo's own tables (guards, counters) are left out by list_tables: no model declares
        # them, so autogenerate would drop them.
        return self._control_plane(control_plane.list_tables, connection)

    @reflection.cache
    def get_table_options(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Billing mode, provisioned capacity and the TTL attribute, as the Table keywords that
        create the same table."""
        described = self._described(connection, table_name, **kw)
        mode = described.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
        options: dict[str, Any] = {"dynamodb_billing_mode": mode}
        if mode == "PROVISIONED":
            throughput = described["ProvisionedThroughput"]
            options["dynamodb_read_capacity"] = throughput["ReadCapacityUnits"]
            options["dynamodb_write_capacity"] = throughput["WriteCapacityUnits"]
        ttl = self._control_plane(control_plane.time_to_live_attribute, connection, table_name)
        if ttl is not None:
            options["dynamodb_ttl"] = ttl
        return options

    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        return []

    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        return []

    @reflection.cache
    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[dict]:
        """Table keys first, then index keys (the attributes DynamoDB knows types for), then the
        other attributes of a sample of the items (item_sample.py): ``dynamodb_reflect_sample``
        items, given to Table() or create_engine(); 0 reads none."""
        described = self._described(connection, table_name, **kw)
        types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
        keys = [k["AttributeName"] for k in described["KeySchema"]]
        ordered = keys + [name for name in types if name not in keys]
        columns = {name: item_sample.ATTRIBUTE_TYPES[types[name]]() for name in ordered}
        size = kw.get("dynamodb_reflect_sample")
        size = self.dynamodb_reflect_sample if size is None else item_sample.sample_size(size)
        if size:
            items = self._control_plane(_sample_items, connection, table_name, size)
            for name, type_ in item_sample.attribute_columns(items).items():
                columns.setdefault(name, type_)
        known = self.column_types.setdefault(table_name, {})  # a declared type wins
        for name, type_ in columns.items():
            if not type_._isnull:
                known.setdefault(name, type_)
        return [
            {
                "name": name,
                "type": type_,
                "nullable": name not in keys,
                "default": None,
                "autoincrement": False,
            }
            for name, type_ in columns.items()
        ]

    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict:
        described = self._described(connection, table_name, **kw)
        return {"constrained_columns": [k["AttributeName"] for k in described["KeySchema"]], "name": None}

    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[dict]:
        described = self._described(connection, table_name, **kw)
        indexes = []
        for local, key in ((False, "GlobalSecondaryIndexes"), (True, "LocalSecondaryIndexes")):
            for entry in described.get(key, []):
                projection = entry["Projection"]
                options: dict[str, Any] = {
                    "dynamodb_projection": projection["ProjectionType"],
                    "dynamodb_local": local,
                }
                if projection.get("NonKeyAttributes"):
                    options["dynamodb_include"] = projection["NonKeyAttributes"]
                indexes.append(
                    {
                        "name": entry["IndexName"],
                        "column_names": [k["AttributeName"] for k in entry["KeySchema"]],
                        "unique": False,
                        "dialect_options": options,
                    }
                )
        return indexes

    def get_foreign_keys(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list:
        return []

    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list:
        return []

    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list:
        return []
