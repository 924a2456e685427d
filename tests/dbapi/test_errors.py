"""errors.py's mapping of DynamoDB errors onto PEP 249 classes, each produced by the real
server where it can produce it; DynamoDB's own message must survive in the exception text."""

from __future__ import annotations

import http.server
import socket
import threading
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sa_dynamo import dbapi
from sa_dynamo.dbapi import errors
from sa_dynamo.dbapi.limits import MAX_STATEMENT_BYTES

from .support import Table

# (statement with {t} for the table, parameters, class, code, DynamoDB's message)
SERVER_ERRORS = [
    (
        "INSERT INTO {t} VALUE {{'pk': ?, 'sk': ?}}",
        ["a", "1"],
        dbapi.IntegrityError,
        "DuplicateItem",
        "Duplicate primary key exists in table",
    ),
    # `order` is reserved unless double-quoted (partiql-reference §1).
    (
        "SELECT order FROM {t}",
        [],
        dbapi.ProgrammingError,
        "ValidationException",
        "Statement wasn't well formed",
    ),
    (
        'SELECT * FROM {t} WHERE "pk" = ?',
        [],
        dbapi.ProgrammingError,
        "ValidationException",
        "Number of parameters in request and statement don't match",
    ),
    (
        'UPDATE {t} SET "v" = ? WHERE "pk" = ?',
        [1, "a"],
        dbapi.ProgrammingError,
        "ValidationException",
        "Where clause does not contain a mandatory equality on all key attributes",
    ),
    # Lower case keeps these out of the driver's own checks, so DynamoDB is the judge.
    (
        "insert into {t} value {{'pk': ?, 'sk': ?}}",
        [1, "1"],
        dbapi.DataError,
        "ValidationException",
        "Key attribute's data type should match its data type in table's schema: Key pk",
    ),
    (
        'SELECT * FROM {t} WHERE "pk" = ? AND "sk" = ?',
        ["a", 1],
        dbapi.DataError,
        "ValidationException",
        "Key attribute's data type should match its data type in table's schema: Key sk",
    ),
    (
        "insert into {t} value {{'pk': ?, 'sk': ?}}",
        ["", "1"],
        dbapi.DataError,
        "ValidationException",
        "The AttributeValue for a key attribute cannot contain an empty string value. Key: pk",
    ),
    (
        "insert into {t} value {{'pk': ?}}",
        ["b"],
        dbapi.DataError,
        "ValidationException",
        "Key attribute should be present in the item: Key sk",
    ),
    (
        "insert into {t} value {{'pk': ?, 'sk': ?, 'v': ?}}",
        ["b", "1", "x" * 410_000],
        dbapi.DataError,
        "ValidationException",
        "Item size has exceeded the maximum allowed size",
    ),
    (
        'update {t} set "v" = ? where "pk" = ? and "sk" = ?',
        [{"": 1}, "a", "1"],
        dbapi.DataError,
        "ValidationException",
        "Empty attribute name",
    ),
    # Numbers the client checks for parameters can still arrive as literals in the text.
    (
        "INSERT INTO {t} VALUE {{'pk': 'b', 'sk': '1', 'v': " + "1" * 39 + "}}",
        [],
        dbapi.DataError,
        "ValidationException",
        "DynamoDB only supports precision up to 38 digits",
    ),
    (
        "INSERT INTO {t} VALUE {{'pk': 'b', 'sk': '1', 'v': 1E+126}}",
        [],
        dbapi.DataError,
        "ValidationException",
        "Number overflow",
    ),
    (
        "INSERT INTO {t} VALUE {{'pk': 'b', 'sk': '1', 'v': 1E-131}}",
        [],
        dbapi.DataError,
        "ValidationException",
        "Number underflow",
    ),
    (
        "INSERT INTO {t} VALUE {{'pk': 'b', 'sk': '1', 'v': -0.0}}",
        [],
        dbapi.DataError,
        "ValidationException",
        "Negative zero decimal is not supported",
    ),
]


@pytest.mark.parametrize(
    ("text", "params", "cls", "code", "message"), SERVER_ERRORS, ids=[case[4][:40] for case in SERVER_ERRORS]
)
def test_server_errors(
    cur: dbapi.Cursor, table: Table, text: str, params: list, cls: type, code: str, message: str
) -> None:
    table.insert(cur, {"pk": "a", "sk": "1"})
    with pytest.raises(dbapi.DatabaseError) as raised:
        cur.execute(text.format(t=table.ref), params)
    assert type(raised.value) is cls
    assert raised.value.code == code
    assert str(raised.value).startswith(f"{code}: ")
    assert message in str(raised.value)
    assert raised.value.response["Error"]["Code"] == code


