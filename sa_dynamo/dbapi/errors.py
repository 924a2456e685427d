"""PEP 249 exception hierarchy and the mapping from botocore errors onto it.

DynamoDB's own message is kept in every translated error; ``code`` carries its error code so
callers can branch without parsing text.
"""

from __future__ import annotations

import contextlib
import datetime
import reprlib
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

# In the ResponseMetadata of an answer (or of a ClientError's response), beside RetryAttempts:
# how many of the attempts before the answered one lost their answer (never answered, a 5xx, an
# answer cut short or corrupted), so that DynamoDB may have applied them unseen; a throttled
# attempt was refused, not lost. The transports set it (transport/__init__.py re-exports it).
LOST_ANSWERS = "sa_dynamo:lost_answers"


class Warning(Exception):
    """PEP 249 Warning."""


class Error(Exception):
    """Base of every error the driver raises; ``code`` is DynamoDB's error code, if any."""

    def __init__(self, message: str, code: str | None = None, response: dict | None = None):
        super().__init__(message)
        self.code = code
        self.response = response or {}
        # For a failed commit: the statements sent, in the order of the CancellationReasons.
        self.statements: list[dict[str, Any]] = []
        # True when no answer says whether DynamoDB applied the write (a commit, one AUTOCOMMIT
        # write) or some of the writes (``unknown`` below).
        self.outcome_unknown = False
        # For writes that are not atomic together (an AUTOCOMMIT executemany, a chunked commit)
        # and failed partway: the rows (indexes) applied, not applied, and of unknown outcome.
        self.applied: list[int] | None = None
        self.unapplied: list[int] | None = None
        self.unknown: list[int] | None = None

    @property
    def unanswered(self) -> bool:
        """A lost connection or a server error, not a refusal, or a refusal (a throttle) of a
        resend whose earlier attempt lost its answer: the request may have been carried out."""
        metadata = self.response.get("ResponseMetadata", {})
        status = metadata.get("HTTPStatusCode") or 0
        lost_before = metadata.get(LOST_ANSWERS, 0) > 0
        return lost_before or status >= 500 or (isinstance(self, OperationalError) and not self.code)


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


# -- values in messages ---------------------------------------------------------------------

SHOWN_CHARACTERS = 32
HIDDEN = "(value hidden: hide_parameters)"
_repr = reprlib.Repr()
_repr.maxlevel = 3
_repr.maxstring = _repr.maxother = SHOWN_CHARACTERS + 8


def shown(value: Any, hidden: bool) -> str:
    """A parameter value (or a key) as a message quotes it: at most SHOWN_CHARACTERS of it, and
    nothing at all when the engine hides parameters. Safe for any value: nesting too deep for
    repr() is cut (reprlib), and a date reads as its ISO text."""
    if hidden:
        return HIDDEN
    if isinstance(value, (str, bytes)):
        text = repr(value[: SHOWN_CHARACTERS + 1])
    elif isinstance(value, (datetime.date, datetime.time)):
        text = value.isoformat()
    elif isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        text = str(value)
    else:
        text = _repr.repr(value)
    return text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS] + "..."


def row_ranges(rows: Sequence[int], noun: str = "row") -> str:
    """Row indexes as a short list of ranges: "rows 0-16, 18-29", "row 17", "no row"."""
    if not rows:
        return f"no {noun}"
    spans: list[list[int]] = []
    for row in sorted(rows):
        if spans and row == spans[-1][1] + 1:
            spans[-1][1] = row
        else:
            spans.append([row, row])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return f"{noun}{'s' if len(rows) > 1 else ''} {text}"


@contextlib.contextmanager
def in_row(row: int, rows: int) -> Iterator[None]:
    """Name the row of an executemany in the message of an error it raises (before sending)."""
    try:
        yield
    except Error as error:
        if rows > 1:
            error.args = (f"row {row} of {rows}: {error.args[0] if error.args else ''}",)
        raise


