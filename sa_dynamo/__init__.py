"""sa_dynamo: a SQLAlchemy 2.x dialect for Amazon DynamoDB (PartiQL)."""

from __future__ import annotations

from . import exc
from .dialect.types import BinarySet, NumberSet, StringSet

__version__ = "0.1.0"

__all__ = ["BinarySet", "NumberSet", "StringSet", "__version__", "exc"]
