"""The HTTP transport's signer is botocore's SigV4Auth with its signing key kept for the day:
every header it writes is the one SigV4Auth writes on a plain AWSRequest, for any credentials,
region, body and moment, the day changing and the key rotating included."""

from __future__ import annotations

import datetime
import json

import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sa_dynamo.dbapi.transport.signed import CONTENT_TYPE, SIGNING_NAME, TARGET_PREFIX, SignedRequest, Signer

MOMENTS = [
    datetime.datetime(2026, 11, 27, 23, 59, 59, tzinfo=datetime.timezone.utc),
    datetime.datetime(2026, 11, 28, 0, 0, 1, tzinfo=datetime.timezone.utc),  # the next day: another key
    datetime.datetime(2026, 11, 28, 12, 0, 0, tzinfo=datetime.timezone.utc),
]
CREDENTIALS = [
    Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    Credentials("ASIAEXAMPLE", "another/secret+key", "a-session-token/with+chars="),
    Credentials("AKIDEXAMPLE", "a rotated secret"),  # the same key id, another secret
]
BODIES = [
    {"Statement": 'SELECT * FROM "t" WHERE "pk" = ?', "Parameters": [{"S": "\u00fc\U0001f600"}]},
    {"RequestItems": {"t": [{"PutRequest": {"Item": {"pk": {"B": "AP8="}}}}]}},
    {},
]


def headers(request: AWSRequest) -> dict[str, str]:
    return {name: value for name, value in request.headers.items()}


@pytest.mark.parametrize("moment", MOMENTS, ids=str)
@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1"])
def test_signatures_are_sigv4auth_s_byte_for_byte(monkeypatch: pytest.MonkeyPatch, moment, region) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment.replace(tzinfo=None))
    for credentials in CREDENTIALS:
        frozen = credentials.get_frozen_credentials()
        for body in BODIES:
            payload = json.dumps(body).encode()
            fields = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": f"{TARGET_PREFIX}ExecuteStatement"}
            ours = SignedRequest(
                "POST", "https://dynamodb.eu-west-1.amazonaws.com/", data=payload, headers=fields
            )
            botocore_s = AWSRequest(
                "POST", "https://dynamodb.eu-west-1.amazonaws.com/", data=payload, headers=fields
            )
            Signer(frozen, region).add_auth(ours)
            SigV4Auth(frozen, SIGNING_NAME, region).add_auth(botocore_s)
            assert headers(ours) == headers(botocore_s)
            assert ours.body == botocore_s.body == payload
