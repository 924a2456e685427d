"""The raw-HTTP floor: the requests boto3 sends, signed as botocore signs them (SigV4Auth on an
AWSRequest), over one bare keep-alive http.client connection, with the JSON answer read by
``json.loads``. No client-side work is cheaper, so every workload shows how far each contender
is from it as well as its ratio to boto3."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlparse

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

NAME = "raw HTTP floor"
TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"


class Floor:
    """DynamoDB's JSON API over one keep-alive connection; ``calls`` counts requests."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        parsed = urlparse(endpoint_url)
        self.url = f"{parsed.scheme}://{parsed.netloc}/"
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port)
        self.signer = SigV4Auth(
            Credentials(LOCAL_CREDENTIALS["aws_access_key_id"], LOCAL_CREDENTIALS["aws_secret_access_key"]),
            "dynamodb",
            region,
        )
        self.calls = 0

    def call(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        """One signed request and its parsed answer; an error answer raises with its text."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET_PREFIX + operation}
        request = AWSRequest("POST", self.url, data=data, headers=headers)
        self.signer.add_auth(request)
        headers = dict(request.headers.items())
        try:
            payload, status = self._send(data, headers)
        except (http.client.RemoteDisconnected, ConnectionError):  # the server closed an idle connection
            self.connection.close()
            payload, status = self._send(data, headers)
        self.calls += 1
        if status != 200:
            raise RuntimeError(f"{operation} answered {status}: {payload[:300]!r}")
        return json.loads(payload)

    def _send(self, data: bytes, headers: dict[str, str]) -> tuple[bytes, int]:
        self.connection.request("POST", "/", body=data, headers=headers)
        response = self.connection.getresponse()
        return response.read(), response.status

    def close(self) -> None:
        self.connection.close()
