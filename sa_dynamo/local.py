"""DynamoDB Local manager: obtain the pinned emulator, start it on a free loopback port, stop it.

DynamoDB Local ships inside the npm package ``amplify-dynamodb-simulator``; we fetch that package
with the ordinary npm client, verify the jar's checksum and cache the emulator outside any
repository. ``SA_DYNAMO_LOCAL_DIR`` points at an existing DynamoDB Local directory instead.
The server is launched through a small Java source file that binds its HTTP connector to
127.0.0.1 only; the stock launcher listens on every interface.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

NPM_PACKAGE = "amplify-dynamodb-simulator"
NPM_VERSION = "2.9.30"
JAR_SHA256 = "454305e9bc3e6ebcca5b62569869e31563b8d7e346474e94557b2600702146c7"
DYNAMODB_LOCAL_VERSION = "1.25.1"
ENV_DIR = "SA_DYNAMO_LOCAL_DIR"
# A running DynamoDB Local that `dynamodb+local://` should use instead of starting its own.
ENV_ENDPOINT = "SA_DYNAMO_LOCAL_ENDPOINT"
LOOPBACK = "127.0.0.1"
_LAUNCHER = Path(__file__).with_name("LoopbackDynamoDBLocal.java")
_STATE_FILE = "sa-dynamo-local.json"


class LocalError(RuntimeError):
    """DynamoDB Local could not be installed or started; the message says what to do."""


def cache_dir() -> Path:
    """Where the emulator is cached: the user cache directory, never the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sa_dynamo"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _is_complete(directory: Path) -> bool:
    return (directory / "DynamoDBLocal.jar").is_file() and (directory / "DynamoDBLocal_lib").is_dir()


def install(force: bool = False) -> Path:
    """Return the DynamoDB Local directory, fetching and verifying it on first use."""
    override = os.environ.get(ENV_DIR)
    if override:
        directory = Path(override).expanduser()
        if not _is_complete(directory):
            raise LocalError(
                f"{ENV_DIR}={override} does not contain DynamoDBLocal.jar and DynamoDBLocal_lib/; "
                f"point it at an unpacked DynamoDB Local or unset it to let sa_dynamo fetch one"
            )
        return directory
    target = cache_dir() / f"dynamodb-local-{DYNAMODB_LOCAL_VERSION}"
    if not force and _is_complete(target) and _sha256(target / "DynamoDBLocal.jar") == JAR_SHA256:
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise LocalError(
            "npm is needed once to fetch DynamoDB Local: install Node.js/npm, or set "
            f"{ENV_DIR} to an unpacked DynamoDB Local directory"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        spec = f"{NPM_PACKAGE}@{NPM_VERSION}"
        done = subprocess.run(
            [npm, "pack", spec, "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        if done.returncode != 0:
            raise LocalError(f"`npm pack {spec}` failed: {done.stderr.strip()[-800:]}")
        tgz = next(Path(tmp).glob("*.tgz"))
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tgz) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith("package/emulator/")]
            archive.extractall(unpacked, members=members, filter="data")
        emulator = unpacked / "package" / "emulator"
        actual = _sha256(emulator / "DynamoDBLocal.jar")
        if actual != JAR_SHA256:
            raise LocalError(
                f"DynamoDBLocal.jar from {spec} has sha256 {actual}, expected {JAR_SHA256}; "
                "refusing to run it (clear the npm cache and retry, or report it)"
            )
        if target.exists():
            shutil.rmtree(target)
        emulator.rename(target)
    return target


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _answers(endpoint_url: str) -> bool:
    # Any HTTP answer, even an error status, proves the server is up.
    try:
        urllib.request.urlopen(endpoint_url, timeout=1).close()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


@dataclass
class LocalDynamoDB:
    """A running DynamoDB Local process on 127.0.0.1."""

    port: int
    process: subprocess.Popen | None
    data_dir: Path | None = None
    pid: int = field(default=0)

    @property
    def endpoint_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def stop(self) -> None:
        """Stop the server; safe to call twice."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=10)
            self.process = None
        elif self.pid:
            _terminate_pid(self.pid)
            self.pid = 0


def _terminate_pid(pid: int) -> None:
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)


def start(
    port: int | None = None,
    data_dir: str | os.PathLike | None = None,
    stop_at_exit: bool = True,
    timeout: float = 60.0,
) -> LocalDynamoDB:
    """Start DynamoDB Local on 127.0.0.1 (in memory unless ``data_dir`` is given) and wait for it."""
    java = shutil.which("java")
    if java is None:
        raise LocalError("Java 17 or newer is needed to run DynamoDB Local: install a JRE (e.g. openjdk-17-jre)")
    home = install()
    port = port or free_port()
    args = [
        java,
        f"-Djava.library.path={home / 'DynamoDBLocal_lib'}",
        "-cp",
        os.pathsep.join([str(home / "DynamoDBLocal.jar"), str(home / "DynamoDBLocal_lib" / "*")]),
        str(_LAUNCHER),
        "-port",
        str(port),
        "-disableTelemetry",
    ]
    directory = None
    if data_dir is None:
        args.append("-inMemory")
    else:
        directory = Path(data_dir).expanduser().resolve()
        directory.mkdir(parents=True, exist_ok=True)
        args += ["-dbPath", str(directory)]
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(args, cwd=home, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LocalDynamoDB(port=port, process=process, data_dir=directory, pid=process.pid)
    deadline = time.monotonic() + timeout
    while not _answers(server.endpoint_url):
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            log.seek(0)
            output = log.read().decode(errors="replace")[-2000:]
            raise LocalError(f"DynamoDB Local did not start on port {port}:\n{output}")
        time.sleep(0.2)
    if stop_at_exit:
        atexit.register(server.stop)
    return server


def _state_path() -> Path:
    return cache_dir() / _STATE_FILE


def start_detached(port: int | None = None, data_dir: str | None = None) -> LocalDynamoDB:
    """Start a server that outlives this process (for `sa-dynamo local start`)."""
    running = status()
    if running is not None:
        return running
    server = start(port=port, data_dir=data_dir, stop_at_exit=False)
    _state_path().write_text(json.dumps({"pid": server.pid, "port": server.port}))
    return server


def status() -> LocalDynamoDB | None:
    """The server started by `sa-dynamo local start`, if it still answers."""
    path = _state_path()
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    server = LocalDynamoDB(port=state["port"], process=None, pid=state["pid"])
    if _answers(server.endpoint_url):
        return server
    path.unlink()
    return None


def stop_detached() -> bool:
    """Stop the server started by `sa-dynamo local start`; False if none was running."""
    server = status()
    if server is None:
        return False
    server.stop()
    _state_path().unlink(missing_ok=True)
    return True
