"""Alembic on DynamoDB.

``import alembic_like_migrations`` in env.py (or Alembic's plugin entry point) registers the
``dynamodb`` implementation (tables, GSIs, the version table kept in DynamoDB), DynamoDB's
operations (``op.set_ttl``, ``op.remove_ttl``, ``op.backfill``, ``op.copy_items``,
``op.rename_discriminator``), their rendering into scripts and, once a DynamoDB migration
context starts, the autogenerate comparison.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.runtime.plugins import Plugin


# Defined before anything imports Alembic: when this package is imported first, Alembic loads
# its plugins while being imported and calls setup() on this half-imported module.
def setup(plugin: Plugin) -> None:
    """Alembic's plugin hook (entry point group ``alembic.plugins``). Importing this package has
    registered everything already; autogenerate's comparison is not a plugin comparator, so no
    ``autogenerate_plugins`` setting is needed to turn it on."""


from . import render as render  # noqa: E402 - registers how the operations appear in scripts
from .backfill import Backfill  # noqa: E402 - after setup(), see above
from .checkpoints import Progress  # noqa: E402
from .errors import BackfillConflict, KeySchemaChangeError  # noqa: E402 - after setup(), see above
from .impl import DynamoDBImpl  # noqa: E402 - after setup(), see above
from .ops import BackfillOp, RemoveTTLOp, RenameDiscriminatorOp, SetTTLOp  # noqa: E402 - after setup(), see above

__all__ = [
    "Backfill",
    "BackfillConflict",
    "BackfillOp",
    "DynamoDBImpl",
    "KeySchemaChangeError",
    "Progress",
    "RemoveTTLOp",
    "RenameDiscriminatorOp",
    "SetTTLOp",
    "setup",
]