def report_partial(
    error: Error, applied: list[int], unapplied: list[int], unknown: list[int], noun: str = "row"
) -> Error:
    """Give an error about writes that are not atomic together what became of each of them, as
    data (``applied``, ``unapplied``, ``unknown``) and at the end of its message, so that a
    caller can resume exactly where it stopped."""
    error.applied, error.unapplied, error.unknown = sorted(applied), sorted(unapplied), sorted(unknown)
    error.outcome_unknown = error.outcome_unknown or bool(unknown)
    parts = [f"applied: {row_ranges(applied, noun)}", f"not applied: {row_ranges(unapplied, noun)}"]
    if unknown:
        parts.append(
            f"outcome unknown (DynamoDB may or may not have applied them: read them back before "
            f"writing them again): {row_ranges(unknown, noun)}"
        )
    error.args = (f"{error.args[0] if error.args else ''}. {'; '.join(parts)}",)
    return error


DUPLICATE_CODES = frozenset({"DuplicateItem", "DuplicateItemException"})
CONDITION_FAILED = "ConditionalCheckFailedException"

THROTTLING_CODES = frozenset(
    {"ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"}
)
_OPERATIONAL_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionConflictException",
        "TransactionInProgressException",
        "UnrecognizedClientException",
        "AccessDeniedException",
        "ExpiredTokenException",
        "InvalidSignatureException",
        "ResourceInUseException",
    }
)
_PROGRAMMING_CODES = frozenset(
    {"ResourceNotFoundException", "IdempotentParameterMismatchException", "SerializationException"}
)
# ValidationException texts that mean "the data is wrong", not "the statement is wrong".
_DATA_MESSAGES = (
    "key attribute's data type should match",
    "type mismatch for index key",
    "cannot contain an empty string value",
    "a value specified for a secondary index key is not supported",
    "attempted to update a secondary index key",
    "only supports precision up to 38 digits",
    "number overflow",
    "number underflow",
    "cannot be converted into a number",
    "item size has exceeded",
    "item size to update has exceeded",
    "may not be empty",
    "input collection",
    "negative zero",
    "an operand in the update expression has an incorrect data type",
    "key attribute should be present in the item",
    "empty attribute name",
    "nesting levels have exceeded",
    "primary key values must be under",
    "size limit exceeded",
    "invalid attribute value type",
)


def _validation_class(message: str) -> type[Error]:
    lowered = message.lower()
    if any(text in lowered for text in _DATA_MESSAGES):
        return DataError
    return ProgrammingError


def _cancellation_class(response: dict) -> type[Error]:
    reasons = response.get("CancellationReasons") or []
    for reason in reasons:
        code = reason.get("Code")
        message = (reason.get("Message") or "").lower()
        if code == "ConditionalCheckFailed" or code in DUPLICATE_CODES or "duplicate primary key" in message:
            return IntegrityError
    for reason in reasons:
        if reason.get("Code") == "ValidationError":
            return _validation_class(reason.get("Message") or "")
    if "duplicate primary key" in (response.get("Error", {}).get("Message") or "").lower():
        return IntegrityError
    return OperationalError


def error_class(code: str, message: str, response: dict[str, Any]) -> type[Error]:
    """The PEP 249 class for a DynamoDB error code and message."""
    if code in DUPLICATE_CODES or code == CONDITION_FAILED:
        return IntegrityError
    if code == "TransactionCanceledException":
        return _cancellation_class(response)
    if code == "ValidationException":
        return _validation_class(message)
    if code in _PROGRAMMING_CODES:
        return ProgrammingError
    if code in _OPERATIONAL_CODES:
        return OperationalError
    if code == "InternalFailure":
        return InternalError
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return OperationalError if status >= 500 or status == 0 else DatabaseError


_BATCH_CODES: dict[str, type[Error]] = {
    "DuplicateItem": IntegrityError,
    "ConditionalCheckFailed": IntegrityError,
    "ResourceNotFound": ProgrammingError,
}


