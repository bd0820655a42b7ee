"""The shared pieces of the report's key findings (:mod:`cxreval.report`): the :class:`KeyFinding`
line, number formatting, the run's confidence level, and reading a result table's columns."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema._columns import SUMMARY_ROWS
from .result_files import find_result_file, missing_columns, read_result_table, run_record

__all__ = ["KeyFinding", "confidence_level", "fmt", "named", "ordinal"]

_SUMMARY = SUMMARY_ROWS
_ALL_GROUPS = ("all models", "all")


@dataclass(frozen=True)
class KeyFinding:
    """One line of the key-findings panel.

    Attributes
    ----------
    kind : str
        The analysis kind (``ranking``, ``agreement``, ...).
    text : str
        The sentence, plain text.
    verdict : str
        The short verdict (e.g. 'unstable', 'moderate agreement'), also in ``text``.
    """

    kind: str
    text: str
    verdict: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text, "verdict": self.verdict}


def fmt(x: float, digits: int = 2) -> str:
    """A number for prose: ``digits`` decimals, a true minus sign, 'n/a' for NaN."""
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    s = f"{float(x):.{digits}f}"
    if s.startswith("-"):
        s = "−" + s[1:] if float(s) != 0 else s[1:]
    return s


def named(name: object) -> str:
    """A method's name in prose, quoted as a name (a fusion method called ``and`` or ``or`` reads as a word
    otherwise: "the worst is “and”")."""
    return f"“{name}”"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 21st."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def confidence_level(folder: Path) -> tuple[float, bool]:
    """The confidence level of the folder's intervals and whether ``run.json`` recorded it.

    Looks for ``confidence_level`` in ``run.json`` (top level, or ``--confidence-level`` in its argv);
    otherwise the library default 0.95, reported as not recorded.
    """
    found = run_record(folder)
    if found is not None:
        rec = found[0]
        v = rec.get("confidence_level")
        raw = rec.get("argv")
        argv = [str(a) for a in raw] if isinstance(raw, list) else []
        if v is None and "--confidence-level" in argv[:-1]:
            v = argv[argv.index("--confidence-level") + 1]
        try:
            if v is not None and 0 < float(v) < 1:  # type: ignore[arg-type]
                return float(v), True  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    return 0.95, False


def _ci(folder: Path, lo: float, hi: float, *, level: float | None = None, digits: int = 2) -> str:
    """'95% CI lo to hi': the level given (a table's own column), else the folder's (:func:`confidence_level`)."""
    if level is None or not math.isfinite(level):
        level, _ = confidence_level(folder)
    return f"{level * 100:g}% CI {fmt(lo, digits)} to {fmt(hi, digits)}"


def _load(folder: Path, name: str, required: tuple[str, ...]) -> pd.DataFrame | None:
    path = find_result_file(folder, name)
    if path is None:
        return None
    df = read_result_table(path)
    if df.empty or missing_columns(df, required):
        return None
    return df


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    if col not in df.columns:
        return pd.Series(np.nan, index=df.index, dtype=float)
    return pd.to_numeric(df[col], errors="coerce")


def _str(df: pd.DataFrame, col: str) -> pd.Series:
    if col not in df.columns:
        return pd.Series("", index=df.index, dtype=object)
    return df[col].astype(object).where(df[col].notna(), "").astype(str)


def _prefer_all_group(df: pd.DataFrame) -> pd.DataFrame:
    if "group" not in df.columns:
        return df
    g = _str(df, "group").str.lower()
    return df[g.isin(_ALL_GROUPS)] if g.isin(_ALL_GROUPS).any() else df


def _where(row: pd.Series) -> str:
    """'DATASET, finding' (dataset only when the table names one)."""
    ds = str(row.get("dataset", "") or "")
    ds = "" if ds in ("nan", "None") else ds
    return f"{ds}, {row['finding']}" if ds else str(row["finding"])
