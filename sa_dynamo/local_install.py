"""The pinned DynamoDB Local on this machine: fetched once from the npm package
``amplify-dynamodb-simulator`` with the ordinary npm client, its jar's checksum verified, cached
outside any repository (``SA_DYNAMO_LOCAL_DIR`` points at an existing DynamoDB Local instead),
and our loopback launcher class compiled against it. local_server.py runs it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .exc import LocalError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, concurrent installs and starts are not serialised
    fcntl = None

NPM_PACKAGE = "amplify-dynamodb-simulator"
NPM_VERSION = "2.9.30"
JAR_SHA256 = "454305e9bc3e6ebcca5b62569869e31563b8d7e346474e94557b2600702146c7"
DYNAMODB_LOCAL_VERSION = "1.25.1"
ENV_DIR = "SA_DYNAMO_LOCAL_DIR"
LAUNCHER = Path(__file__).with_name("LoopbackDynamoDBLocal.java")
# The launcher class runs on Java 11 or newer, whichever JDK compiled it.
_LAUNCHER_RELEASE = "11"


def cache_dir() -> Path:
    """Where the emulator is cached: the user cache directory, never the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sa_dynamo"


@contextlib.contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """Hold an exclusive lock in the cache directory: two shells or test workers may install or
    start at the same moment."""
    path = cache_dir() / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


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
    with cache_lock("install"):
        if not force and _is_complete(target) and _sha256(target / "DynamoDBLocal.jar") == JAR_SHA256:
            return target
        _fetch(target)
    return target


def _fetch(target: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise LocalError(
            "npm is needed once to fetch DynamoDB Local: install Node.js/npm, or set "
            f"{ENV_DIR} to an unpacked DynamoDB Local directory"
        )
    spec = f"{NPM_PACKAGE}@{NPM_VERSION}"
    # Unpacked next to the target, so the final rename stays on one file system.
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        done = subprocess.run(
            [npm, "pack", spec, "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        tgz = next(Path(tmp).glob("*.tgz"), None)
        if done.returncode != 0 or tgz is None:
            raise LocalError(f"`npm pack {spec}` failed: {done.stderr.strip()[-800:] or 'no tarball'}")
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tgz) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith("package/emulator/")]
            archive.extractall(unpacked, members=members, filter="data")
        emulator = unpacked / "package" / "emulator"
        jar = emulator / "DynamoDBLocal.jar"
        actual = _sha256(jar) if jar.is_file() else "(no DynamoDBLocal.jar)"
        if actual != JAR_SHA256:
            raise LocalError(
                f"DynamoDBLocal.jar from {spec} has sha256 {actual}, expected {JAR_SHA256}; "
                "refusing to run it (clear the npm cache and retry, or report it)"
            )
        if target.exists():
            shutil.rmtree(target)
        emulator.rename(target)


def java() -> str:
    java = shutil.which("java")
    if java is None:
        raise LocalError(
            "Java 17 or newer is needed to run DynamoDB Local: install a JRE (e.g. openjdk-17-jre)"
        )
    return java


def classpath(home: Path, *directories: Path) -> str:
    jars = [home / "DynamoDBLocal.jar", home / "DynamoDBLocal_lib" / "*"]
    return os.pathsep.join(str(entry) for entry in [*directories, *jars])


def launcher(home: Path) -> Path:
    """The directory holding our compiled launcher class, compiled against ``home`` on first use.

    Compiled once and cached, not run in source-file mode: that mode needs the jdk.compiler
    module, which Java runtime images (JRE containers, jlink builds) often lack, whereas the
    compiled class runs on any of them."""
    source = LAUNCHER.read_bytes()
    directory = cache_dir() / f"launcher-{hashlib.sha256(source).hexdigest()[:16]}"
    with cache_lock("launcher"):
        if (directory / f"{LAUNCHER.stem}.class").is_file():
            return directory
        javac = shutil.which("javac")
        # Without javac, the runtime may still hold the compiler as a module (Debian's JREs do).
        compiler = [javac] if javac else [java(), "--module", "jdk.compiler/com.sun.tools.javac.Main"]
        with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
            classes = Path(tmp) / "classes"
            options = ["--release", _LAUNCHER_RELEASE, "-cp", classpath(home), "-d", str(classes)]
            # The JVM reports a missing module on stdout, javac its errors on stderr.
            done = subprocess.run(
                [*compiler, *options, str(LAUNCHER)],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            if done.returncode != 0 and javac is None and "Module jdk.compiler not found" in done.stdout:
                raise LocalError(
                    f"{compiler[0]} cannot compile sa_dynamo's DynamoDB Local launcher: this Java "
                    "runtime has no jdk.compiler module and no javac is on PATH. Install a JDK once "
                    "(e.g. openjdk-17-jdk-headless) or put its javac on PATH, and run "
                    f"`sa-dynamo local install`: the compiled launcher is cached in {cache_dir()} "
                    "and then runs on this runtime"
                )
            if done.returncode != 0:
                raise LocalError(f"compiling {LAUNCHER.name} failed:\n{done.stdout.strip()[-2000:]}")
            if directory.exists():
                shutil.rmtree(directory)
            classes.rename(directory)
    return directory
