"""Alembic's environment: the generic env.py of `alembic init`, plus what is marked DynamoDB."""

from logging.config import fileConfig

from alembic import context
from models import Base
from sqlalchemy import engine_from_config, pool

import alembic_like_migrations  # noqa: F401  DynamoDB: registers the dynamodb implementation

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name)

target_metadata = Base.metadata


def include_name(name, type_, parent_names):
    # DynamoDB: an AWS account holds other applications' tables; autogenerate compares ours only.
    return type_ != "table" or name in target_metadata.tables


def run_migrations_offline() -> None:
    """``alembic upgrade --sql``: print the DynamoDB calls instead of making them."""
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with connectable.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            include_name=include_name,  # DynamoDB
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
