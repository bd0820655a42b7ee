"""A report-text file of any supported kind as a report table: CSV/Parquet, or the OpenI archive.

:func:`read_report_file` is what ``cxreval label-reports --reports`` (and the demo's OpenI section) read:
a CSV or Parquet table (:func:`cxreval.reports.read_reports`), or OpenI's ``NLMCXR_reports.tgz`` / a
folder of its XML files (:func:`cxreval.datasets.openi.read_openi_reports`), laid out as ``study_id,
patient_id`` (the report id: an OpenI report is its own patient) and one column per section
(:data:`OPENI_SECTIONS`). It lives in :mod:`cxreval.datasets` because the OpenI reader does; the labeller
(:mod:`cxreval.reports`, a layer below) reads tables only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .._typing import PathLike
from ..exceptions import InvalidParameterError, SchemaError
from ..labels import PATIENT_ID, STUDY_ID
from ..reports import read_reports
from ..results import ReadResult
from .openi import read_openi_reports

__all__ = ["OPENI_SECTIONS", "openi_report_table", "read_report_file"]

OPENI_SECTIONS: tuple[str, ...] = ("comparison", "indication", "findings", "impression")
"""The section columns of an OpenI report table (the order of the reports' XML)."""


def openi_report_table(reports: pd.DataFrame) -> pd.DataFrame:
    """``study_id, patient_id`` (the report id) and :data:`OPENI_SECTIONS` (missing text as ``''``) of a
    :func:`~cxreval.datasets.openi.read_openi_reports` table."""
    table = pd.DataFrame({STUDY_ID: reports["report_id"], PATIENT_ID: reports["report_id"]})
    for c in OPENI_SECTIONS:
        table[c] = reports[c].fillna("").astype(str).to_numpy(dtype=object)
    return table


def read_report_file(path: PathLike) -> ReadResult:
    """A report table from a CSV/Parquet file, or from the OpenI archive / a folder of its XML files.

    Returns
    -------
    res : ReadResult
        ``res.table`` for :func:`cxreval.reports.label_reports`; ``res.report`` what was read and dropped.

    Raises
    ------
    SchemaError
        A missing or unreadable file.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidParameterError(f"The 'path' parameter of read_report_file must be a path. Got {path!r} instead.")
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"File {str(p)!r} does not exist.")
    if p.is_dir() or p.name.lower().endswith((".tgz", ".tar.gz", ".tar")):
        res = read_openi_reports(p)
        return ReadResult(openi_report_table(res.table), res.report)
    return read_reports(p)