def test_a_missing_table_is_named_with_the_code_kept(cur: dbapi.Cursor, endpoint_url: str) -> None:
    """DynamoDB's message names no table; the driver's does, and says where it looked."""
    with pytest.raises(dbapi.ProgrammingError) as raised:
        cur.execute('SELECT * FROM "no_such_table_here"')
    assert str(raised.value).startswith(
        f"table 'no_such_table_here' does not exist in region us-east-1 at {endpoint_url}: create it first"
    )
    assert raised.value.code == raised.value.response["Error"]["Code"] == "ResourceNotFoundException"


def padded(statement: str, size: int, filler: str) -> str:
    """The statement followed by a comment of ``filler`` that makes it ``size`` UTF-8 bytes."""
    room = size - len(statement.encode()) - len(" /*  */")
    width = len(filler.encode())
    return f"{statement} /* {filler * (room // width)}{' ' * (room % width)} */"


@pytest.mark.parametrize("filler", [" ", "😀"])
def test_statement_over_8192_bytes_is_refused_before_sending(
    cur: dbapi.Cursor, table: Table, calls: Any, filler: str
) -> None:
    select = f'SELECT * FROM {table.ref} WHERE "pk" = ?'
    largest = padded(select, MAX_STATEMENT_BYTES, filler)
    assert len(largest.encode()) == MAX_STATEMENT_BYTES
    cur.execute(largest, ["a"])
    assert cur.fetchall() == []
    delete = f'DELETE FROM {table.ref} WHERE "pk" = ? AND "sk" = ?'
    for run in (
        lambda: cur.execute(padded(select, MAX_STATEMENT_BYTES + 1, filler), ["a"]),
        lambda: cur.executemany(padded(delete, MAX_STATEMENT_BYTES + 1, filler), [["a", "1"]]),
    ):
        with pytest.raises(
            dbapi.ProgrammingError, match="statement is 8193 bytes; DynamoDB accepts at most 8192"
        ):
            run()
    assert len(calls["ExecuteStatement"]) == 1
    assert "BatchExecuteStatement" not in calls


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


ONE_ATTEMPT = {"retries": {"total_max_attempts": 1}, "connect_timeout": 2, "read_timeout": 10}


def test_connection_refused_is_an_operational_error() -> None:
    """On a loopback endpoint the driver looks before its first request, rather than let botocore
    retry a refused connection for half a minute; connecting itself sends nothing."""
    port = closed_port()
    connection = dbapi.connect(endpoint_url=f"http://127.0.0.1:{port}", client_config=ONE_ATTEMPT)
    with pytest.raises(dbapi.OperationalError, match=f"nothing is listening on 127.0.0.1:{port}: start"):
        connection.cursor().execute('SELECT * FROM "t"')


class _WebServer(http.server.BaseHTTPRequestHandler):
    """Some other HTTP server on the URL's port: a web page for every POST, with the status asked."""

    status = 200

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        page = b"<!DOCTYPE html>\n<html>\n<body>\n<h1>Welcome</h1>\n</body>\n</html>\n"
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("transport", ["http", "botocore"])
@pytest.mark.parametrize("status", [200, 501])
def test_another_http_server_is_named_as_not_dynamodb(transport: str, status: int) -> None:
    """Its page is no DynamoDB message (nor its 200 an empty result): one line says what answered."""
    handler = type("Page", (_WebServer,), {"status": status})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_port}"
        connection = dbapi.connect(
            endpoint_url=endpoint, region_name="us-east-1", client_config=ONE_ATTEMPT, transport=transport
        )
        with pytest.raises(dbapi.OperationalError) as refused:
            connection.cursor().execute('SELECT * FROM "t"')
    finally:
        server.shutdown()
        server.server_close()
    assert str(refused.value) == (
        f"the server in region us-east-1 at {endpoint} did not answer as DynamoDB does (HTTP {status}, "
        "content type text/html): check the URL's host and port; another server answers there"
    )


def test_internal_failure_is_an_internal_error(endpoint_url: str, table: Table) -> None:
    """DynamoDB Local answers `sk IS MISSING` on a key attribute with HTTP 500 InternalFailure
    (partiql-reference §3); one attempt, so that botocore does not retry it."""
    connection = dbapi.connect(endpoint_url=endpoint_url, client_config=ONE_ATTEMPT)
    with pytest.raises(
        dbapi.InternalError, match="InternalFailure: The request processing has failed"
    ) as raised:
        connection.cursor().execute(f'SELECT * FROM {table.ref} WHERE "pk" = ? AND "sk" IS MISSING', ["a"])
    assert raised.value.code == "InternalFailure"


