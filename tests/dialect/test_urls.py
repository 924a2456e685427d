"""URLs to driver arguments: endpoints, IPv6 hosts, botocore options, and when
dynamodb+local:// starts its server."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine
from sqlalchemy.exc import ArgumentError

from sa_dynamo.dialect.local import DynamoDBLocalDialect


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("dynamodb://", {}),
        ("dynamodb://127.0.0.1:8000", {"endpoint_url": "http://127.0.0.1:8000"}),
        ("dynamodb://[::1]:8001", {"endpoint_url": "http://[::1]:8001"}),
        (
            "dynamodb://?region_name=eu-west-1&profile_name=dev",
            {"region_name": "eu-west-1", "profile_name": "dev"},
        ),
        ("dynamodb://?transport=botocore", {"transport": "botocore"}),
        ("dynamodb+local://?transport=http", {"local_data_dir": None, "transport": "http"}),
        (
            "dynamodb://localhost:9?retry_mode=standard&max_attempts=7&read_timeout=2.5",
            {
                "endpoint_url": "http://localhost:9",
                "client_config": {
                    "retries": {"mode": "standard", "total_max_attempts": 7},
                    "read_timeout": 2.5,
                },
            },
        ),
    ],
)
def test_connect_arguments(url, expected):
    engine = create_engine(url)
    assert engine.dialect.create_connect_args(engine.url) == ([], expected)


def test_unknown_url_parameters_are_refused_naming_the_one_meant():
    with pytest.raises(
        ArgumentError, match=r"unknown URL parameter\(s\) region: write region_name= for region=;"
    ):
        create_engine("dynamodb://?region=x")
    with pytest.raises(
        ArgumentError, match=r"unknown URL parameter\(s\) zone: dynamodb:// accepts region_name,"
    ):
        create_engine("dynamodb://?zone=x")


def test_local_url_starts_nothing_until_the_first_connect(monkeypatch):
    started = []
    monkeypatch.setattr(DynamoDBLocalDialect, "_servers", {})
    monkeypatch.delenv("SA_DYNAMO_LOCAL_ENDPOINT", raising=False)
    monkeypatch.setattr("sa_dynamo.local_server.start", lambda data_dir=None: started.append(data_dir))
    engine = create_engine("dynamodb+local://?data_dir=/tmp/x")
    assert engine.dialect.create_connect_args(engine.url) == ([], {"local_data_dir": "/tmp/x"})
    assert started == []


@pytest.mark.parametrize("url", ["dynamodb+local://", "dynamodb://127.0.0.1:1"])
@pytest.mark.parametrize("argument", [{"check_same_thread": False}, {"detect_types": 1}])
def test_sqlite_connect_args_are_refused_by_name(dynamodb_local, url, argument):
    """SQLite tutorials pass check_same_thread; the driver would fail in boto3 with a TypeError
    that names no connect_args. Refused before any request (port 1 serves nothing)."""
    ((name, _),) = argument.items()
    engine = create_engine(url, connect_args=argument)
    with pytest.raises(ArgumentError, match=rf"^{name} is SQLite's; drop it from connect_args \("):
        engine.connect()
