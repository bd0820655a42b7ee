"""Result objects shared across cxreval: frozen dataclasses with ``to_dict``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["ConfidenceInterval", "ReadReport"]


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A two-sided confidence interval ``(low, high)``."""

    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"low": float(self.low), "high": float(self.high)}


@dataclass(frozen=True)
class ReadReport:
    """What a reader kept and what it dropped, and why.

    No reader drops a row silently: every row read is either counted in ``n_kept`` or listed in
    ``dropped`` with its reason.

    Attributes
    ----------
    source : str
        The file (or description of the input) that was read.
    n_read : int
        Rows read from the input.
    n_kept : int
        Input rows that contributed to the output table.
    dropped : pandas.DataFrame
        One row per dropped input row: ``row`` (0-based data row, or -1 when not row-specific),
        ``reason`` and ``value``.
    notes : tuple of str
        Other things worth recording (renamed findings, mappings applied).
    """

    source: str
    n_read: int
    n_kept: int
    dropped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["row", "reason", "value"]))
    notes: tuple[str, ...] = ()

    @property
    def n_dropped(self) -> int:
        return int(len(self.dropped))

    def reasons(self) -> dict[str, int]:
        """Number of dropped rows per reason."""
        if self.dropped.empty:
            return {}
        return {str(k): int(v) for k, v in self.dropped["reason"].value_counts().sort_index().items()}

    def to_dict(self) -> dict[str, object]:
        return {"source": self.source, "n_read": self.n_read, "n_kept": self.n_kept,
                "n_dropped": self.n_dropped, "dropped_reasons": self.reasons(), "notes": list(self.notes)}


def readonly(a: np.ndarray) -> np.ndarray:
    """Return ``a`` marked read-only (for arrays stored on frozen results)."""
    a = np.asarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class ReadResult:
    """A table read from a file, with the :class:`ReadReport` of what was kept and dropped."""

    table: pd.DataFrame
    report: ReadReport
    layout: object | None = None
    """Reader-specific layout needed to write the file back (e.g. :class:`cxreval.labels.WideLayout`)."""


__all__ += ["ReadResult", "readonly"]
