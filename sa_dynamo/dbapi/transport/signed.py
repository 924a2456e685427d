"""DynamoDB's JSON API as the driver sends it itself, all but the I/O: each request encoded by
the driver (wire.py), signed as botocore's ``SigV4Auth`` signs (sigv4.py, the same headers for a
tenth of the CPU) with the credentials of a botocore session (frozen for every attempt, so that
refreshing credentials keep working), sent to the endpoint and region botocore resolves for
the same arguments, retried as botocore's own retry handlers decide (retries.py), and answered as
botocore's client answers: the same dicts (botocore's parser reads all but a page's Items), the
same ``ClientError`` (code, message, HTTP status, request id, CancellationReasons), the same
exceptions for lost connections and time-outs.

What botocore's client adds per request and this leaves out: its event system but for the two
retry events (the hooks of tracing libraries and test doubles: use ``transport="botocore"`` for
those), parameter
validation (unless ``client_config`` asks for it), the endpoint rule set evaluated per request
(the endpoint is resolved once per engine), and its header objects beyond the signer's.

The sync transport (http.py) and the asyncio one (asyncio_http.py) differ only in their
connections (http_pool.py, asyncio_pool.py: one HTTP request and its answer), ``pause`` and how
credentials are refreshed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from botocore.credentials import Credentials
from botocore.exceptions import ClientError, HTTPClientError, ParamValidationError
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.httpsession import get_cert_path
from botocore.parsers import create_parser
from botocore.utils import get_environ_proxies
from botocore.validate import ParamValidator

from ..errors import NotSupportedError
from . import LOST_ANSWERS, shared, sigv4, wire
from .base import Sending
from .botocore import client
from .retries import Answered, Retries, refused

log = logging.getLogger("sa_dynamo.dbapi")

TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"

# The botocore Config options the driver's HTTP transports honour (botocore resolves each into
# the engine's route); any other needs botocore's own client: transport="botocore".
HONOURED_OPTIONS = frozenset(
    {
        "region_name",
        "connect_timeout",
        "read_timeout",
        "retries",
        "proxies",
        "max_pool_connections",
        "parameter_validation",
        "user_agent",
        "user_agent_extra",
        "use_fips_endpoint",
        "use_dualstack_endpoint",
    }
)


class Route:
    """What every connection of an engine shares on the HTTP transports: the endpoint and region
    botocore resolved, the credentials that sign, the retry rules, and the pool of connections
    (``pool``: an ``HTTPPool`` or ``AsyncHTTPPool``, made with the timeouts, proxy and pool size
    botocore resolved)."""

    def __init__(
        self,
        resolved: Any,
        validating: bool,
        credentials: Any,
        ca_bundle: str | bool,
        pool: Callable[..., Any],
    ):
        meta = resolved.meta
        config = meta.config
        endpoint_url: str = meta.endpoint_url
        self.region: str = meta.region_name
        self.where = f"in region {self.region} at {endpoint_url}"
        self.url = endpoint_url.rstrip("/") + "/"
        self.credentials = credentials
        self.retries = Retries(resolved)
        self.user_agent: str = config.user_agent  # botocore's, its extras appended
        self._service = meta.service_model
        self._validator = ParamValidator() if validating else None
        self._parser = create_parser("json")
        proxies = config.proxies or get_environ_proxies(endpoint_url)
        proxy = proxies.get(urlsplit(endpoint_url).scheme)
        self.pool: Any = pool(
            self.url,
            config.max_pool_connections,
            config.connect_timeout,
            config.read_timeout,
            proxy,
            ca_bundle,
        )

    def encode(self, operation: str, body: dict[str, Any]) -> bytes:
        """The request's JSON, checked against DynamoDB's API first if the engine's botocore
        options ask for parameter validation."""
        if self._validator is not None:
            report = self._validator.validate(body, self._service.operation_model(operation).input_shape)
            if report.has_errors():
                raise ParamValidationError(report=report.generate_report())
        try:
            return wire.encode(body)
        except TypeError as exc:
            raise ParamValidationError(report=f"{operation}: {exc}") from None

    def headers(self, operation: str, payload: bytes, frozen: Any) -> dict[str, str]:
        """The headers of one attempt, signed (SigV4) with the ``frozen`` credentials."""
        fields = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET_PREFIX + operation}
        signed = sigv4.sign(self.url, fields, payload, frozen, self.region)
        signed["User-Agent"] = self.user_agent  # a header SigV4 leaves unsigned
        return signed

    def answer(
        self, operation: str, status: int, headers: Any, body: bytes, wire_items: bool, attempt: int
    ) -> dict[str, Any] | Exception:
        """The answer to attempt number ``attempt`` as botocore's client returns it, or the
        botocore exception it would raise (a ClientError, a ChecksumError); ``wire_items``: an
        ExecuteStatement page's Items stay DynamoDB's JSON (``WIRE_ITEMS``)."""
        corrupted = wire.checksum_failure(headers, body)
        if corrupted is not None:
            return corrupted
        if status == 200 and wire_items and operation == "ExecuteStatement":
            page = wire.read_page(body)
            if page is not None:
                answer, rest = page
                if rest is None:
                    answer["ResponseMetadata"] = _metadata(status, headers, attempt)
                    return answer
                body = wire.encode(rest)
                answer.update(self._parse(operation, status, headers, body, attempt))
                return answer
        parsed = self._parse(operation, status, headers, body, attempt)
        if status < 300:
            return parsed
        error_shape = self._service.shape_for_error_code(parsed.get("Error", {}).get("Code"))
        if error_shape is not None:  # what botocore's endpoint adds: CancellationReasons, ...
            modeled = self._parser.parse(
                {"status_code": status, "headers": headers, "body": body}, error_shape
            )
            parsed.update(modeled)
        return ClientError(parsed, operation)

    def _parse(self, operation: str, status: int, headers: Any, body: bytes, attempt: int) -> dict[str, Any]:
        shape = self._service.operation_model(operation).output_shape
        parsed = self._parser.parse({"status_code": status, "headers": headers, "body": body}, shape)
        parsed["ResponseMetadata"]["RetryAttempts"] = attempt - 1
        return parsed


def _metadata(status: int, headers: Any, attempt: int) -> dict[str, Any]:
    """The ResponseMetadata botocore gives an answer."""
    return {
        "RequestId": headers.get("x-amzn-requestid", ""),
        "HTTPStatusCode": status,
        "HTTPHeaders": {name.lower(): value for name, value in headers.items()},
        "RetryAttempts": attempt - 1,
    }


def route(to: shared.Destination, pool: Callable[..., Any]) -> Route:
    """A new route for connect()'s arguments: the endpoint, region, retries, timeouts, proxies
    and pool size are those of the botocore client the same arguments would make (made once,
    to ask, and dropped), the credentials the arguments' key pair or the session's chain;
    its connections a ``pool`` (the class) of them."""
    refused = sorted(
        name
        for name, value in (to.client_config or {}).items()
        if name not in HONOURED_OPTIONS and value is not None
    )
    if refused:
        raise NotSupportedError(
            f"client_config option(s) {', '.join(refused)} are honoured by botocore's client only: "
            "connect with transport='botocore' (?transport=botocore in the URL) to use them"
        )
    session = shared.session(to.profile_name)
    with session.lock:
        resolved, validating, credentials = client(session, to)
        if credentials:
            signing = Credentials(
                credentials["aws_access_key_id"],
                credentials["aws_secret_access_key"],
                credentials.get("aws_session_token"),
            )
        else:
            signing = session.core.get_credentials()
    ca_bundle = session.core.get_config_variable("ca_bundle") or os.environ.get("REQUESTS_CA_BUNDLE", True)
    made = Route(resolved, validating, signing, get_cert_path(ca_bundle), pool)
    resolved.close()
    return made


class SignedTransport(Sending):
    """A connection's transport on its engine's route; subclasses do the I/O."""

    def __init__(self, route: Route, give_back: Any, first_request: Any = None):
        super().__init__(first_request)
        self.route = route
        self.where = route.where
        self._give_back = give_back  # hands the route back to the engine's shared ones
        self._closed = False

    def _request(self, operation: str, body: dict[str, Any], wire_items: bool) -> dict[str, Any]:
        route = self.route
        payload = route.encode(operation, body)
        attempt, context, lost = 0, {}, 0
        while True:
            attempt += 1
            headers = route.headers(operation, payload, self._frozen_credentials())
            try:
                answered: Answered | None = Answered(*self._exchange(headers, payload))
            except (BotoConnectionError, HTTPClientError) as exc:
                outcome: dict[str, Any] | Exception = exc
                answered = None
            else:
                outcome = route.answer(operation, *answered, wire_items, attempt)
                if not isinstance(outcome, Exception):
                    route.retries.succeeded(operation, answered, outcome, context)
                    outcome["ResponseMetadata"][LOST_ANSWERS] = lost
                    return outcome
            wait = route.retries.wait(operation, attempt, outcome, answered, context)
            if wait is None:
                if isinstance(outcome, ClientError):
                    outcome.response["ResponseMetadata"][LOST_ANSWERS] = lost
                raise outcome
            lost += not refused(outcome)
            log.debug(
                "%s attempt %d failed (%s): sent again in %.3f s", operation, attempt, _what(outcome), wait
            )
            self.pause(wait)

    def _frozen_credentials(self) -> Any:
        """The credentials to sign one attempt with, refreshed first if they are due."""
        credentials = self.route.credentials
        return None if credentials is None else credentials.get_frozen_credentials()

    def _exchange(self, headers: dict[str, str], payload: bytes) -> tuple[int, Any, bytes]:
        """One POST of ``payload`` to the route's URL: the answer's status, headers and body;
        botocore's exception for a connection lost or refused, or a time-out."""
        raise NotImplementedError

    def pause(self, seconds: float) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Hand the engine's route back; the last connection to do so closes its pool."""
        if not self._closed:
            self._closed = True
            self._give_back()


def _what(failure: Exception) -> str:
    """A failure as a log line names it: DynamoDB's error code or the exception's class (never
    a message, which could quote a parameter)."""
    if isinstance(failure, ClientError):
        return failure.response.get("Error", {}).get("Code", "")
    return type(failure).__name__