def batch_error_class(code: str, message: str) -> type[Error]:
    """The class for one statement's error inside a BatchExecuteStatement response."""
    if code == "ValidationError":
        return _validation_class(message)
    if "duplicate primary key" in message.lower():
        return IntegrityError
    return _BATCH_CODES.get(code, OperationalError)


def _cancellation_detail(response: dict[str, Any]) -> str:
    """A cancelled transaction's per-statement reasons: its own message only says "[None,
    ValidationError]", while the reasons say which statement failed and why."""
    failed = [
        f"statement {index}: {reason['Code']}" + (f": {reason['Message']}" if reason.get("Message") else "")
        for index, reason in enumerate(response.get("CancellationReasons") or [])
        if reason.get("Code") not in (None, "None")
    ]
    return f" ({'; '.join(failed)})" if failed else ""


MISSING_TABLE_CODES = frozenset(
    {"ResourceNotFoundException", "ResourceNotFound"}
)  # a request's, a batch row's


def missing_table(tables: Sequence[str], where: str) -> str:
    """What a ResourceNotFoundException means, naming the tables (DynamoDB's message names none)."""
    if len(tables) == 1:
        what = f"table {tables[0]!r} does not exist"
    else:
        what = f"one of the tables {', '.join(map(repr, tables))} does not exist"
    return (
        f"{what} {where}: create it first (metadata.create_all(engine), or an Alembic migration), "
        "or check the name (table names are case-sensitive) and the URL's region and endpoint"
    )


def not_dynamodb(response: dict[str, Any], where: str) -> OperationalError | None:
    """The error for an answer some other HTTP server gave (a web server on the URL's port): its
    page would be DynamoDB's message, or a 200 with no Items an empty result. DynamoDB answers in
    JSON (CBOR for some SDKs). None when the answer is DynamoDB's, or its headers are unknown."""
    metadata = response.get("ResponseMetadata") or {}
    headers = metadata.get("HTTPHeaders")
    if not isinstance(headers, dict):
        return None
    content_type = str(headers.get("content-type", ""))
    if "json" in content_type or "cbor" in content_type:
        return None
    return OperationalError(
        f"the server {where} did not answer as DynamoDB does (HTTP {metadata.get('HTTPStatusCode')}, "
        f"content type {content_type or 'none'}): check the URL's host and port; another server "
        "answers there"
    )


def translate(exc: Exception) -> Error:
    """Turn a botocore exception into the matching PEP 249 error, keeping DynamoDB's message."""
    if isinstance(exc, Error):
        return exc
    if isinstance(exc, ClientError):
        response = exc.response
        code = response.get("Error", {}).get("Code", "")
        message = response.get("Error", {}).get("Message", "") or str(exc)
        cls = error_class(code, message, response)
        text = f"{code}: {message}" if code else message
        if code in THROTTLING_CODES:
            text += (
                ". DynamoDB throttled the request and the client's retries ran out: retry later, allow "
                "more attempts (?retry_mode=standard&max_attempts=N in the URL), or raise the table's capacity"
            )
        return cls(text + _cancellation_detail(response), code=code, response=response)
    if isinstance(exc, ParamValidationError):
        return ProgrammingError(str(exc))
    if isinstance(exc, NoCredentialsError):
        return InterfaceError(
            "no AWS credentials found: configure the default credential chain "
            "(environment, ~/.aws, instance role) or pass profile_name in the URL"
        )
    if isinstance(exc, NoRegionError):
        return InterfaceError(
            "no AWS region configured: add ?region_name=... to the URL or set AWS_DEFAULT_REGION"
        )
    if isinstance(exc, (BotoConnectionError, HTTPClientError)):
        return OperationalError(f"connection to DynamoDB failed: {exc}")
    if isinstance(exc, BotoCoreError):
        return OperationalError(str(exc))
    return InterfaceError(f"{type(exc).__name__}: {exc}")
