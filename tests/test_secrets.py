"""A secret access key written in the URL never shows: not in what `sa-dynamo` prints, not in
logs at DEBUG (sa_dynamo, SQLAlchemy, botocore), not in exceptions, not in reprs."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import Column, MetaData, String, Table, create_engine, insert, inspect, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from sa_dynamo import local_server
from sa_dynamo.dbapi.transport import chosen

MARKER = "S3cretMARKER"
# Letters and digits around / and +, as in real secrets; DynamoDB Local accepts any secret.
SECRET = f"{MARKER}/9x+Y"
KEY_ID = "AKIDSECRETSTEST"
SA_DYNAMO = Path(sys.executable).with_name("sa-dynamo")
MODELS = """
from sqlalchemy import Column, String
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "secrets_test_no_such_table"
    pk = Column(String, primary_key=True)
"""


def _url(host_port: str, query: str = "") -> str:
    return f"dynamodb://{KEY_ID}:{quote(SECRET, safe='')}@{host_port}{query}"


def _assert_hidden(text: str) -> None:
    assert MARKER not in text
    assert quote(SECRET, safe="") not in text


@pytest.fixture
def live_host(endpoint_url: str) -> str:
    return endpoint_url.removeprefix("http://")


@pytest.fixture
def dead_host() -> str:
    return f"127.0.0.1:{local_server.free_port()}"


def _sa_dynamo(*args: str, cwd: Path) -> tuple[int, str]:
    done = subprocess.run(
        [str(SA_DYNAMO), *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(cwd)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


CLI_CASES = {
    # (arguments, where {live_url} and {dead_url} carry the secret; exit code; a part of the output)
    "check-dead-host": (
        ["check", "models:Base", "--url", "{dead_url}"],
        2,
        f"cannot read the tables at dynamodb://{KEY_ID}:***@127.0.0.1:",
    ),
    "check-missing-table": (
        ["check", "models:Base", "--url", "{live_url}"],
        1,
        "secrets_test_no_such_table",
    ),
    "explain-dead-host": (
        ["explain", "{dead_url}", "SELECT * FROM notes WHERE pk = 'a'"],
        2,
        "sa-dynamo: nothing is listening on 127.0.0.1:",
    ),
    "explain-missing-table": (
        ["explain", "{live_url}", "SELECT * FROM secrets_test_no_such_table WHERE pk = 'a'"],
        2,
        "sa-dynamo: table 'secrets_test_no_such_table' does not exist: create it first",
    ),
    "bad-option": (
        ["explain", "{live_url}?max_attempts=abc", "SELECT 1"],
        2,
        "max_attempts must be a whole number",
    ),
    "unreadable-port": (
        ["check", "models:Base", "--url", f"dynamodb://{KEY_ID}:{MARKER}@127.0.0.1:x{MARKER}"],
        2,
        "the database URL cannot be read",
    ),
    "port-as-secret": (["explain", f"dynamodb://{KEY_ID}:{MARKER}", "SELECT 1"], 2, "cannot be read"),
    "unencoded-at-sign": (
        ["explain", f"dynamodb://{KEY_ID}:{MARKER}@{MARKER}@127.0.0.1:1", "SELECT 1"],
        2,
        "must be written URL-encoded, as %40",
    ),
    "secret-without-key": (
        ["explain", f"dynamodb://:{MARKER}@127.0.0.1:1", "SELECT 1"],
        2,
        "no access key id",
    ),
}


@pytest.mark.parametrize(("args", "code", "expected"), CLI_CASES.values(), ids=CLI_CASES.keys())
def test_the_cli_never_prints_the_secret(tmp_path, live_host, dead_host, args, code, expected) -> None:
    (tmp_path / "models.py").write_text(MODELS)
    urls = {
        "live_url": _url(live_host),
        "dead_url": _url(dead_host, "?max_attempts=1&connect_timeout=1"),
    }
    returncode, output = _sa_dynamo(*(arg.format(**urls) for arg in args), cwd=tmp_path)
    assert (returncode, expected in output) == (code, True), output
    _assert_hidden(output)


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    for name in ("sa_dynamo", "sqlalchemy", "botocore"):
        caplog.set_level(logging.DEBUG, logger=name)
    caplog.set_level(logging.DEBUG)
    yield caplog


def _everything_shown(error: BaseException) -> str:
    """What a user can see of an exception: its message, repr and formatted traceback (the
    chained DBAPI exception included)."""
    return "\n".join([str(error), repr(error), "".join(traceback.format_exception(error))])


def test_logs_exceptions_and_reprs_never_show_the_secret(
    debug_logs, live_host, dead_host, table_name
) -> None:
    engine = create_engine(_url(live_host), echo="debug", echo_pool="debug")
    seen: list[str] = [
        repr(engine),
        str(engine.url),
        repr(engine.url),
        repr(engine.pool),
        repr(engine.dialect),
    ]
    notes = Table(table_name, MetaData(), Column("pk", String, primary_key=True), Column("v", String))
    try:
        notes.metadata.create_all(engine)
        with engine.connect() as conn:
            seen += [repr(conn), repr(conn.connection), repr(conn.connection.dbapi_connection)]
            seen.append(repr(conn.connection.dbapi_connection.transport))
            conn.execute(insert(notes), {"pk": "a", "v": "x"})
            conn.commit()
            assert conn.execute(select(notes.c.v).where(notes.c.pk == "a")).scalar() == "x"
            assert table_name in inspect(conn).get_table_names()
            with pytest.raises(IntegrityError) as duplicate:
                conn.execute(insert(notes), {"pk": "a", "v": "y"})
                conn.commit()
            seen.append(_everything_shown(duplicate.value))
    finally:
        notes.metadata.drop_all(engine)
        engine.dispose()

    unreachable = create_engine(_url(dead_host, "?max_attempts=1&connect_timeout=1"), echo="debug")
    with pytest.raises(DBAPIError) as refused:
        inspect(unreachable).get_table_names()
    seen.append(_everything_shown(refused.value))
    unreachable.dispose()

    loggers = {record.name.split(".")[0] for record in debug_logs.records}
    assert {"sa_dynamo", "sqlalchemy", "botocore"} <= loggers, "the DEBUG logs were not captured"
    # requests signed while the logs were captured: botocore's SigV4Auth logs the signature of
    # each request botocore's client sends (transport=botocore); the driver's own signer (the
    # http transport's) logs none, nor does awscrt, with which botocore signs where it is installed
    if chosen(None) == "botocore" and importlib.util.find_spec("awscrt") is None:
        assert any(record.getMessage().startswith("Signature:") for record in debug_logs.records)
    seen += [record.getMessage() for record in debug_logs.records]
    for text in seen:
        _assert_hidden(text)
