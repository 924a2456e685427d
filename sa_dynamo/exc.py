"""sa_dynamo's exceptions: subclasses of SQLAlchemy's, so existing handlers keep working."""

from __future__ import annotations

from sqlalchemy import exc as sa_exc


class KeySchemaMismatchError(sa_exc.ArgumentError):
    """Two classes mapped to one DynamoDB table disagree on its key schema or discriminator."""


class KeyTemplateError(sa_exc.ArgumentError):
    """A key template names an attribute its class does not map, or conflicts with another."""


class ScanWarning(sa_exc.SAWarning):
    """A statement scans a whole table (dynamodb_scan='warn', the default)."""


class ScanNotAllowed(sa_exc.InvalidRequestError):
    """A statement would scan a whole table and dynamodb_scan='error' forbids it; nothing was sent."""


class TranslationError(sa_exc.DontWrapMixin, sa_exc.CompileError):
    """SQL text (text(), exec_driver_sql, pandas) that DynamoDB PartiQL cannot express; raised with
    the compiler's own words when the compiler refused the statement the text became."""
