"""Every DynamoDB and PartiQL limit the driver, the compiler and the SQL-text translator obey,
in one place (partiql-reference.md, docs/partiql-findings.md). Checked before anything is sent,
each with an error that names it. No SQLAlchemy here.
"""

from __future__ import annotations

# -- statements ------------------------------------------------------------------------------

MAX_STATEMENT_BYTES = 8192  # a statement's text, UTF-8
MAX_OPERATORS = 300  # operators and functions in a WHERE
MAX_IN_OPERANDS = 100  # values in one IN list
# An IN on the partition key reads at most this many partitions (DynamoDB Local allows 100).
MAX_PARTITION_KEYS = 50
# DynamoDB's condition functions and their arity; nothing else runs server-side.
FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
    "size": 1,
}

# -- requests --------------------------------------------------------------------------------

BATCH_SIZE = 25  # statements per BatchExecuteStatement, items per BatchWriteItem
MAX_GET_KEYS = 100  # keys per BatchGetItem
MAX_TRANSACTION_ACTIONS = 100  # actions per ExecuteTransaction

# -- items -----------------------------------------------------------------------------------

MAX_ITEM_BYTES = 400 * 1024
# DynamoDB stores 32 levels, the attribute counting as the first: 31 maps and lists inside each
# other in one value (PartiQL's INSERT takes a 32nd, but the item then refuses every UPDATE).
MAX_LEVELS = 32
MAX_NESTING = MAX_LEVELS - 1
MAX_KEY_BYTES = {"HASH": 2048, "RANGE": 1024}
MAX_DIGITS = 38  # significant digits of a number
EXPONENTS = range(-130, 126)  # 1E-130 .. 9.9E+125, by the exponent of the first digit
# Attribute names DynamoDB stores but no statement can name.
UNNAMEABLE_PREFIXES = (":", "#")

# -- tables ----------------------------------------------------------------------------------

# Table and index names: 3 to 255 of these characters (DynamoDB's refusal names neither).
NAME_LENGTHS = range(3, 256)
NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
