"""A page is decoded and turned into rows without Python's cyclic garbage collector starting
on the way (values.collector_paused): thousands of new dicts, none in a cycle, that collections
would otherwise promote page after page until full collections of the whole process follow.
Counted with ``gc.callbacks``, never timed: building such a page starts dozens of collections;
decoding it, at most the one that is due when the collector resumes."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest

from sa_dynamo.dbapi import values
from sa_dynamo.dbapi.paging import Pages
from sa_dynamo.dbapi.transport import WIRE_ITEMS
from sa_dynamo.dbapi.transport import botocore_wire as wire

ITEMS = 20_000  # some 30 collections' worth of new containers at the default threshold of 700


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every collection that starts inside the test."""
    started: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        yield started
    finally:
        gc.callbacks.remove(seen)


def page(count: int) -> list[dict[str, Any]]:
    return [
        {"pk": {"S": "p"}, "sk": {"S": f"{i:06}"}, "n": {"N": str(i)}, "m": {"M": {}}} for i in range(count)
    ]


def test_collections_do_start_while_such_a_page_is_built(collections: list[int]) -> None:
    """The control: without the pause, building the same page starts collections."""
    built = json.loads(json.dumps({"Items": page(ITEMS)}))
    assert len(built["Items"]) == ITEMS and len(collections) > 10


def test_a_page_of_dynamodb_json_is_decoded_without_a_collection(collections: list[int]) -> None:
    body = json.dumps({"Items": page(ITEMS), "NextToken": "t", "ConsumedCapacity": {"CapacityUnits": 2.5}})
    response = {
        "status_code": 200,
        "body": body.encode(),
        "headers": {"content-type": "application/x-amz-json-1.0"},
    }
    taken: dict[str, Any] = {}
    collections.clear()  # those of building the body
    with wire.wire_items():
        wire.take_wire_items(response, taken)
    assert len(collections) <= 1
    assert len(taken["Items"]) == ITEMS and taken[WIRE_ITEMS]
    # the rest of the answer as botocore would have parsed it, and nothing left for botocore
    assert (taken["NextToken"], taken["ConsumedCapacity"], response["body"]) == (
        "t",
        {"CapacityUnits": 2.5},
        b"{}",
    )
    assert gc.isenabled()


def test_a_page_becomes_rows_without_a_collection(collections: list[int]) -> None:
    pages = Pages(transport=None)  # type: ignore[arg-type]  # rows() sends nothing
    pages.names, pages.wire = ("sk", "n", "m"), True
    items = page(ITEMS)
    collections.clear()
    rows = pages.rows(items)
    assert len(collections) <= 1
    assert rows[7] == ("000007", 7, {}) and len(rows) == ITEMS
    assert gc.isenabled()


def test_a_collector_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with values.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError), values.collector_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()
