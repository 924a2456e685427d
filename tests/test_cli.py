"""The `sa-dynamo` command: the installed entry point in subprocesses, main() in process."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

import sa_dynamo
from sa_dynamo import cli, local_server

SA_DYNAMO = Path(sys.executable).with_name("sa-dynamo")


def _run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SA_DYNAMO), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=90
    )


def test_local_start_status_stop_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An isolated cache (state file, log) on the already installed emulator: nothing is fetched.
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        local_server.ENV_DIR: str(local_server.install()),
    }
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    with contextlib.closing(socket.socket()) as probe:
        if probe.connect_ex(("127.0.0.1", local_server.DEFAULT_PORT)) == 0:
            pytest.skip(
                f"something else listens on port {local_server.DEFAULT_PORT}, where `local start` starts"
            )
    try:
        assert _run("local", "status", env=env, cwd=tmp_path).returncode == 1

        starter = subprocess.Popen(
            [str(SA_DYNAMO), "local", "start", "--data-dir", "data"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        # The server must not hold these pipes open, or this would wait until it stops.
        out, err = starter.communicate(timeout=90)
        assert starter.returncode == 0, err
        port = int(re.search(r"^SQLAlchemy URL: dynamodb://127\.0\.0\.1:(\d+)$", out, re.M).group(1))
        assert port == local_server.DEFAULT_PORT == 8000  # the port the docs' dynamodb://127.0.0.1 URLs use
        assert f"endpoint URL:   http://127.0.0.1:{port}\n" in out
        assert f"data in {(tmp_path / 'data').resolve()}" in out

        # What closing the terminal does to the job that ran `local start`; the server lives on.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(starter.pid, signal.SIGHUP)
        status = _run("local", "status", env=env, cwd=tmp_path)
        assert status.returncode == 0
        assert f"dynamodb://127.0.0.1:{port}" in status.stdout
        client = boto3.client(
            "dynamodb",
            endpoint_url=f"http://127.0.0.1:{port}",
            region_name="us-east-1",
            aws_access_key_id="cli",
            aws_secret_access_key="cli",
        )
        assert client.list_tables()["TableNames"] == []

        again = _run("local", "start", env=env, cwd=tmp_path)
        assert again.returncode == 0
        assert f"dynamodb://127.0.0.1:{port}" in again.stdout
        elsewhere = _run("local", "start", "--port", str(local_server.free_port()), env=env, cwd=tmp_path)
        assert elsewhere.returncode == 2
        assert re.fullmatch(r"sa-dynamo: DynamoDB Local at .* is already running; .*\n", elsewhere.stderr)

        stopped = _run("local", "stop", env=env, cwd=tmp_path)
        assert (stopped.returncode, stopped.stdout) == (0, "stopped\n")
        assert _run("local", "status", env=env, cwd=tmp_path).returncode == 1
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        assert _run("local", "stop", env=env, cwd=tmp_path).stdout == "not running\n"
    finally:
        local_server.stop_detached()


def test_local_install_prints_the_directory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = local_server.install()
    monkeypatch.setenv(local_server.ENV_DIR, str(home))
    assert cli.main(["local", "install"]) == 0
    assert capsys.readouterr().out == f"{home}\n"


def test_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no java
    assert cli.main(["local", "start"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert re.fullmatch(r"sa-dynamo: Java 17 or newer is needed .*openjdk-17-jre\)\n", captured.err)


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["local"])
    assert exited.value.code == 2
    assert "ACTION" in capsys.readouterr().err


def test_explain_prints_the_plan_of_sql_text(endpoint_url, capsys, engine, table_name):
    from sqlalchemy import Column, MetaData, String, Table

    metadata = MetaData()
    Table(
        table_name, metadata, Column("pk", String, primary_key=True), Column("sk", String, primary_key=True)
    )
    metadata.create_all(engine)
    try:
        url = f"dynamodb://{endpoint_url.removeprefix('http://')}"
        assert (
            cli.main(["explain", url, f"SELECT sk FROM {table_name} WHERE pk = 'A' AND sk LIKE 'O#%'"]) == 0
        )
        out = capsys.readouterr().out
        assert "operation:     Query" in out
        assert (
            f'PartiQL:       SELECT "sk" FROM "{table_name}" WHERE "pk" = ? AND begins_with("sk", ?)' in out
        )
        assert cli.main(["explain", url, f"SELECT * FROM {table_name} GROUP BY sk"]) == 2
        assert "cannot express" in capsys.readouterr().err
    finally:
        metadata.drop_all(engine)


def test_explain_names_a_missing_table_in_one_line(endpoint_url, capsys):
    url = f"dynamodb://{endpoint_url.removeprefix('http://')}"
    assert cli.main(["explain", url, "SELECT * FROM no_such_table_xyz WHERE pk = 'A'"]) == 2
    assert capsys.readouterr() == (
        "",
        "sa-dynamo: table 'no_such_table_xyz' does not exist: create it first, or check the name (DynamoDB "
        "table names are case-sensitive)\n",
    )


EXPLAIN_MODELS = """
from sqlalchemy import Index
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "cli_orders_nowhere"
    __table_args__ = (Index("by_status", "status"),)
    customer: Mapped[str] = mapped_column(primary_key=True)
    order_id: Mapped[str] = mapped_column(primary_key=True)
    status: Mapped[str | None]
