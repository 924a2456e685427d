"""What the connections of an engine share: one botocore session per AWS profile in the process,
and per set of connect arguments (an engine's) one route to DynamoDB: its credentials, endpoint,
retry rules and HTTP pool, or the botocore client that holds them.

A botocore session is some 29,000 objects that Python's garbage collector tracks (its loaded
models and configuration) and takes tens of milliseconds to build. Built for every connection,
a pool of 32 connections carried about a million tracked objects, and each full collection of
the process walked them all (issue 32). Connections whose arguments differ only in what does not
change the route (autocommit, hidden parameters) share one; another profile, region, key pair,
endpoint or client option makes another.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import astuple, dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from ..errors import translate

T = TypeVar("T")


class Session(NamedTuple):
    """A shared session: what clients are made with (boto3's session, or aiobotocore's), the
    botocore session under it (the same object for aiobotocore), and the lock to hold while
    making clients or credentials from it (botocore sessions are not thread-safe)."""

    main: Any
    core: Any
    lock: threading.Lock


_sessions: dict[tuple[Hashable, ...], Session] = {}
_sessions_lock = threading.Lock()


def session(profile_name: str | None, aio: bool = False) -> Session:
    """The process's session for a profile: boto3's, or aiobotocore's ``AioSession`` with
    ``aio``. A session reads the AWS configuration files once, so another ``AWS_CONFIG_FILE``
    or ``AWS_SHARED_CREDENTIALS_FILE`` gets another session."""
    key = (
        aio,
        profile_name or None,
        os.environ.get("AWS_CONFIG_FILE"),
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE"),
    )
    with _sessions_lock:
        found = _sessions.get(key)
        if found is None:
            try:
                found = _sessions[key] = _new_session(profile_name, aio)
            except Exception as exc:  # e.g. ProfileNotFound: a PEP 249 error that says so
                raise translate(exc) from None
    return found


def _new_session(profile_name: str | None, aio: bool) -> Session:
    if aio:
        from aiobotocore.session import AioSession

        made = AioSession(profile=profile_name or None)
        return Session(made, made, threading.Lock())
    import boto3
    import botocore.session

    core = botocore.session.get_session()
    return Session(
        boto3.session.Session(botocore_session=core, profile_name=profile_name or None),
        core,
        threading.Lock(),
    )


@dataclass(frozen=True)
class Destination:
    """connect()'s arguments that choose a route: where requests go and as whom."""

    endpoint_url: str | None
    region_name: str | None
    profile_name: str | None
    client_config: dict[str, Any] | None
    credentials: dict[str, Any]

    def key(self, *more: Any) -> Hashable:
        """A key for ``Shared`` made of these arguments (and ``more``, such as an event loop);
        one that cannot be a key (an unhashable option) makes a key of its own, shared with no
        other connection."""
        key = _frozen((*more, *astuple(self)))
        try:
            hash(key)
        except TypeError:
            return object()
        return key


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((name, _frozen(member)) for name, member in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(member) for member in value)
    return value


class Shared(Generic[T]):
    """Things made once per key and used by several connections: made for the first connection
    that asks (others asking meanwhile wait for it), handed to each, given back by each; once
    the last has given it back, it is dropped and the one who gave it back last closes it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._things: dict[Hashable, T] = {}
        self._users: Counter[Hashable] = Counter()
        self._making: dict[Hashable, threading.Lock] = {}

    def find(self, key: Hashable) -> T | None:
        """The thing for ``key`` if it is made, taken by one more user; never waits long."""
        with self._lock:
            thing = self._things.get(key)
            if thing is not None:
                self._users[key] += 1
            return thing

    def take(self, key: Hashable, make: Callable[[], T]) -> T:
        """The thing for ``key``, made by ``make()`` if there is none yet, taken by one more user."""
        thing = self.find(key)
        if thing is not None:
            return thing
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        with making:
            thing = self.find(key)
            if thing is not None:
                return thing
            thing = make()
            with self._lock:
                self._things[key] = thing
                self._users[key] += 1
                self._making.pop(key, None)
            return thing

    def put(self, key: Hashable, thing: T) -> T:
        """For a thing made without ``take`` (its making awaits, and a lock held across an await
        would stop the event loop): ``thing`` taken by its first user, or the one another user
        put meanwhile (then close ``thing``)."""
        with self._lock:
            thing = self._things.setdefault(key, thing)
            self._users[key] += 1
            return thing

    def give_back(self, key: Hashable) -> bool:
        """One user is done with the thing for ``key``: True when it was the last (close it)."""
        with self._lock:
            self._users[key] -= 1
            if self._users[key] > 0:
                return False
            del self._users[key]
            self._things.pop(key, None)
            return True

    def __len__(self) -> int:
        return len(self._things)
