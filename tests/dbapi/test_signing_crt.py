"""With the crt extra the HTTP transports sign with awscrt: every header it writes (Authorization,
X-Amz-Date, X-Amz-Security-Token) is the one botocore's SigV4Auth writes on a plain AWSRequest,
for any credentials, region, endpoint, body and moment."""

from __future__ import annotations

import datetime
import json

import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import NoCredentialsError

pytest.importorskip("awscrt")

from sa_dynamo.dbapi.transport import crt, signed
from sa_dynamo.dbapi.transport.signed import CONTENT_TYPE, SIGNING_NAME, TARGET_PREFIX

MOMENTS = [
    datetime.datetime(2026, 11, 27, 23, 59, 59, tzinfo=datetime.timezone.utc),
    datetime.datetime(2026, 11, 28, 0, 0, 1, tzinfo=datetime.timezone.utc),
    datetime.datetime(2027, 2, 28, 12, 0, 0, 999999, tzinfo=datetime.timezone.utc),
]
CREDENTIALS = [
    Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    Credentials("ASIAEXAMPLE", "another/secret+key", "a-session-token/with+chars="),
    Credentials("AKIDEXAMPLE", "a rotated secret"),
]
BODIES = [
    {"Statement": 'SELECT * FROM "t" WHERE "pk" = ?', "Parameters": [{"S": "\u00fc\U0001f600"}]},
    {"RequestItems": {"t": [{"PutRequest": {"Item": {"pk": {"B": "AP8="}, "n": {"N": "-1e-3"}}}}]}},
    {"Statement": "x" * 70_000},  # larger than a read buffer
    {},
]
URLS = [
    "https://dynamodb.eu-west-1.amazonaws.com/",
    "https://dynamodb.eu-west-1.amazonaws.com:443/",  # a default port, which the Host leaves out
    "http://127.0.0.1:8000/",
    "http://localhost:8000/a/path/",
]


@pytest.mark.parametrize("moment", MOMENTS, ids=str)
@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1"])
@pytest.mark.parametrize("url", URLS)
def test_awscrt_signatures_are_sigv4auth_s_byte_for_byte(
    monkeypatch: pytest.MonkeyPatch, moment: datetime.datetime, region: str, url: str
) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment.replace(tzinfo=None))
    monkeypatch.setattr(crt, "now", lambda: moment)
    for credentials in CREDENTIALS:
        frozen = credentials.get_frozen_credentials()
        for body in BODIES:
            payload = json.dumps(body).encode()
            fields = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": f"{TARGET_PREFIX}ExecuteStatement"}
            botocore_s = AWSRequest("POST", url, data=payload, headers=fields)
            SigV4Auth(frozen, SIGNING_NAME, region).add_auth(botocore_s)
            expected = dict(botocore_s.headers.items())
            assert crt.sign(url, dict(fields), payload, frozen, region) == expected
            assert ("X-Amz-Security-Token" in expected) == (frozen.token is not None)


def test_the_http_transports_sign_with_awscrt_when_it_is_installed() -> None:
    assert signed.crt is crt


def test_no_credentials_is_botocore_s_error() -> None:
    with pytest.raises(NoCredentialsError):
        crt.sign(URLS[0], {}, b"{}", None, "us-east-1")
