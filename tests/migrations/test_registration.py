"""Registration: by importing the package in env.py, or through Alembic's plugin entry point,
which imports it while Alembic itself is still being imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from alembic.ddl.impl import DefaultImpl
from alembic.operations import Operations

from alembic_like_migrations import DynamoDBImpl
from sa_dynamo.dialect.base import DynamoDBDialect

REPOSITORY = Path(__file__).resolve().parents[2]


def test_importing_the_package_registers_the_impl_and_the_operations():
    assert DefaultImpl.get_by_dialect(DynamoDBDialect()) is DynamoDBImpl
    for name in ("set_ttl", "remove_ttl", "backfill", "copy_items", "rename_discriminator"):
        assert callable(getattr(Operations, name))


def run_fresh(code: str) -> None:
    """Run ``code`` in a new interpreter, where the installed distribution's entry point is all
    that brings this package in."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, cwd=REPOSITORY.parent)


def test_the_alembic_plugin_entry_point_registers_everything():
    run_fresh(
        """
        import sys

        import alembic  # loads the plugin while importing itself
        assert "alembic_like_migrations" in sys.modules
        from alembic.ddl.impl import DefaultImpl
        from alembic.operations import Operations
        from sa_dynamo.dialect.base import DynamoDBDialect

        assert DefaultImpl.get_by_dialect(DynamoDBDialect()).__name__ == "DynamoDBImpl"
        assert callable(Operations.backfill)
        """
    )


def test_importing_the_package_first_with_the_entry_point_installed():
    """The package imports Alembic, which then loads its plugins, this package included,
    half-imported: setup() must already be there."""
    run_fresh("import alembic_like_migrations; print(alembic_like_migrations.DynamoDBImpl)")
