"""The URL's ACCESS_KEY_ID:SECRET_ACCESS_KEY@ is the client's key pair, and the client options of
the URL are checked at create_engine(): errors name the parameter and what it accepts."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, inspect
from sqlalchemy.exc import ArgumentError, OperationalError
from support.signatures import signed_by

from sa_dynamo.dbapi.transport import TRANSPORTS

KEY_ID = "AKIDEXAMPLE"
# Shaped like an AWS secret access key: letters, digits, / and +.
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE+KEY"


def _connect_args(url: str) -> dict:
    engine = create_engine(url)
    cargs, cparams = engine.dialect.create_connect_args(engine.url)
    assert cargs == []
    return cparams


@pytest.mark.parametrize(
    ("written", "secret"),
    [
        (quote(SECRET, safe=""), SECRET),
        (SECRET, SECRET),  # / and + need no encoding
        ("a%2Fb%2Bc%3Dd%40e%25f%3Ag%3Fh", "a/b+c=d@e%f:g?h"),
    ],
    ids=["encoded", "as-is", "every-special-character"],
)
def test_user_and_password_are_the_access_key_pair_url_decoded(written: str, secret: str) -> None:
    assert _connect_args(f"dynamodb://AKID%45XAMPLE:{written}@127.0.0.1:8000?region_name=eu-west-1") == {
        "endpoint_url": "http://127.0.0.1:8000",
        "region_name": "eu-west-1",
        "aws_access_key_id": KEY_ID,
        "aws_secret_access_key": secret,
    }


def test_credentials_without_a_host_use_the_aws_endpoint() -> None:
    assert _connect_args(f"dynamodb://{KEY_ID}:{quote(SECRET, safe='')}@") == {
        "aws_access_key_id": KEY_ID,
        "aws_secret_access_key": SECRET,
    }


def test_the_embedded_server_takes_credentials_too() -> None:
    assert _connect_args(f"dynamodb+local://{KEY_ID}:{quote(SECRET, safe='')}@?data_dir=/tmp/x") == {
        "local_data_dir": "/tmp/x",
        "aws_access_key_id": KEY_ID,
        "aws_secret_access_key": SECRET,
    }


def test_the_embedded_server_takes_no_host() -> None:
    with pytest.raises(ArgumentError, match=r"takes no HOST:PORT: write dynamodb://HOST:PORT"):
        create_engine("dynamodb+local://127.0.0.1:8000")


HALF_CREDENTIALS = [
    (f"dynamodb://{KEY_ID}@127.0.0.1:8000", "an access key id but no secret access key"),
    (f"dynamodb://{KEY_ID}:@127.0.0.1:8000", "an access key id but no secret access key"),
    ("dynamodb://:s3cretMARKER@127.0.0.1:8000", "a secret access key but no access key id"),
    ("dynamodb+local://:s3cretMARKER@", "a secret access key but no access key id"),
]


@pytest.mark.parametrize(("url", "missing"), HALF_CREDENTIALS)
def test_half_a_key_pair_says_what_to_write(url: str, missing: str) -> None:
    with pytest.raises(ArgumentError) as refused:
        create_engine(url)
    assert str(refused.value) == (
        f"the URL has {missing}: write dynamodb://ACCESS_KEY_ID:SECRET_ACCESS_KEY@HOST:PORT, or "
        "leave out both to use the AWS credential chain"
    )


def test_an_unencoded_at_sign_in_the_secret_is_refused_without_showing_it() -> None:
    with pytest.raises(ArgumentError, match=r"contains '@'.*must be written URL-encoded, as %40") as refused:
        create_engine(f"dynamodb://{KEY_ID}:s3cret@MARKER@127.0.0.1:8000")
    assert "s3cret" not in str(refused.value)
    assert "MARKER" not in str(refused.value)


BAD_OPTIONS = [
    ("max_attempts", "abc", "a whole number of attempts, 1 or more (the first attempt included)"),
    ("max_attempts", "0", "a whole number of attempts, 1 or more (the first attempt included)"),
    ("max_attempts", "2.5", "a whole number of attempts, 1 or more (the first attempt included)"),
    ("connect_timeout", "abc", "a number of seconds greater than 0, such as 5 or 0.5"),
    ("connect_timeout", "0", "a number of seconds greater than 0, such as 5 or 0.5"),
    ("read_timeout", "-1", "a number of seconds greater than 0, such as 5 or 0.5"),
    ("read_timeout", "nan", "a number of seconds greater than 0, such as 5 or 0.5"),
    ("read_timeout", "inf", "a number of seconds greater than 0, such as 5 or 0.5"),
    ("retry_mode", "fast", "one of legacy, standard, adaptive"),
    ("transport", "urllib3", "one of http, botocore"),
]


@pytest.mark.parametrize(("name", "value", "accepted"), BAD_OPTIONS)
def test_a_bad_client_option_names_the_parameter_and_what_it_accepts(name, value, accepted) -> None:
    with pytest.raises(ArgumentError) as refused:
        create_engine(f"dynamodb://127.0.0.1:8000?{name}={value}")
    assert str(refused.value) == f"{name} must be {accepted}, not {value!r}"


def test_a_parameter_given_twice_is_refused() -> None:
    with pytest.raises(ArgumentError, match=r"^URL parameter\(s\) max_attempts given more than once"):
        create_engine("dynamodb://?max_attempts=1&max_attempts=2")


def test_good_client_options_pass() -> None:
    assert _connect_args(
        "dynamodb://?retry_mode=adaptive&max_attempts=3&connect_timeout=0.5&read_timeout=7"
    ) == {
        "client_config": {
            "retries": {"mode": "adaptive", "total_max_attempts": 3},
            "connect_timeout": 0.5,
            "read_timeout": 7.0,
        }
    }


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_url_key_pair_signs_the_requests(proxy, transport: str) -> None:
    """Every request that reaches the proxy carries the signature of the URL's key pair."""
    engine = create_engine(
        f"dynamodb://{KEY_ID}:{quote(SECRET, safe='')}@127.0.0.1:{proxy.port}?transport={transport}"
    )
    try:
        assert isinstance(inspect(engine).get_table_names(), list)
    finally:
        engine.dispose()
    assert proxy.received
    for _, headers, body in proxy.received:
        assert signed_by(f"{proxy.endpoint_url}/", headers, body, KEY_ID, SECRET, "us-east-1")
    assert not signed_by(f"{proxy.endpoint_url}/", headers, body, KEY_ID, SECRET + "x", "us-east-1")


def test_dynamodb_local_checks_the_url_key(endpoint_url: str) -> None:
    """DynamoDB Local refuses an access key id other than letters and digits, so this fails only
    if the URL's key is sent (sa_dynamo's placeholder key would be accepted)."""
    host = endpoint_url.removeprefix("http://")
    engine = create_engine(f"dynamodb://not-a-key:{quote(SECRET, safe='')}@{host}?max_attempts=1")
    try:
        with pytest.raises(OperationalError, match="The Access Key ID or security token is invalid"):
            inspect(engine).get_table_names()
    finally:
        engine.dispose()
