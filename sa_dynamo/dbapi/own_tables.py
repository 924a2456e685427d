"""Which tables are sa_dynamo's own, not the user's: the guard tables of unique constraints
(``<table>.unique``, unique.py) and the autoincrement counters (``sa_dynamo_counters``,
counters.py). The table list (control_plane.list_tables) leaves them out, so reflection,
Alembic's autogenerate and ``sa-dynamo`` never take them for the user's tables."""

from __future__ import annotations

GUARD_SUFFIX = ".unique"
COUNTERS_TABLE = "sa_dynamo_counters"


def is_guard_table(name: str) -> bool:
    return name.endswith(GUARD_SUFFIX)


def is_own_table(name: str) -> bool:
    """A table sa_dynamo made for itself, which no model declares."""
    return name == COUNTERS_TABLE or is_guard_table(name)