@pytest.mark.parametrize(
    ("operation", "rows", "cls", "code", "message"),
    [
        (
            "INSERT INTO {t} VALUE {{'pk': ?, 'sk': ?}}",
            [["a", "2"], ["a", "1"]],
            dbapi.IntegrityError,
            "DuplicateItem",
            "row 1: DuplicateItem: Duplicate primary key exists in table",
        ),
        (
            "insert into \"no_such_table_here\" value {{'pk': ?, 'sk': ?}}",
            [["a", "2"]],
            dbapi.ProgrammingError,
            "ResourceNotFound",
            "table 'no_such_table_here' does not exist in region us-east-1 at http",
        ),
        (
            "insert into {t} value {{'pk': ?, 'sk': ?, 'v': ?}}",
            [["a", "2", "x"], ["a", "3", "x" * 410_000]],
            dbapi.DataError,
            "ValidationError",
            "row 1: ValidationError: Item size has exceeded the maximum allowed size",
        ),
    ],
)
def test_batch_statement_errors(
    cur: dbapi.Cursor, table: Table, operation: str, rows: list, cls: type, code: str, message: str
) -> None:
    """executemany in autocommit: each statement's error is reported inside one PEP 249 error,
    which says what became of every row. (Lower-case statements are not the canonical writes
    the driver checks, so DynamoDB is the judge.)"""
    table.insert(cur, {"pk": "a", "sk": "1"})
    with pytest.raises(dbapi.DatabaseError) as raised:
        cur.executemany(operation.format(t=table.ref), rows)
    assert type(raised.value) is cls
    assert raised.value.code == code
    applied = "row 0" if len(rows) == 2 else "no row"
    failed = f"row {len(rows) - 1}"
    others = (
        "the other 1 was applied (a batch is not a transaction)" if len(rows) == 2 else "none was applied"
    )
    assert str(raised.value).startswith(f"1 of {len(rows)} batched statements failed and {others}: {message}")
    assert str(raised.value).endswith(f". applied: {applied}; not applied: {failed}")
    assert (raised.value.applied, raised.value.unapplied, raised.value.unknown) == (
        list(range(len(rows) - 1)),
        [len(rows) - 1],
        [],
    )


def test_one_key_twice_in_one_executemany_is_sent_in_order(cur: dbapi.Cursor, table: Table) -> None:
    """DynamoDB refuses a batch that names one key twice (and DynamoDB Local applies it all the
    same): the second row goes in the next batch, and a second INSERT is a duplicate key."""
    with pytest.raises(dbapi.IntegrityError, match="row 1: DuplicateItem") as raised:
        cur.executemany(table.insert_sql(["pk", "sk", "v"]), [["a", "1", "first"], ["a", "1", "second"]])
    assert (raised.value.applied, raised.value.unapplied) == ([0], [1])
    assert table.item(cur, "a", "1") == {"pk": "a", "sk": "1", "v": "first"}
    cur.executemany(
        f'UPDATE {table.ref} SET "v" = ? WHERE "pk" = ? AND "sk" = ?', [["x", "a", "1"], ["y", "a", "1"]]
    )
    assert (cur.rowcount, table.item(cur, "a", "1")) == (2, {"pk": "a", "sk": "1", "v": "y"})


def test_reused_transaction_token_is_a_programming_error(client: Any, table: Table) -> None:
    """The driver never reuses a token; the mapping still has to hold if a caller does."""
    token = uuid.uuid4().hex

    def transaction(sk: str) -> None:
        statement = {"Statement": f"INSERT INTO {table.ref} VALUE {{'pk': 'a', 'sk': '{sk}'}}"}
        client.execute_transaction(TransactStatements=[statement], ClientRequestToken=token)

    transaction("1")
    with pytest.raises(ClientError) as raw:
        transaction("2")
    error = errors.translate(raw.value)
    assert type(error) is dbapi.ProgrammingError
    assert "Specified idempotent token was used with different request parameters" in str(error)


def test_translate_keeps_driver_errors_and_wraps_unknown_ones() -> None:
    error = dbapi.DataError("already translated")
    assert errors.translate(error) is error
    wrapped = errors.translate(ValueError("boom"))
    assert type(wrapped) is dbapi.InterfaceError
    assert str(wrapped) == "ValueError: boom"
