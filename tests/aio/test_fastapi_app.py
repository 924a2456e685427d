"""examples/fastapi_app.py, driven through its ASGI interface with httpx (no server process)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import httpx
import pytest

APP = Path(__file__).resolve().parents[2] / "examples" / "fastapi_app.py"


@pytest.fixture
def example(monkeypatch, dynamodb_local, table_name):
    """The example's module, on the session's DynamoDB Local and a table of its own."""
    monkeypatch.setenv("SA_DYNAMO_ORDERS_TABLE", table_name)
    spec = importlib.util.spec_from_file_location("fastapi_app_example", APP)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    yield module
    module.Base.registry.dispose()


async def test_the_fastapi_example_serves_orders(example, raw, table_name):
    async with example.lifespan(example.app):
        transport = httpx.ASGITransport(app=example.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://example") as client:
            for n in range(5):
                created = await client.post("/customers/42/orders", json={"order_id": f"o{n}", "total": n})
                assert created.status_code == 201
            assert (await client.get("/customers/42/orders/o3")).json() == {
                "order_id": "o3",
                "total": 3,
                "customer_id": "42",
            }
            assert (await client.get("/customers/42/orders/nope")).status_code == 404
            again = await client.post("/customers/42/orders", json={"order_id": "o3", "total": 99})
            assert (again.status_code, again.json()) == (
                409,
                {"detail": "customer '42' has an order 'o3' already"},
            )

            first = (await client.get("/customers/42/orders", params={"size": 3})).json()
            rest = (
                await client.get("/customers/42/orders", params={"size": 3, "after": first["next"]})
            ).json()
            assert [o["order_id"] for o in first["orders"] + rest["orders"]] == [f"o{n}" for n in range(5)]
            assert rest["next"] is None
            for token in (first["next"][:-2] + "xx", "garbage"):
                refused = await client.get("/customers/42/orders", params={"size": 3, "after": token})
                assert refused.status_code == 400, refused.text
                assert "start again without it" in refused.json()["detail"]
            other = await client.get("/customers/43/orders", params={"size": 3, "after": first["next"]})
            assert other.status_code == 400  # a token of another customer's list

            adds = [client.post("/customers/42/orders/o0/add", params={"amount": 1}) for _ in range(10)]
            assert {response.status_code for response in await asyncio.gather(*adds)} == {200}
            assert (await client.get("/customers/42/orders/o0")).json()["total"] == 10
        raw.delete_table(TableName=table_name)
