"""A fresh Alembic environment per test: env.py, script.py.mako and versions/ in tmp_path, run
with alembic.command against the session's DynamoDB Local.

Every test gets its own table prefix and version table, so autogenerate (which sees every table
of the shared DynamoDB Local) looks only at the test's own tables.
"""

from __future__ import annotations

import io
import shutil
import textwrap
from pathlib import Path

import alembic
import pytest
from alembic.config import Config
from sqlalchemy import create_engine, insert, text

ENV_PY = """
from alembic import context
from sqlalchemy import create_engine

import alembic_like_migrations  # noqa: F401  (registers the dynamodb implementation)

config = context.config
target_metadata = config.attributes.get("target_metadata")
prefix = config.get_main_option("table_prefix")
options = {"version_table": config.get_main_option("version_table")}


def include_name(name, type_, parent_names):
    return type_ != "table" or name.startswith(prefix)


if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        **options,
    )
    with context.begin_transaction():
        context.run_migrations()
else:

    def run(connection):
        context.configure(
            connection=connection, target_metadata=target_metadata, include_name=include_name, **options
        )
        with context.begin_transaction():
            context.run_migrations()

    # Alembic's recipe for sharing a connection with programmatic commands.
    if "connection" in config.attributes:
        run(config.attributes["connection"])
    else:
        engine = create_engine(config.get_main_option("sqlalchemy.url"))
        with engine.connect() as connection:
            run(connection)
        engine.dispose()
"""

REVISION = '''
"""{message}"""
import sqlalchemy as sa
from alembic import op
{imports}
revision = {revision!r}
down_revision = {down!r}
branch_labels = None
depends_on = None


def upgrade():
{upgrade}


def downgrade():
{downgrade}
'''


class MigrationEnv:
    """An Alembic environment in a directory, and the DynamoDB tables it owns."""

    def __init__(self, directory: Path, url: str, prefix: str):
        self.directory = directory
        self.url = url
        self.prefix = prefix
        self.version_table = f"{prefix}_alembic_version"
        (directory / "versions").mkdir(parents=True)
        (directory / "env.py").write_text(ENV_PY)
        template = Path(alembic.__file__).parent / "templates" / "generic" / "script.py.mako"
        shutil.copy(template, directory / "script.py.mako")
        self.stdout = io.StringIO()
        self.config = Config(stdout=self.stdout)
        self.config.set_main_option("script_location", str(directory))
        self.config.set_main_option("sqlalchemy.url", url)
        self.config.set_main_option("version_table", self.version_table)
        self.config.set_main_option("table_prefix", prefix)
        self.engine = create_engine(url)

    def table(self, name: str) -> str:
        """The DynamoDB name of this test's table ``name``."""
        return f"{self.prefix}_{name}"

    def revision(
        self, revision: str, down: str | None, upgrade: str, downgrade: str = "pass", imports: str = ""
    ) -> None:
        """Write versions/<revision>.py; the bodies may use T_<name> for this test's table names."""
        source = REVISION.format(
            message=f"revision {revision}",
            imports=imports,
            revision=revision,
            down=down,
            upgrade=textwrap.indent(textwrap.dedent(upgrade).strip(), "    "),
            downgrade=textwrap.indent(textwrap.dedent(downgrade).strip(), "    "),
        )
        (self.directory / "versions" / f"{revision}.py").write_text(source.replace("T_", f"{self.prefix}_"))

    def version_rows(self) -> list[str]:
        """Every row of the version table (an unconditional read, as an operator would do)."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                text(f'SELECT "version_num" FROM "{self.version_table}"').execution_options(
                    dynamodb_scan="allow"
                )
            )
            return sorted(row[0] for row in rows)

    def fill(self, table, rows: list[dict]) -> None:
        """Bulk-load rows (AUTOCOMMIT: BatchExecuteStatement, 25 per call)."""
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(insert(table), rows)


@pytest.fixture
def migration_env(tmp_path: Path, endpoint_url: str, table_name: str):
    env = MigrationEnv(
        tmp_path / "migrations", f"dynamodb://{endpoint_url.removeprefix('http://')}", table_name
    )
    yield env
    env.engine.dispose()
