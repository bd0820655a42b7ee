"""A report-text file of any supported kind as a report table: CSV/Parquet, the OpenI archive, MIMIC-CXR's reports.

:func:`read_report_file` is what ``cxreval label-reports --reports`` (and the demo's OpenI section) read:
a CSV or Parquet table (:func:`read_reports`), OpenI's ``NLMCXR_reports.tgz`` / a
folder of its XML files (:func:`cxreval.datasets.openi.read_openi_reports`), laid out as ``study_id,
patient_id`` (the report id: an OpenI report is its own patient) and one column per section
(:data:`OPENI_SECTIONS`), or MIMIC-CXR's ``mimic-cxr-reports.zip`` / its ``files/p1x/pNNNNNNNN/sNNNNNNNN.txt``
tree (:func:`cxreval.datasets.mimic_reports.read_mimic_reports`: ``study_id, patient_id, text``). The labeller
(:mod:`cxreval.labeller`, a layer above) checks and labels the table.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

from .._typing import PathLike
from ..exceptions import InvalidParameterError, SchemaError
from ..results import ReadReport, ReadResult
from ..schema import PATIENT_ID, STUDY_ID
from .mimic_reports import is_mimic_report_tree, read_mimic_reports
from .openi import read_openi_reports

__all__: list[str] = []

OPENI_SECTIONS: tuple[str, ...] = ("comparison", "indication", "findings", "impression")
"""The section columns of an OpenI report table (the order of the reports' XML)."""


def _existing_file(path: object, func: str) -> Path:
    """``path`` as a Path to something that exists."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidParameterError(f"The 'path' parameter of {func} must be a path. Got {path!r} instead.")
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"File {str(p)!r} does not exist.")
    return p


def openi_report_table(reports: pd.DataFrame) -> pd.DataFrame:
    """``study_id, patient_id`` (the report id) and :data:`OPENI_SECTIONS` (missing text as ``''``) of a
    :func:`~cxreval.datasets.openi.read_openi_reports` table."""
    table = pd.DataFrame({STUDY_ID: reports["report_id"], PATIENT_ID: reports["report_id"]})
    for c in OPENI_SECTIONS:
        table[c] = reports[c].fillna("").astype(str).to_numpy(dtype=object)
    return table


def read_report_file(path: PathLike) -> ReadResult:
    """A report table from a CSV/Parquet file, the OpenI archive / a folder of its XML files, or MIMIC-CXR's
    ``mimic-cxr-reports.zip`` / its ``files/`` tree (or a folder holding either).

    Returns
    -------
    res : ReadResult
        ``res.table`` for :func:`cxreval.labeller.label_reports`; ``res.report`` what was read and dropped.

    Raises
    ------
    SchemaError
        A missing or unreadable file.
    """
    p = _existing_file(path, "read_report_file")
    if p.name.lower().endswith(".zip") or (p.is_dir() and is_mimic_report_tree(p)):
        return read_mimic_reports(p)
    if p.is_dir() or p.name.lower().endswith((".tgz", ".tar.gz", ".tar")):
        res = read_openi_reports(p)
        return ReadResult(openi_report_table(res.table), res.report)
    return read_reports(p)


def _csv_bytes(p: Path) -> bytes:
    """The bytes of a CSV file, decompressed when its name ends in ``.gz`` (as every other table reader does)."""
    data = p.read_bytes()
    if not p.name.lower().endswith(".gz"):
        return data
    import gzip
    import zlib

    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise SchemaError(f"File {str(p)!r} could not be decompressed as gzip: {exc}") from None


def _decode_csv(p: Path) -> pd.DataFrame:
    data = _csv_bytes(p)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        where = " once decompressed" if p.name.lower().endswith(".gz") else ""
        raise SchemaError(
            f"File {str(p)!r} is not UTF-8 text{where}: byte {exc.start} (line {line}) is "
            f"{data[exc.start : exc.start + 1]!r}. Re-save the file as UTF-8."
        ) from None
    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[])
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise SchemaError(f"File {str(p)!r} could not be read as CSV: {exc}") from None


def read_reports(path: PathLike) -> ReadResult:
    """Read reports from a CSV or Parquet table (checked later by :func:`check_report_table`).

    Returns
    -------
    res : ReadResult
        ``res.table``: the input table (CSV cells as text, blank = ``''``).

    Raises
    ------
    SchemaError
        Missing file, a folder or archive, non-UTF-8 CSV, unreadable table.
    """
    p = _existing_file(path, "read_reports")
    name = p.name.lower()
    if p.is_dir() or name.endswith((".tgz", ".tar.gz", ".tar")):
        raise SchemaError(
            f"{str(p)!r} is a folder or archive; read_reports reads a CSV or Parquet table. For the OpenI "
            "archive use cxreval.datasets.openi.read_openi_reports (or `cxreval label-reports`, which "
            "reads both)."
        )
    if name.endswith(".parquet"):
        try:
            table = pd.read_parquet(p)
        except Exception as exc:  # pyarrow raises several types for a corrupt file
            raise SchemaError(f"File {str(p)!r} could not be read as Parquet: {exc}") from None
    else:
        table = _decode_csv(p)
    return ReadResult(table, ReadReport(str(p), len(table), len(table)))
