"""The error of an output path that cannot be used."""

from __future__ import annotations

from ..exceptions import CxrevalError

__all__ = ["OutputError"]


class OutputError(CxrevalError, OSError):
    """An output path cannot be used: it is a file, not writable, already exists, or is in use by another run."""
