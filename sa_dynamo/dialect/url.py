"""``dynamodb://`` URLs -> the driver's connect arguments: endpoint, region, profile, credentials
(``KEY:SECRET@``), the transport and botocore's client options, each checked with an error that
says what to write."""

from __future__ import annotations

import difflib
import math
from typing import Any

from sqlalchemy.exc import ArgumentError

from ..dbapi.transport import TRANSPORTS

# URL parameters that configure botocore's client: retries and timeouts.
CLIENT_OPTIONS = ("retry_mode", "max_attempts", "connect_timeout", "read_timeout")
RETRY_MODES = ("legacy", "standard", "adaptive")
_URL_FORM = "dynamodb://ACCESS_KEY_ID:SECRET_ACCESS_KEY@HOST:PORT"


def credentials_of(url: Any) -> dict[str, str]:
    """``ACCESS_KEY_ID:SECRET_ACCESS_KEY@`` of the URL (SQLAlchemy has URL-decoded both) as the
    client's access key pair; none, and the AWS credential chain applies. No message here shows
    the URL: it would carry the secret."""
    if url.host is not None and "@" in url.host:
        raise ArgumentError(
            "the URL's host contains '@': a secret access key that contains @ must be written "
            f"URL-encoded, as %40 (urllib.parse.quote(secret, safe='') encodes it), in {_URL_FORM}"
        )
    if not url.username and url.password is None:
        return {}
    if not url.password:
        raise ArgumentError(
            f"the URL has an access key id but no secret access key: write {_URL_FORM}, or leave "
            "out both to use the AWS credential chain"
        )
    if not url.username:
        raise ArgumentError(
            f"the URL has a secret access key but no access key id: write {_URL_FORM}, or leave "
            "out both to use the AWS credential chain"
        )
    return {"aws_access_key_id": url.username, "aws_secret_access_key": url.password}


def no_database(url: Any) -> None:
    """Refuse a path in the URL (``dynamodb://host/mydb``): DynamoDB has no databases to pick,
    and a path silently ignored would hide a URL meant for something else."""
    if url.database:
        raise ArgumentError(
            f"{url.drivername}:// URLs take no database, but this one names {url.database!r}: DynamoDB "
            "has tables only, per account and region; remove the path (pick a region with "
            "?region_name=..., keep dynamodb+local:// data with ?data_dir=PATH)"
        )


def transport_of(query: dict[str, Any]) -> dict[str, str]:
    """``?transport=`` as the driver's ``transport`` argument, checked at create_engine()."""
    if "transport" not in query:
        return {}
    name = query.pop("transport")
    if name not in TRANSPORTS:
        raise ArgumentError(f"transport must be one of {', '.join(TRANSPORTS)}, not {name!r}")
    return {"transport": name}


def _whole_number(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ArgumentError(
            f"{name} must be a whole number of attempts, 1 or more (the first attempt included), not {text!r}"
        )
    return value


def _seconds(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise ArgumentError(
            f"{name} must be a number of seconds greater than 0, such as 5 or 0.5, not {text!r}"
        )
    return value


def _with_client_config(query: dict[str, Any]) -> dict[str, Any]:
    """Move botocore options out of the URL query into the driver's client_config, checked here
    so that a typo fails at create_engine() with the parameter's name, not at the first connect."""
    config: dict[str, Any] = {}
    retries = {}
    if "retry_mode" in query:
        retries["mode"] = query.pop("retry_mode")
        if retries["mode"] not in RETRY_MODES:
            raise ArgumentError(
                f"retry_mode must be one of {', '.join(RETRY_MODES)}, not {retries['mode']!r}"
            )
    if "max_attempts" in query:  # attempts in all, the first included (botocore's total_max_attempts)
        retries["total_max_attempts"] = _whole_number("max_attempts", query.pop("max_attempts"))
    if retries:
        config["retries"] = retries
    for name in ("connect_timeout", "read_timeout"):
        if name in query:
            config[name] = _seconds(name, query.pop(name))
    if config:
        query["client_config"] = config
    return query


# sqlite3.connect()'s own keywords, which tutorials written for SQLite pass in connect_args.
SQLITE_ARGUMENTS = ("check_same_thread", "detect_types", "cached_statements", "uri", "factory")


def no_sqlite_arguments(cparams: dict[str, Any]) -> None:
    """Refuse a SQLite-only connect argument by name (the driver would fail with a TypeError
    from deep inside boto3, naming none of it)."""
    for name in SQLITE_ARGUMENTS:
        if name in cparams:
            raise ArgumentError(
                f"{name} is SQLite's; drop it from connect_args (a DynamoDB engine takes none of "
                "sqlite3.connect()'s arguments and needs no such setting for threads)"
            )


def connect_args(url: Any) -> tuple[list, dict[str, Any]]:
    """``create_connect_args`` of ``dynamodb://``: the boto3 client's settings from the URL."""
    query = dict(url.query)
    accepted = ("region_name", "endpoint_url", "profile_name", "transport", *CLIENT_OPTIONS)
    unknown = sorted(set(query) - set(accepted))
    if unknown:
        meant = [
            f"{name}= for {given}="
            for given in unknown
            for name in difflib.get_close_matches(given, accepted, 1)
        ]
        raise ArgumentError(
            f"unknown URL parameter(s) {', '.join(unknown)}: "
            + (f"write {', '.join(meant)}; " if meant else "")
            + f"dynamodb:// accepts {', '.join(accepted)}"
        )
    repeated = sorted(name for name, value in query.items() if isinstance(value, tuple))
    if repeated:
        raise ArgumentError(f"URL parameter(s) {', '.join(repeated)} given more than once: give each once")
    no_database(url)
    credentials = credentials_of(url)
    if url.host and "endpoint_url" not in query:
        host = f"[{url.host}]" if ":" in url.host else url.host  # an IPv6 address
        query["endpoint_url"] = f"http://{host}:{url.port or 8000}"
    transport = transport_of(query)
    return [], {**_with_client_config(query), **transport, **credentials}
