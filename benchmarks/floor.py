"""The raw-HTTP floor: the requests boto3 sends, signed as botocore signs them (SigV4Auth on an
AWSRequest), over bare keep-alive connections (http.client's, or asyncio streams for the
asyncio workloads), with the JSON answer read by ``json.loads``. No client-side work is
cheaper, so every workload shows how far each contender is from it as well as its ratio to
boto3."""

from __future__ import annotations

import asyncio
import http.client
import json
from typing import Any
from urllib.parse import urlparse

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sa_dynamo.dbapi.transport.endpoint import LOCAL_CREDENTIALS

NAME = "raw HTTP floor"
# The floor of a point read as the driver sends it: the PartiQL of the same read.
PARTIQL = f"{NAME} ExecuteStatement (same PartiQL)"
TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"


class Floor:
    """DynamoDB's JSON API over one keep-alive connection."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        parsed = urlparse(endpoint_url)
        self.host, self.port = parsed.hostname or "", parsed.port or 80
        self.url = f"{parsed.scheme}://{parsed.netloc}/"
        self.connection = http.client.HTTPConnection(self.host, self.port)
        self.signer = SigV4Auth(
            Credentials(LOCAL_CREDENTIALS["aws_access_key_id"], LOCAL_CREDENTIALS["aws_secret_access_key"]),
            "dynamodb",
            region,
        )

    def signed(self, operation: str, body: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        """The request's body and its headers, signed."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET_PREFIX + operation}
        request = AWSRequest("POST", self.url, data=data, headers=headers)
        self.signer.add_auth(request)
        return data, dict(request.headers.items())

    def answered(self, operation: str, status: int, payload: bytes) -> dict[str, Any]:
        """The parsed answer; an error answer raises with its text."""
        if status != 200:
            raise RuntimeError(f"{operation} answered {status}: {payload[:300]!r}")
        return json.loads(payload)

    def call(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        """One signed request and its parsed answer."""
        data, headers = self.signed(operation, body)
        try:
            payload, status = self._send(data, headers)
        except (http.client.RemoteDisconnected, ConnectionError):  # the server closed an idle connection
            self.connection.close()
            payload, status = self._send(data, headers)
        return self.answered(operation, status, payload)

    def _send(self, data: bytes, headers: dict[str, str]) -> tuple[bytes, int]:
        self.connection.request("POST", "/", body=data, headers=headers)
        response = self.connection.getresponse()
        return response.read(), response.status

    def close(self) -> None:
        self.connection.close()


class AsyncFloor(Floor):
    """The same requests from asyncio tasks, each on an idle keep-alive stream or a new one
    (so as many connections as requests in flight); asyncio's streams read the answer."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        super().__init__(endpoint_url, region)
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def acall(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        """One signed request, awaited, and its parsed answer."""
        data, headers = self.signed(operation, body)
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head = (
            f"POST / HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(data)}\r\n{lines}\r\n"
        )
        request = head.encode() + data
        while True:
            reused = bool(self.idle)
            reader, writer = (
                self.idle.pop() if reused else await asyncio.open_connection(self.host, self.port)
            )
            try:
                writer.write(request)
                line = await reader.readline()
            except ConnectionError:
                if not reused:
                    raise
                line = b""
            if line or not reused:
                break
            writer.close()  # the server closed it while it was idle: on a new one
        status = int(line.split()[1])
        length = 0
        while (line := await reader.readline()) != b"\r\n":
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        payload = await reader.readexactly(length)
        self.idle.append((reader, writer))
        return self.answered(operation, status, payload)

    async def aclose(self) -> None:
        while self.idle:
            writer = self.idle.pop()[1]
            writer.close()
            await writer.wait_closed()
