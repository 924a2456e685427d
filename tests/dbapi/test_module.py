"""PEP 249 module interface: globals, exception hierarchy, type objects and constructors,
connect(), closed objects, and the layer boundary (no SQLAlchemy in the driver)."""

from __future__ import annotations

import ast
import datetime
import time
from pathlib import Path
from typing import Any

import pytest

from sa_dynamo import dbapi
from sa_dynamo.dbapi import errors
from sa_dynamo.dbapi.transport.endpoint import is_loopback

from .support import Table


def test_module_globals() -> None:
    assert (dbapi.apilevel, dbapi.threadsafety, dbapi.paramstyle) == ("2.0", 1, "qmark")


@pytest.mark.parametrize(
    ("cls", "base"),
    [
        (dbapi.Warning, Exception),
        (dbapi.Error, Exception),
        (dbapi.InterfaceError, dbapi.Error),
        (dbapi.DatabaseError, dbapi.Error),
        (dbapi.DataError, dbapi.DatabaseError),
        (dbapi.OperationalError, dbapi.DatabaseError),
        (dbapi.IntegrityError, dbapi.DatabaseError),
        (dbapi.InternalError, dbapi.DatabaseError),
        (dbapi.ProgrammingError, dbapi.DatabaseError),
        (dbapi.NotSupportedError, dbapi.DatabaseError),
    ],
)
def test_exception_hierarchy(cls: type, base: type) -> None:
    assert issubclass(cls, base)


def test_warning_is_not_an_error() -> None:
    assert not issubclass(dbapi.Warning, dbapi.Error)


def test_type_objects_compare_equal_to_attribute_type_codes() -> None:
    assert (dbapi.STRING, dbapi.NUMBER, dbapi.BINARY) == ("S", "N", "B")
    assert dbapi.ROWID == "N" and dbapi.ROWID == "B"
    assert dbapi.NUMBER != "S"


def test_constructors() -> None:
    ticks = 1_700_000_000.75
    local = time.localtime(ticks)
    assert dbapi.Date(2024, 2, 29) == datetime.date(2024, 2, 29)
    assert dbapi.Time(13, 5, 7) == datetime.time(13, 5, 7)
    assert dbapi.Timestamp(2024, 2, 29, 13, 5, 7) == datetime.datetime(2024, 2, 29, 13, 5, 7)
    assert dbapi.DateFromTicks(ticks) == datetime.date(*local[:3])
    assert dbapi.TimeFromTicks(ticks) == datetime.time(*local[3:6])
    assert dbapi.TimestampFromTicks(ticks) == datetime.datetime(*local[:6])
    assert dbapi.Binary(b"\x00\xff") == b"\x00\xff"


def test_driver_never_imports_sqlalchemy_or_the_rest_of_the_package() -> None:
    """The layer boundary of design.md: the driver knows DynamoDB and nothing of SQLAlchemy."""
    package = Path(dbapi.__file__).parent
    imported = set()
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add("." * node.level + (node.module or ""))
    assert "botocore.exceptions" in imported  # the scan did find the imports
    offending = {name for name in imported if name.startswith(("sqlalchemy", "..", "sa_dynamo"))}
    assert offending == set()


@pytest.mark.parametrize(
    ("endpoint_url", "expected"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://localhost:8000", True),
        ("http://[::1]:8000", True),
        ("https://dynamodb.eu-west-1.amazonaws.com", False),
        ("http://10.0.0.5:8000", False),
        (None, False),
    ],
)
def test_is_loopback(endpoint_url: str | None, expected: bool) -> None:
    assert is_loopback(endpoint_url) is expected


@pytest.fixture
def no_aws_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials, region or profile from the environment or from ~/.aws."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.usefixtures("no_aws_config")
def test_connect_to_local_needs_no_aws_configuration(endpoint_url: str, table: Table) -> None:
    """A loopback endpoint gets placeholder credentials and a region when none are configured."""
    connection = dbapi.connect(endpoint_url=endpoint_url, autocommit=True)
    cursor = connection.cursor()
    table.insert(cursor, {"pk": "a", "sk": "1", "v": "x"})
    assert table.item(cursor, "a", "1") == {"pk": "a", "sk": "1", "v": "x"}
    assert connection.transport.where.startswith("in region us-east-1 at ")


@pytest.mark.usefixtures("no_aws_config")
def test_connect_without_region_is_an_interface_error() -> None:
    with pytest.raises(dbapi.InterfaceError, match="no AWS region configured"):
        dbapi.connect()


def test_missing_credentials_become_an_interface_error() -> None:
    from botocore.exceptions import NoCredentialsError

    error = errors.translate(NoCredentialsError())
    assert type(error) is dbapi.InterfaceError
    assert "no AWS credentials found" in str(error)


def test_connect_defaults_to_the_transactional_buffer(client: Any) -> None:
    assert dbapi.connect(client=client).autocommit is False


@pytest.mark.parametrize(
    "use",
    [
        lambda c: c.execute("SELECT * FROM t"),
        lambda c: c.executemany("INSERT INTO t VALUE {'pk': ?}", [["a"]]),
        lambda c: c.fetchone(),
        lambda c: c.fetchmany(2),
        lambda c: c.fetchall(),
    ],
    ids=["execute", "executemany", "fetchone", "fetchmany", "fetchall"],
)
def test_closed_cursor_raises_interface_error(conn: dbapi.Connection, use: Any, calls: dict) -> None:
    cursor = conn.cursor()
    cursor.close()
    with pytest.raises(dbapi.InterfaceError, match="cursor is closed"):
        use(cursor)
    assert dict(calls) == {}


@pytest.mark.parametrize(
    "use",
    [
        lambda conn, cursor: conn.cursor(),
        lambda conn, cursor: conn.commit(),
        lambda conn, cursor: conn.rollback(),
        lambda conn, cursor: cursor.execute("SELECT * FROM t"),
        lambda conn, cursor: cursor.fetchone(),
    ],
    ids=["cursor", "commit", "rollback", "cursor.execute", "cursor.fetchone"],
)
def test_closed_connection_raises_interface_error(connect: Any, use: Any, calls: Any) -> None:
    connection = connect()
    calls.watch(connection)
    cursor = connection.cursor()
    connection.close()
    with pytest.raises(dbapi.InterfaceError, match="connection is closed"):
        use(connection, cursor)
    assert dict(calls) == {}
