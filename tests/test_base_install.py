"""A plain ``pip install`` works: the package, the sync engine, the ORM, the CLI and Alembic run
with the base dependencies only, without greenlet or aiobotocore (SQLAlchemy 2.1 no longer
brings greenlet, and only the ``async`` extra installs it).

The virtualenv is built from a copy of the source, outside the checkout, with this run's
SQLAlchemy release, so that each SQLAlchemy line the suite runs on is tried.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
import venv
from pathlib import Path

import pytest
import sqlalchemy

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "sa_dynamo", "alembic_like_migrations")

SCRIPT = """
import sys

from sqlalchemy import ForeignKey, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

import sa_dynamo

class Base(DeclarativeBase):
    pass

class Item(sa_dynamo.SingleTable, Base):
    __tablename__ = "base_install_items"
    pk: Mapped[str] = mapped_column(primary_key=True)
    sk: Mapped[str] = mapped_column(primary_key=True)

class Order(Item):
    total: Mapped[int | None]

engine = create_engine("dynamodb+local://", dynamodb_scan="error")
Base.metadata.create_all(engine)
with Session(engine) as session, session.begin():
    session.add_all([Order(pk="C#1", sk=f"O#{n}", total=n) for n in range(3)])
with Session(engine) as session:
    query = select(Order).where(Order.pk == "C#1").order_by(Order.sk.desc()).limit(2)
    print("rows:", [order.total for order in session.scalars(query)])
Base.metadata.drop_all(engine)
engine.dispose()

loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("greenlet", "aiobotocore", "aiohttp"))
loaded += sorted(m for m in sys.modules if m.startswith("sqlalchemy.ext.asyncio"))
print("async modules loaded:", loaded)
try:
    sa_dynamo.run_async_transaction(engine, None).send(None)
except ImportError as error:
    print("asked for asyncio:", error)
"""


def _run(*command: str | Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, env=env, timeout=600, check=False
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory) -> Path:
    """A virtualenv with ``pip install .`` and nothing else (the SQLAlchemy of this run pinned)."""
    root = tmp_path_factory.mktemp("base_install")
    source = root / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    environment = root / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", source, f"SQLAlchemy=={sqlalchemy.__version__}")
    # SQLAlchemy 2.0 itself requires greenlet on common platforms; the sync dialect must not.
    _run(python, "-m", "pip", "uninstall", "--quiet", "--yes", "greenlet")
    return environment


def test_the_base_install_has_no_async_dependency(base_venv):
    """The premise of the other tests: if a base dependency brought greenlet, they prove nothing."""
    python = base_venv / "bin" / "python"
    listed = _run(python, "-m", "pip", "list", "--format=freeze").lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert {"greenlet", "aiobotocore"} & installed == set()
    assert f"sqlalchemy=={sqlalchemy.__version__}" in listed
    requires = _run(
        python, "-c", "import importlib.metadata as m; print(*m.requires('sa-dynamo'), sep='\\n')"
    )
    base = [line for line in requires.lower().splitlines() if "extra ==" not in line]
    assert base and not [line for line in base if line.startswith(("greenlet", "aiobotocore"))]


def test_a_base_install_runs_the_orm_on_the_embedded_server(base_venv, tmp_path):
    """Imports nothing async, runs a query on ``dynamodb+local://`` (its own server: the
    environment of the test session is not passed on), and asking for asyncio names the extra."""
    script = tmp_path / "first_steps.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SA_DYNAMO_", "AWS_"))}
    printed = _run(base_venv / "bin" / "python", script, env=env)
    assert "rows: [2, 1]" in printed
    assert "async modules loaded: []" in printed
    assert "pip install 'sa-dynamo[async]'" in printed


def test_the_command_line_tool_runs(base_venv):
    assert _run(base_venv / "bin" / "sa-dynamo", "--version").strip() == f"sa-dynamo {_version()}"


def test_alembic_runs_without_the_async_extra(base_venv, tmp_path):
    """With the alembic extra alone, an operation runs on the embedded server."""
    python = base_venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", "alembic")
    _run(python, "-m", "pip", "uninstall", "--quiet", "--yes", "greenlet")  # SQLAlchemy 2.0's again
    script = tmp_path / "migrate.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            from alembic.migration import MigrationContext
            from alembic.operations import Operations
            from sqlalchemy import Column, String, create_engine, inspect

            engine = create_engine(f"dynamodb+local://?data_dir={sys.argv[1]}")  # a server that keeps it
            with engine.begin() as conn:
                op = Operations(MigrationContext.configure(conn))
                op.create_table("base_install_migrated", Column("id", String, primary_key=True))
                print("created:", inspect(conn).has_table("base_install_migrated"))
                op.drop_table("base_install_migrated")
            print("greenlet loaded:", "greenlet" in sys.modules)
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SA_DYNAMO_", "AWS_"))}
    output = _run(python, script, tmp_path / "data", env=env)
    assert output.splitlines() == ["created: True", "greenlet loaded: False"]


def _version() -> str:
    import sa_dynamo

    return sa_dynamo.__version__
