"""Which failed requests the driver's HTTP transports send again, and after how long: botocore's
rules for DynamoDB in its ``legacy`` (botocore's default) and ``standard`` retry modes, so that
choosing a transport changes no retry. The mode and the number of attempts are what botocore
computes from the user's ``Config`` (``retries``), the URL (``retry_mode``, ``max_attempts``)
and the AWS configuration (``AWS_RETRY_MODE``, ``AWS_MAX_ATTEMPTS``).

legacy (botocore's ``_retry.json`` for DynamoDB): 10 attempts; waits 50 ms, then twice as long
each time; retries connection errors, HTTP 429, 500, 502, 503, 504 and 509, throttling codes,
TransactionInProgressException, ReplicatedWriteConflictException and answers whose
``x-amz-crc32`` does not match their body.

standard (botocore.retries.standard): 3 attempts; waits a random fraction of 1 s, 2 s, 4 s ...
(at most 20 s); retries connection errors, 500 to 504, the transient and throttling codes and
checksum mismatches; and a retry quota shared by an engine's connections (500, a retry costs 5,
one after a timeout 10, a success pays back) stops retries while most requests fail.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from ..errors import NotSupportedError

MODES = ("legacy", "standard")

_LEGACY_ATTEMPTS = 10
_LEGACY_FIRST_WAIT = 0.05
_LEGACY_CONNECTION_ERRORS = (
    BotoConnectionError,
    ConnectionClosedError,
    ReadTimeoutError,
    EndpointConnectionError,
)
_LEGACY_STATUSES = frozenset({429, 500, 502, 503, 504, 509})
_LEGACY_CODES = frozenset(
    {
        ("Throttling", 400),
        ("ThrottlingException", 400),
        ("ThrottledException", 400),
        ("RequestThrottledException", 400),
        ("ProvisionedThroughputExceededException", 400),
        ("TransactionInProgressException", 400),
        ("ReplicatedWriteConflictException", 409),
    }
)

_STANDARD_ATTEMPTS = 3
_STANDARD_MAX_WAIT = 20.0
_STANDARD_CONNECTION_ERRORS = (BotoConnectionError, HTTPClientError)
_STANDARD_STATUSES = frozenset({500, 502, 503, 504})
_STANDARD_CODES = frozenset(
    {
        # transient
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
        # throttling
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "EC2ThrottledException",
        # modeled as retryable in DynamoDB's API
        "ReplicatedWriteConflictException",
    }
)
_QUOTA = 500
_RETRY_COST = 5
_TIMEOUT_RETRY_COST = 10
_SUCCESS_REFUND = 1


class Retries:
    """One engine's retry rules (and, in standard mode, its retry quota)."""

    def __init__(self, mode: str, max_attempts: int | None = None):
        if mode not in MODES:
            raise NotSupportedError(
                f"retry_mode {mode!r} is botocore's (its client-side rate limiter): the driver's HTTP "
                f"transport retries in {' or '.join(MODES)} mode; use one of those, or transport=botocore"
            )
        self.mode = mode
        self.max_attempts = max_attempts or (_LEGACY_ATTEMPTS if mode == "legacy" else _STANDARD_ATTEMPTS)
        self._quota = _QUOTA
        self._lock = threading.Lock()

    @classmethod
    def of(cls, retries: dict[str, Any] | None) -> Retries:
        """The rules of a botocore client's computed ``config.retries``."""
        retries = retries or {}
        return cls(retries.get("mode", "legacy"), retries.get("total_max_attempts"))

    def wait(self, attempt: int, failure: Exception) -> float | None:
        """Seconds to wait before sending again after attempt number ``attempt`` (1 for the
        first) failed with ``failure`` (a botocore ClientError, connection error or
        ChecksumError); None: not again. In standard mode a retry takes from the quota."""
        if attempt >= self.max_attempts or not self._retried(failure):
            return None
        if self.mode == "legacy":
            return _LEGACY_FIRST_WAIT * 2 ** (attempt - 1)
        cost = _cost(failure)
        with self._lock:
            if cost > self._quota:
                return None
            self._quota -= cost
        return random.random() * min(2 ** (attempt - 1), _STANDARD_MAX_WAIT)

    def succeeded(self, last_failure: Exception | None) -> None:
        """A request was answered (``last_failure``: what its attempt before failed with, None
        after a first attempt): standard mode pays the quota back what the retry took, or a
        little for a request that needed none."""
        if self.mode != "standard" or self._quota >= _QUOTA:
            return
        refund = _SUCCESS_REFUND if last_failure is None else _cost(last_failure)
        with self._lock:
            self._quota = min(_QUOTA, self._quota + refund)

    def _retried(self, failure: Exception) -> bool:
        if isinstance(failure, ChecksumError):
            return True
        if not isinstance(failure, ClientError):
            errors = _LEGACY_CONNECTION_ERRORS if self.mode == "legacy" else _STANDARD_CONNECTION_ERRORS
            return isinstance(failure, errors)
        status = failure.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        code = failure.response.get("Error", {}).get("Code", "")
        if self.mode == "legacy":
            return status in _LEGACY_STATUSES or (code, status) in _LEGACY_CODES
        return status in _STANDARD_STATUSES or code in _STANDARD_CODES


def _cost(failure: Exception) -> int:
    return (
        _TIMEOUT_RETRY_COST if isinstance(failure, (ConnectTimeoutError, ReadTimeoutError)) else _RETRY_COST
    )
