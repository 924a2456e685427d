"""sa_dynamo: a SQLAlchemy 2.x dialect for Amazon DynamoDB (PartiQL)."""

from __future__ import annotations

from . import exc
from .constructs import upsert, use_index
from .cost import capacity, consumed
from .dialect.types import BinarySet, NumberSet, StringSet
from .orm import SingleTable, attribute_bag, computed_key, item_collection, key_of
from .pagination import Page, paginate
from .plan import Plan, explain
from .transaction import run_async_transaction, run_transaction

__version__ = "0.1.0"

__all__ = [
    "BinarySet",
    "NumberSet",
    "Page",
    "Plan",
    "SingleTable",
    "StringSet",
    "__version__",
    "attribute_bag",
    "capacity",
    "computed_key",
    "consumed",
    "exc",
    "explain",
    "item_collection",
    "key_of",
    "paginate",
    "run_async_transaction",
    "run_transaction",
    "upsert",
    "use_index",
]
