"""The HTTP transports sign every request as botocore's SigV4Auth does: every header the driver's
signer writes (Authorization, X-Amz-Date, X-Amz-Security-Token) is the one SigV4Auth writes on a
plain AWSRequest, for any credentials, region, endpoint, body and moment, the day changing and
the key rotating included."""

from __future__ import annotations

import datetime
import json

import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import NoCredentialsError
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sa_dynamo.dbapi.transport import sigv4
from sa_dynamo.dbapi.transport.signed import CONTENT_TYPE, TARGET_PREFIX

MOMENTS = [
    datetime.datetime(2026, 11, 27, 23, 59, 59, tzinfo=datetime.timezone.utc),
    datetime.datetime(2026, 11, 28, 0, 0, 1, tzinfo=datetime.timezone.utc),  # the next day: another key
    datetime.datetime(2027, 2, 28, 12, 0, 0, 999999, tzinfo=datetime.timezone.utc),
]
CREDENTIALS = [
    Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    Credentials("ASIAEXAMPLE", "another/secret+key", "a-session-token/with+chars="),
    Credentials("AKIDEXAMPLE", "a rotated secret"),  # the same key id, another secret
]
BODIES = [
    {"Statement": 'SELECT * FROM "t" WHERE "pk" = ?', "Parameters": [{"S": "\u00fc\U0001f600"}]},
    {"RequestItems": {"t": [{"PutRequest": {"Item": {"pk": {"B": "AP8="}, "n": {"N": "-1e-3"}}}}]}},
    {"Statement": "x" * 70_000},
    {},
]
URLS = [
    "https://dynamodb.eu-west-1.amazonaws.com/",
    "https://dynamodb.eu-west-1.amazonaws.com:443/",  # a default port, which the Host leaves out
    "http://127.0.0.1:8000/",
    "http://localhost:8000/a/path/",
    "http://localhost:8000/a b/../c/~d?x=1&a=2",  # a path SigV4 normalizes and quotes, a query
]


def sigv4auth_s(url: str, fields: dict[str, str], payload: bytes, frozen, region: str) -> dict[str, str]:
    request = AWSRequest("POST", url, data=payload, headers=fields)
    SigV4Auth(frozen, "dynamodb", region).add_auth(request)
    return dict(request.headers.items())


def at(monkeypatch: pytest.MonkeyPatch, moment: datetime.datetime) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment.replace(tzinfo=None))
    monkeypatch.setattr(sigv4, "now", moment.timestamp)


@pytest.mark.parametrize("moment", MOMENTS, ids=str)
@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1"])
@pytest.mark.parametrize("url", URLS)
def test_signatures_are_sigv4auth_s_byte_for_byte(
    monkeypatch: pytest.MonkeyPatch, moment: datetime.datetime, region: str, url: str
) -> None:
    at(monkeypatch, moment)
    for credentials in CREDENTIALS:
        frozen = credentials.get_frozen_credentials()
        for body in BODIES:
            payload = json.dumps(body).encode()
            fields = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": f"{TARGET_PREFIX}ExecuteStatement"}
            expected = sigv4auth_s(url, dict(fields), payload, frozen, region)
            assert sigv4.sign(url, dict(fields), payload, frozen, region) == expected
            assert ("X-Amz-Security-Token" in expected) == (frozen.token is not None)


header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
# runs of spaces, leading and trailing ones: SigV4 folds them in the canonical headers
spaced_text = st.lists(st.sampled_from([" ", "  ", "a", "Z.", "/+=", "\t"]), max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    access_key=st.text(st.characters(min_codepoint=48, max_codepoint=90), min_size=1, max_size=20),
    secret_key=header_text,
    token=st.none() | header_text | spaced_text,
    target=header_text | spaced_text,
    payload=st.binary(max_size=200),
    seconds=st.integers(0, 10**9),
)
@example(access_key="A", secret_key="s", token=" a  b ", target=" x\t y ", payload=b"", seconds=0)
def test_any_credentials_target_and_payload_sign_as_sigv4auth(
    access_key: str, secret_key: str, token: str | None, target: str, payload: bytes, seconds: int
) -> None:
    moment = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    frozen = Credentials(access_key, secret_key, token).get_frozen_credentials()
    fields = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": target}  # spaces folded, as SigV4Auth folds them
    with pytest.MonkeyPatch.context() as monkeypatch:
        at(monkeypatch, moment)
        expected = sigv4auth_s(URLS[0], dict(fields), payload, frozen, "eu-west-1")
        assert sigv4.sign(URLS[0], dict(fields), payload, frozen, "eu-west-1") == expected


def test_no_credentials_is_botocore_s_error() -> None:
    with pytest.raises(NoCredentialsError):
        sigv4.sign(URLS[0], {}, b"{}", None, "us-east-1")
