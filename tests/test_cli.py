"""The `sa-dynamo` command: the installed entry point in subprocesses, main() in process."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

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
        assert cli.main(["explain", url, f"SELECT sk FROM {table_name} GROUP BY sk"]) == 2
        assert "cannot express" in capsys.readouterr().err
    finally:
        metadata.drop_all(engine)
