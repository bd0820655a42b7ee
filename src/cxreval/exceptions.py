"""Exceptions and warnings raised by cxreval.

Every error a user can cause with bad input is a :class:`CxrevalError`; the command line turns it
into a one-line message and exit code 2.
"""

from __future__ import annotations

__all__ = [
    "CxrevalError",
    "InvalidParameterError",
    "UnknownNameError",
    "SchemaError",
    "DataUnavailableError",
    "UndefinedMetricWarning",
    "CxrevalWarning",
]


class CxrevalError(Exception):
    """Base class of every error cxreval raises on bad input or unavailable data."""


class InvalidParameterError(CxrevalError, ValueError):
    """A parameter has a value outside its documented domain."""


class UnknownNameError(InvalidParameterError, KeyError):
    """A name that no registry holds (metric, fusion method...): a ``KeyError`` and a :class:`CxrevalError`,
    with close names suggested in the message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SchemaError(CxrevalError, ValueError):
    """A table or file does not follow the documented schema (columns, values, duplicates)."""


class DataUnavailableError(CxrevalError, OSError):
    """Data that a computation needs is not available (not fetched, offline, checksum mismatch)."""


class CxrevalWarning(UserWarning):
    """Base class of cxreval's warnings."""


class UndefinedMetricWarning(CxrevalWarning):
    """A metric is undefined for the given input (e.g. one class only) and NaN is returned."""
