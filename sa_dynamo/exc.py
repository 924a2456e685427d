"""sa_dynamo's public exceptions: subclasses of SQLAlchemy's, so existing handlers keep working
(LocalError, about the DynamoDB Local server rather than a statement, is a RuntimeError).

The driver's PEP 249 exceptions are in ``sa_dynamo.dbapi.errors``: that layer never imports
SQLAlchemy.
"""

from __future__ import annotations

from typing import NoReturn

from sqlalchemy import exc as sa_exc


class KeySchemaMismatchError(sa_exc.ArgumentError):
    """Two classes mapped to one DynamoDB table disagree on its key schema or discriminator."""


class KeyTemplateError(sa_exc.ArgumentError):
    """A key template names an attribute its class does not map, or conflicts with another."""


class AttributeBagError(sa_exc.InvalidRequestError):
    """An attribute bag holds an attribute that a column of its class maps."""


class ScanWarning(sa_exc.SAWarning):
    """A statement scans a whole table (dynamodb_scan='warn', the default)."""


class CapacityWarning(sa_exc.SAWarning):
    """A read handed out far fewer rows than the items DynamoDB returned (and billed) for it
    (``dynamodb_capacity_warning=N``, off by default). While it is on, an ORM read's
    discriminator filter is applied by the driver instead of sent, so that the items of other
    kinds are counted: the same rows, requests and units (DynamoDB bills and pages by the items
    read before any filter), more bytes on the wire."""


class ScanNotAllowed(sa_exc.InvalidRequestError):
    """A statement would scan a whole table and dynamodb_scan='error' forbids it; nothing was sent."""


class InvalidPageToken(sa_exc.InvalidRequestError):
    """A pagination token was altered, signed with another secret, or belongs to another query."""


class LocalError(RuntimeError):
    """DynamoDB Local could not be installed or started; the message says what to do."""


class TranslationError(sa_exc.DontWrapMixin, sa_exc.CompileError):
    """SQL text (text(), exec_driver_sql, pandas) that DynamoDB PartiQL cannot express; raised with
    the compiler's own words when the compiler refused the statement the text became."""


def cannot_express(what: str, instead: str) -> str:
    """The words of every refusal: the construct DynamoDB PartiQL lacks, and what to do instead."""
    return f"DynamoDB PartiQL cannot express {what}: {instead}"


def refuse(what: str, instead: str, error: type[sa_exc.CompileError] = sa_exc.CompileError) -> NoReturn:
    """Refuse a construct before anything is sent (see cannot_express)."""
    raise error(cannot_express(what, instead))