"""


@pytest.fixture(scope="module")
def explain_models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A models module for tables that exist nowhere, importable for the whole module (its
    classes are mapped once: the table may not be mapped twice)."""
    directory = tmp_path_factory.mktemp("explain_models")
    name = f"explain_models_{uuid.uuid4().hex[:8]}"
    (directory / f"{name}.py").write_text(EXPLAIN_MODELS)
    sys.path.insert(0, str(directory))
    yield name
    sys.path.remove(str(directory))
    sys.modules.pop(name).Base.registry.dispose()


def test_explain_against_the_models_reads_no_table(explain_models, capsys):
    """No server at all: the plan comes from the models (the engine's endpoint is a closed port,
    so a DescribeTable would have failed)."""
    sql = "SELECT order_id FROM cli_orders_nowhere WHERE status IN ('OPEN', 'PAID')"
    assert cli.main(["explain", "--models", f"{explain_models}:Base", sql]) == 0
    assert capsys.readouterr() == (
        "operation:     Query\n"
        "table:         cli_orders_nowhere\n"
        "index:         by_status\n"
        'key condition: "status" IN [?, ?]\n'
        "filter:        -\n"
        'PartiQL:       SELECT "order_id" FROM "cli_orders_nowhere"."by_status" WHERE "status" IN [?, ?]\n',
        "",
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--models", "{models}:Base", "SELECT * FROM cli_orders"],
            "table 'cli_orders' is not in the models of {models}:Base: check the name (table names are "
            "case-sensitive), or import the module that defines it",
        ),
        (
            ["--models", "{models}:Base", "dynamodb://127.0.0.1:9", "SELECT * FROM cli_orders_nowhere"],
            "give the database URL (the tables are read from DynamoDB) or --models MODULE:NAME (the tables "
            "are the models', nothing is read), not both",
        ),
        (
            ["SELECT * FROM cli_orders_nowhere"],
            "give the database URL, or --models MODULE:NAME to explain against the models",
        ),
        (
            ["--models", "{models}:Base", "SELECT * FROM cli_orders_nowhere GROUP BY status"],
            "DynamoDB PartiQL cannot express the literal column * in a SELECT computed on the client: name "
            "the columns of the tables (select(table) lists them all)",
        ),
    ],
)
def test_explain_against_the_models_fails_in_one_line(explain_models, capsys, args, error):
    args = [arg.format(models=explain_models) for arg in args]
    assert cli.main(["explain", *args]) == 2
    assert capsys.readouterr() == ("", f"sa-dynamo: {error.format(models=explain_models)}\n")


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"sa-dynamo {sa_dynamo.__version__}\n"
