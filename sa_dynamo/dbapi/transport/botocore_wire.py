"""DynamoDB's JSON on the wire, without botocore's shape walks: request bodies the driver
encodes itself, and pages whose Items it reads itself. Both hook into botocore's public events
(``before-call``, ``before-parse``) of the driver's client; credentials, signing, endpoints,
retries and every other call stay botocore's.

botocore serializes a request by walking each parameter through the API's shape model, and
parses a response the same way: for a batch of 25 items or a page of 1,000 that walk costs
several times more than ``json.dumps`` / ``json.loads`` of the same JSON. The bytes sent are
the same either way (tests/dbapi/test_client_config.py compares them). The JSON itself is
wire.py's, which the driver's own HTTP transports write and read too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from . import wire

# The operations whose bodies the driver encodes: the ones that carry statements or items.
_ENCODED = frozenset(
    {"ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction", "BatchWriteItem", "BatchGetItem"}
)

# Context variables, not a thread's: under asyncio many tasks send on one thread, and each
# task's request is serialized and parsed in its own context.
_reading: ContextVar[bool] = ContextVar("sa_dynamo_wire_items", default=False)
_body: ContextVar[tuple[str, bytes] | None] = ContextVar("sa_dynamo_wire_body", default=None)


@contextmanager
def encoded(client: Any, operation: str, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The parameters to call ``client``'s method for ``operation`` with, for the body
    ``request``: within the block, a stand-in with its statements and items left out, while the
    request's JSON, encoded here, becomes the body sent (``put_encoded_body``); ``request`` as
    it is for an operation that carries no statements or items. Only for a client that does not
    validate parameters: a stand-in is not a valid request."""
    body = _encode(request) if operation in _ENCODED and _speaks_json(client) else None
    if body is None:
        yield request
        return
    reset = _body.set((operation, body))
    try:
        yield _stand_in(request)
    finally:
        _body.reset(reset)


def _speaks_json(client: Any) -> bool:
    """False for a stand-in for a client, or one that speaks another protocol than this JSON."""
    meta = getattr(client, "meta", None)
    return meta is not None and meta.service_model.protocol == "json"


def _encode(request: dict[str, Any]) -> bytes | None:
    """``wire.encode``; None for a value that JSON cannot hold, left to botocore's serializer
    and its error."""
    try:
        return wire.encode(request)
    except TypeError:
        return None


def _stand_in(value: Any) -> Any:
    """What botocore serializes instead of ``value``: every list in it empty. The rest is kept,
    RequestItems' table names among it (botocore's endpoint rules read them)."""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {name: _stand_in(member) for name, member in value.items()}
    return value


def put_encoded_body(params: dict[str, Any], model: Any, **_: Any) -> None:
    """botocore's ``before-call`` hook: the body encoded for this operation replaces the
    stand-in's. Another call on the client in the meantime (its own endpoint discovery, say)
    keeps its own."""
    encoded_body = _body.get()
    if encoded_body is not None and encoded_body[0] == model.name:
        params["body"] = encoded_body[1]


@contextmanager
def wire_items(wanted: bool = True) -> Iterator[None]:
    """Within it, this thread's (or task's) ExecuteStatement responses carry their Items as
    DynamoDB's JSON, if ``wanted``."""
    if not wanted:
        yield
        return
    reset = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(reset)


def take_wire_items(
    response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any
) -> None:
    """Before botocore parses an ExecuteStatement answer: inside ``wire_items()``, take the
    Items of a successful response as DynamoDB's JSON and leave botocore the rest to parse.

    The page is read once, by ``json.loads`` and ``values.deserialize_wire``, with the results
    botocore's parse would give, and not held twice, parsed and unparsed. Other calls on the
    client, the caller's own included, are parsed as usual."""
    if not _reading.get() or response_dict.get("status_code") != 200:
        return
    body = response_dict.get("body")
    content_type = str(response_dict.get("headers", {}).get("content-type", ""))
    if not isinstance(body, bytes) or "json" not in content_type:
        return  # e.g. a CBOR response: botocore's parser reads it
    page = wire.read_page(body)
    if page is None:
        return  # botocore reports it
    answer, rest = page
    customized_response_dict.update(answer)
    response_dict["body"] = b"{}" if rest is None else json.dumps(rest).encode("utf-8")


def register(client: Any) -> None:
    """Hook the encoded bodies into a botocore client (a stand-in without botocore's event
    system is left as it is); ``take_wire_items`` is called by botocore_attempts.py's hook, once
    it has found the answer whole."""
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is not None:
        events.register("before-call.dynamodb", put_encoded_body, unique_id="sa_dynamo-encoded-body")
