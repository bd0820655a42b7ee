"""Checking report text: a table of reports (read from a file by
:func:`cxreval.datasets.report_files.read_reports`).

A report table has ``study_id``, optional ``patient_id``, and either a ``text`` column (the whole
report; its sections are found by :func:`~cxreval.labeller.split_sections`) or one column per
section, named by a section header (``findings``, ``impression``, ``indication``, ``comparison``...,
any case).

Examples
--------
>>> import io, pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1"], "Findings": ["No effusion."], "IMPRESSION": ["Normal."]})
>>> check_report_table(t).section_columns
{'Findings': 'findings', 'IMPRESSION': 'impression'}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ._sections import HEADERS

__all__ = ["ReportTable", "check_report_table"]

_SECTION_OF = {name: canon for canon, names in HEADERS.items() for name in names}


@dataclass(frozen=True)
class ReportTable:
    """A checked report table: which column holds the whole text or each section.

    Attributes
    ----------
    table : pandas.DataFrame
        ``study_id``, ``patient_id`` (the study id when the input has none) and the text columns, as str
        with missing text as ``''``.
    text_column : str or None
        The whole-report column (``text``), when present.
    section_columns : dict
        ``{column: canonical section}`` for the per-section columns, in column order.
    ignored_columns : tuple of str
        Columns that are neither ids nor text (reported in the notes).
    """

    table: pd.DataFrame
    text_column: str | None
    section_columns: dict[str, str]
    ignored_columns: tuple[str, ...] = ()


def _text_values(s: pd.Series, column: str, where: str) -> np.ndarray:
    vals = s.to_numpy(dtype=object)
    miss = pd.isna(vals)
    bad = np.flatnonzero(
        ~miss & ~np.fromiter((isinstance(v, str) for v in vals), dtype=bool, count=len(vals))
    )
    if len(bad):
        i = int(bad[0])
        raise SchemaError(
            f"{where}, row {i}, column {column!r}: report text must be text. Got {vals[i]!r} "
            f"({type(vals[i]).__name__})."
        )
    out = vals.copy()
    out[miss] = ""
    return out.astype(str)


def check_report_table(reports: pd.DataFrame, *, where: str = "report table") -> ReportTable:
    """Check a report table and find its text columns (see the module docstring).

    Raises
    ------
    SchemaError
        Not a table; no ``study_id``; no ``text`` nor section column; both ``text`` and section columns;
        no rows; a missing or duplicate study id;
        a study with two patient ids cannot occur (one row per study); text that is not text.
    """
    if not isinstance(reports, pd.DataFrame):
        raise InvalidParameterError(
            f"The 'reports' parameter must be a pandas DataFrame with study_id and text or "
            f"section columns. Got {type(reports).__name__} instead."
        )
    cols = [str(c) for c in reports.columns]
    lower = {c.strip().lower(): c for c in cols}
    if "study_id" not in lower:
        raise SchemaError(f"{where} has no 'study_id' column; columns: {cols}.")
    sid_col = lower["study_id"]
    text_col = lower.get("text")
    sections = {
        c: _SECTION_OF[" ".join(c.strip().lower().replace("_", " ").split())]
        for c in cols
        if " ".join(c.strip().lower().replace("_", " ").split()) in _SECTION_OF
    }
    if text_col is None and not sections:
        raise SchemaError(
            f"{where} has neither a 'text' column nor a section column (findings, impression, ...); "
            f"columns: {cols}."
        )
    if text_col is not None and sections:
        raise SchemaError(
            f"{where} has both a 'text' column and section columns {list(sections)}; which to label is "
            "ambiguous. Keep either 'text' (the whole report) or the section columns."
        )
    if not len(reports):
        raise SchemaError(f"{where} has no rows (no report under the header); columns: {cols}.")
    pid_col = lower.get("patient_id")
    ids = reports[sid_col]
    miss = ids.isna() | (ids.astype(str).str.strip() == "")
    if miss.any():
        i = int(np.flatnonzero(miss.to_numpy())[0])
        raise SchemaError(f"{where}, row {i}, column {sid_col!r}: missing study id.")
    sid = ids.astype(str).str.strip()
    dup = sid.duplicated(keep=False)
    if dup.any():
        first = sid[dup].unique()[:5].tolist()
        raise SchemaError(
            f"{where}, column {sid_col!r}: duplicate study ids {first} ({int(dup.sum())} rows); one row "
            "per study is expected."
        )
    out = pd.DataFrame({"study_id": sid.to_numpy(dtype=object)})
    if pid_col is not None:
        pid = reports[pid_col]
        pmiss = pid.isna() | (pid.astype(str).str.strip() == "")
        if pmiss.any():
            i = int(np.flatnonzero(pmiss.to_numpy())[0])
            raise SchemaError(f"{where}, row {i}, column {pid_col!r}: missing patient id.")
        out["patient_id"] = pid.astype(str).str.strip().to_numpy(dtype=object)
    else:
        out["patient_id"] = out["study_id"]
    use = [text_col] if text_col is not None else list(sections)
    for c in use:
        out[c] = _text_values(reports[c], c, where)
    ignored = tuple(c for c in cols if c not in {sid_col, pid_col, *use})
    return ReportTable(out, text_col, {} if text_col is not None else sections, ignored)
