"""Facts about DynamoDB's PartiQL that both the compiler and the SQL-text translator obey
(partiql-reference.md). No SQLAlchemy here."""

from __future__ import annotations

# DynamoDB's condition functions and their arity; nothing else runs server-side.
FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
    "size": 1,
}
MAX_IN_OPERANDS = 100
# An IN on the partition key reads at most this many partitions (DynamoDB Local allows 100).
MAX_PARTITION_KEYS = 50
MAX_OPERATORS = 300
