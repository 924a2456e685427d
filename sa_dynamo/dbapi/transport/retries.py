"""Which failed requests the driver's HTTP transports send again, and after how long: decided by
the retry handlers botocore itself registered on the client made from the engine's arguments,
asked with the event botocore's endpoint emits after every attempt (``needs-retry``), so that
choosing a transport changes no retry and a botocore upgrade cannot leave the two apart.

The handlers are botocore's for the mode and number of attempts it computed from the user's
``Config`` (``retries``), the URL (``retry_mode``, ``max_attempts``) and the AWS configuration
(``AWS_RETRY_MODE``, ``AWS_MAX_ATTEMPTS``): in ``legacy`` mode (botocore's default) those it
builds from its ``_retry.json`` data for DynamoDB, in ``standard`` mode those of
``botocore.retries.standard``, whose retry quota is paid back on the ``after-call`` event the
transport emits too. A handler registered on those two events of the session (``needs-retry``,
``after-call``) is asked as botocore's client would ask it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from botocore.exceptions import ClientError

from ..errors import NotSupportedError

MODES = ("legacy", "standard")


class Answered(NamedTuple):
    """An HTTP answer as botocore's retry handlers read it."""

    status_code: int
    headers: Any
    content: bytes


class Retries:
    """One engine's retry rules: the retry handlers on the event system of the botocore client
    its route was resolved with (``client``, closed or not)."""

    def __init__(self, client: Any):
        mode = client.meta.config.retries.get("mode", "legacy")
        if mode not in MODES:
            raise NotSupportedError(
                f"retry_mode {mode!r} is botocore's (its client-side rate limiter): the driver's HTTP "
                f"transport retries in {' or '.join(MODES)} mode; use one of those, or transport=botocore"
            )
        self.mode = mode
        self._events = client.meta.events
        self._service = client.meta.service_model
        self._prefix = self._service.service_id.hyphenize()

    def wait(
        self, operation: str, attempt: int, failure: Exception, answered: Answered | None, context: dict
    ) -> float | None:
        """Seconds to wait before sending again after attempt number ``attempt`` (1 for the
        first) of ``operation`` failed with ``failure`` (a botocore ClientError or ChecksumError
        for the answer ``answered``, or a connection error with no answer); None: not again.
        ``context`` is the request's own, the same dict for each of its attempts. botocore's
        legacy handler raises the ChecksumError of a last attempt's corrupted answer itself."""
        response = None
        if answered is not None:
            response = (answered, failure.response if isinstance(failure, ClientError) else {})
        delays = self._events.emit(
            f"needs-retry.{self._prefix}.{operation}",
            response=response,
            endpoint=None,
            operation=self._service.operation_model(operation),
            attempts=attempt,
            caught_exception=None if answered is not None else failure,
            request_dict={"context": context},
        )
        delay = next((delay for _, delay in delays if delay is not None), None)
        return None if delay is None or delay is False else float(delay)

    def succeeded(self, operation: str, answered: Answered, parsed: dict[str, Any], context: dict) -> None:
        """A request was answered: standard mode's quota is paid back what its retries took,
        or a little for a request that needed none (legacy mode registers nothing to tell)."""
        if self.mode == "standard":
            self._events.emit(
                f"after-call.{self._prefix}.{operation}",
                http_response=answered,
                parsed=parsed,
                model=self._service.operation_model(operation),
                context=context,
            )


def refused(failure: Exception) -> bool:
    """Whether a failed attempt was refused by DynamoDB (a 4xx: throttled, say), not lost: a lost
    connection, a time-out, a 5xx or a corrupted answer may hide a request that was applied."""
    if not isinstance(failure, ClientError):
        return False
    return failure.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) < 500
