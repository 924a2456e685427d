"""DynamoDB's JSON as the driver writes and reads it itself, on every transport: a request's body
as botocore's JSON serializer would make it, and a page's Items kept as DynamoDB's JSON for
``values.deserialize_wire`` instead of walked through botocore's shape model (several times the
cost of ``json.loads`` for a page of 1,000 items)."""

from __future__ import annotations

import json
from base64 import b64encode
from typing import Any
from zlib import crc32

from botocore.exceptions import ChecksumError

from ..values import collector_paused
from . import WIRE_ITEMS

# The members of an ExecuteStatement answer whose JSON is what botocore's parser would make of
# them (strings, and ConsumedCapacity's numbers and names); LastEvaluatedKey is AttributeValues,
# whose binary values botocore decodes, so it is left to botocore.
PLAIN_JSON = frozenset({"NextToken", "ConsumedCapacity"})


def _base64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return b64encode(value).decode("ascii")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# What json.dumps(request, default=_base64) and json.loads(text) make for each call, made once.
_ENCODER = json.JSONEncoder(default=_base64)
_DECODER = json.JSONDecoder()


def encode(request: dict[str, Any]) -> bytes:
    """The body botocore's JSON serializer would make of ``request``: binary values as base64
    text, its ``json.dumps`` separators. TypeError for a value that JSON cannot hold."""
    return _ENCODER.encode(request).encode("utf-8")


def read_page(body: bytes) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """A successful ExecuteStatement answer's Items as DynamoDB's JSON: (the answer so far,
    with ``WIRE_ITEMS`` set, and what is left for botocore's parser to read, None when nothing
    is); None when the body is no such answer (botocore reads it and reports what is wrong)."""
    try:
        with collector_paused():  # a page's worth of new objects, none in a cycle
            data = _DECODER.decode(body.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError among them
        return None
    if not isinstance(data, dict) or not isinstance(data.get("Items"), list):
        return None
    answer = {"Items": data.pop("Items"), WIRE_ITEMS: True}
    if data.keys() <= PLAIN_JSON:  # as botocore would parse them: nothing left for it to read
        answer.update(data)
        return answer, None
    return answer, data


def checksum_failure(headers: Any, body: bytes) -> ChecksumError | None:
    """botocore's ChecksumError for an answer whose body does not match its x-amz-crc32 header
    (a corrupted answer); None when it matches or has none to match."""
    expected = headers.get("x-amz-crc32")
    if expected is None or not expected.isdigit():
        return None
    actual = crc32(body) & 0xFFFFFFFF
    if actual == int(expected):
        return None
    return ChecksumError(checksum_type="crc32", expected_checksum=expected, actual_checksum=actual)
