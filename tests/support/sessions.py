"""What a pool of connections costs (the botocore sessions made, the objects Python's garbage
collector tracks: issue 32), and credentials that change under it."""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
import pytest

from sa_dynamo.dbapi.transport import shared
from support.faultproxy import FaultProxy

# A connection of an engine whose route is made: SQLAlchemy's pool records and the driver's
# Connection, buffer and transport (issue 32: "a few hundred tracked objects").
MOST_TRACKED_PER_CONNECTION = 1_000


@pytest.fixture
def sessions_made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The botocore sessions (aiobotocore's among them) made from now on; the process's shared
    sessions are forgotten first."""
    monkeypatch.setattr(shared, "_sessions", {})
    made: list[Any] = []
    original = botocore.session.Session.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(botocore.session.Session, "__init__", counted)
    return made


@dataclass
class Tracked:
    added: int = 0


@contextmanager
def tracked_objects() -> Iterator[Tracked]:
    """How many more objects the garbage collector tracks after the block than before it."""
    gc.collect()
    before = len(gc.get_objects())
    tracked = Tracked()
    yield tracked
    gc.collect()
    tracked.added = len(gc.get_objects()) - before


CREDENTIAL_PROCESS = """\
import datetime, json, pathlib
counter = pathlib.Path(__file__).with_suffix(".count")
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
# Due within botocore's mandatory refresh window: every use refreshes them.
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
print(json.dumps({"Version": 1, "AccessKeyId": f"KEY{n}", "SecretAccessKey": "s", "Expiration": expires.isoformat()}))
"""


@pytest.fixture
def rotating_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A profile whose credentials (from a credential_process) expire at once and come back with
    a new key each time: KEY1, KEY2, ..."""
    script = tmp_path / "rotate.py"
    script.write_text(CREDENTIAL_PROCESS)
    config = tmp_path / "config"
    config.write_text(f"[profile rotating]\ncredential_process = {sys.executable} {script}\n")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return "rotating"


def keys_received(proxy: FaultProxy) -> list[int]:
    """The number of the key that signed each request the proxy received."""
    return [
        int(re.search(r"Credential=KEY(\d+)/", headers["Authorization"])[1])
        for _, headers, _ in proxy.received
    ]
