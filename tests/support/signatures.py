"""What a request's SigV4 signature proves: the key pair and region it was signed with."""

from __future__ import annotations

import re

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/\d{8}/(?P<region>[^/]+)/dynamodb/aws4_request, "
    r"SignedHeaders=(?P<signed>[^,]+), Signature=(?P<signature>[0-9a-f]{64})"
)


def signed_by(
    url: str, headers: dict[str, str], body: bytes, access_key: str, secret_key: str, region: str
) -> bool:
    """Whether a request received as ``headers`` and ``body`` at ``url`` carries the signature
    botocore's SigV4Auth computes for it with this key pair and region."""
    found = _AUTHORIZATION.fullmatch(headers["Authorization"])
    if found is None or (found["key"], found["region"]) != (access_key, region):
        return False
    signed = found["signed"].split(";")
    kept = {
        name: value for name, value in headers.items() if name.lower() in signed and name.lower() != "host"
    }
    request = AWSRequest("POST", url, data=body, headers=kept)
    request.context["timestamp"] = headers["X-Amz-Date"]
    signer = SigV4Auth(Credentials(access_key, secret_key), "dynamodb", region)
    string_to_sign = signer.string_to_sign(request, signer.canonical_request(request))
    return signer.signature(string_to_sign, request) == found["signature"]
