"""Page tokens: whatever a client sends back, only a token this secret signed for this statement
resumes a read; anything else is InvalidPageToken, sent before any request, never page 1 again."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select
from sqlalchemy.exc import InvalidRequestError

import sa_dynamo
from sa_dynamo.pagination import InvalidPageToken

SECRET = "page-token-test-secret"
metadata = MetaData()
notes = Table(
    "page_token_notes",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", Integer, primary_key=True),
)
QUERY = select(notes.c.sk).where(notes.c.pk == "A")


@pytest.fixture(scope="module")
def connection(engine):
    """One connection, so that the recorder below sees every request of these tests."""
    metadata.create_all(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(notes.insert(), [{"pk": pk, "sk": i} for pk in "AB" for i in range(12)])
        yield conn
    metadata.drop_all(engine)


@pytest.fixture(scope="module")
def sent(connection) -> list[dict]:
    """ExecuteStatement requests as the connection sent them."""
    seen: list[dict] = []

    def record(operation: str, body: dict, answer: object) -> None:
        if operation == "ExecuteStatement":
            seen.append(body)

    connection.connection.dbapi_connection.transport.observers.append(record)
    return seen


@pytest.fixture(scope="module")
def token(connection) -> str:
    """A real token: the one after the first page of QUERY."""
    first = sa_dynamo.paginate(connection, QUERY, page_size=5, secret=SECRET)
    assert [row.sk for row in first.rows] == [0, 1, 2, 3, 4]
    return first.next


def _payload(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token.rsplit(".", 1)[0]))


def _signed(body: bytes | str, secret: str = SECRET) -> str:
    """``body`` as a token signed with ``secret``; bytes are base64-encoded as the library does."""
    text = base64.urlsafe_b64encode(body).decode() if isinstance(body, bytes) else body
    return text + "." + hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def _refused(connection, sent: list[dict], after: object, query=QUERY) -> InvalidPageToken:
    before = len(sent)
    with pytest.raises(InvalidPageToken) as refused:
        sa_dynamo.paginate(connection, query, page_size=5, after=after, secret=SECRET)
    assert len(sent) == before, "a refused token must not send anything"
    return refused.value


def test_a_real_token_resumes_after_the_first_page(connection, sent, token) -> None:
    before = len(sent)
    second = sa_dynamo.paginate(connection, QUERY, page_size=5, after=token, secret=SECRET)
    assert [row.sk for row in second.rows] == [5, 6, 7, 8, 9]
    assert len(sent) > before  # the recorder that proves refused tokens send nothing works


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(after=st.one_of(st.text(), st.binary()))
def test_arbitrary_text_and_bytes_are_refused(connection, sent, after) -> None:
    _refused(connection, sent, after)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_altered_and_truncated_tokens_are_refused(connection, sent, token, data) -> None:
    position = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(st.characters().filter(lambda c: c != token[position]))
    altered = token[:position] + replacement + token[position + 1 :]
    _refused(connection, sent, altered)
    _refused(connection, sent, token[:position])


@pytest.mark.parametrize(
    "after",
    [b"", 0, 1.5, ["token"], {"n": "x"}, object()],
    ids=["empty-bytes", "int", "float", "list", "dict", "object"],
)
def test_anything_but_a_str_is_refused(connection, sent, after) -> None:
    message = str(_refused(connection, sent, after))
    assert "a page token is the str of a Page's next attribute" in message


def test_the_bytes_of_a_real_token_are_refused(connection, sent, token) -> None:
    _refused(connection, sent, token.encode())


@pytest.mark.parametrize(
    "suffix", ["é", "\u2028", "\udcff", "\x00"], ids=["e-acute", "separator", "surrogate", "nul"]
)
def test_non_ascii_and_control_characters_are_refused(connection, sent, token, suffix) -> None:
    _refused(connection, sent, token + suffix)
    body, signature = token.rsplit(".", 1)
    _refused(connection, sent, body + suffix + "." + signature)


def test_another_secret_is_refused(connection, sent, token) -> None:
    with pytest.raises(InvalidPageToken, match="signed with another secret"):
        sa_dynamo.paginate(connection, QUERY, page_size=5, after=token, secret="another secret")
    assert "another secret" in str(_refused(connection, sent, _signed(token.rsplit(".")[0], "other")))


# Bodies that carry a valid signature of this very secret but are not what paginate() writes.
# "NEXT" and "QUERY" stand for the real token's NextToken and statement fingerprint.
MALFORMED = {
    "empty": b"",
    "not-json": b"not json",
    "not-utf8": b"\xff\xfe\x00",
    "null": b"null",
    "list": b'["NEXT", "QUERY"]',
    "string": b'"NEXT"',
    "number": b"1",
    "empty-object": b"{}",
    "no-query": b'{"n": "NEXT", "r": 5}',
    "no-next": b'{"q": "QUERY", "r": 5}',
    "no-rows": b'{"n": "NEXT", "q": "QUERY"}',
    "next-null": b'{"n": null, "q": "QUERY", "r": 5}',
    "next-empty": b'{"n": "", "q": "QUERY", "r": 5}',
    "next-number": b'{"n": 5, "q": "QUERY", "r": 5}',
    "next-list": b'{"n": ["NEXT"], "q": "QUERY", "r": 5}',
    "next-object": b'{"n": {"S": "NEXT"}, "q": "QUERY", "r": 5}',
    "query-number": b'{"n": "NEXT", "q": 5, "r": 5}',
    "query-null": b'{"n": "NEXT", "q": null, "r": 5}',
    "rows-zero": b'{"n": "NEXT", "q": "QUERY", "r": 0}',
    "rows-negative": b'{"n": "NEXT", "q": "QUERY", "r": -5}',
    "rows-text": b'{"n": "NEXT", "q": "QUERY", "r": "5"}',
    "rows-float": b'{"n": "NEXT", "q": "QUERY", "r": 5.0}',
    "rows-bool": b'{"n": "NEXT", "q": "QUERY", "r": true}',
    "rows-null": b'{"n": "NEXT", "q": "QUERY", "r": null}',
    "extra-key": b'{"n": "NEXT", "q": "QUERY", "r": 5, "size": 5}',
    "nan": b'{"n": NaN, "q": "QUERY", "r": 5}',
    "deeply-nested": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_body_with_a_valid_signature_is_refused(connection, sent, token, body) -> None:
    real = _payload(token)
    body = body.replace(b"NEXT", real["n"].encode()).replace(b"QUERY", real["q"].encode())
    message = str(_refused(connection, sent, _signed(body)))
    assert "not what sa_dynamo.paginate() writes" in message


def test_a_body_that_is_not_base64_is_refused(connection, sent) -> None:
    _refused(connection, sent, _signed("!!not base64!!"))


def test_the_same_body_signed_again_resumes(connection, token) -> None:
    """The malformed cases above differ from a good token only in their body."""
    page = sa_dynamo.paginate(
        connection, QUERY, page_size=5, after=_signed(json.dumps(_payload(token)).encode()), secret=SECRET
    )
    assert [row.sk for row in page.rows] == [5, 6, 7, 8, 9]


def test_a_token_of_another_statement_or_parameters_is_refused(connection, sent, token) -> None:
    other_parameters = select(notes.c.sk).where(notes.c.pk == "B")
    other_statement = select(notes.c.sk, notes.c.pk).where(notes.c.pk == "A")
    for query in (other_parameters, other_statement):
        assert "another query" in str(_refused(connection, sent, token, query=query))


def test_a_token_is_bound_to_the_limit(connection, sent) -> None:
    first = sa_dynamo.paginate(connection, QUERY.limit(4), page_size=3, secret=SECRET)
    for query in (QUERY.limit(10), QUERY.limit(3), QUERY):
        assert "another LIMIT" in str(_refused(connection, sent, first.next, query=query))
    second = sa_dynamo.paginate(connection, QUERY.limit(4), page_size=3, after=first.next, secret=SECRET)
    assert ([row.sk for row in second.rows], second.next) == ([3], None)


@pytest.mark.parametrize("size", [2.5, 0, -1, True, "3", None])
def test_a_page_size_that_is_no_count_of_rows_is_refused_before_sending(connection, sent, size) -> None:
    before = len(sent)
    with pytest.raises((TypeError, ValueError), match="page_size is the number of rows a page holds"):
        sa_dynamo.paginate(connection, QUERY, page_size=size, secret=SECRET)
    assert len(sent) == before


def test_an_empty_secret_is_refused(connection) -> None:
    with pytest.raises(ValueError, match="secret must not be empty"):
        sa_dynamo.paginate(connection, QUERY, page_size=5, secret="")


def test_a_bind_of_another_dialect_is_refused() -> None:
    """SQLite would run the statement whole: every row, from the first, whatever the token."""
    engine = create_engine("sqlite://")
    metadata.create_all(engine)
    with pytest.raises(InvalidRequestError, match="pass a dynamodb:// bind"):
        sa_dynamo.paginate(engine, QUERY, page_size=5, after="anything")
