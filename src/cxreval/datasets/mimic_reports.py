"""MIMIC-CXR's free-text reports (``mimic-cxr-reports.zip`` or its ``files/`` tree) as a report table.

Citation: Johnson AEW, Pollard TJ, Berkowitz SJ, et al. MIMIC-CXR, a de-identified publicly available
database of chest radiographs with free-text reports. Sci Data 6, 317 (2019),
doi:10.1038/s41597-019-0322-0. Data (credentialed access): https://physionet.org/content/mimic-cxr/2.0.0/,
file ``mimic-cxr-reports.zip``, which unzips into ``files/p1x/pNNNNNNNN/sNNNNNNNN.txt``: one plain-text
report per study, in the folder of its patient (``p`` + ``subject_id``) under the group folder named by
the first two digits (``p10`` ... ``p19``); the file name is ``s`` + ``study_id``.

A report is written with upper-case section headers followed by a colon (``EXAMINATION:``,
``INDICATION:``, ``TECHNIQUE:``, ``COMPARISON:``, ``FINDINGS:``, ``IMPRESSION:``; some reports start with
``WET READ:`` or ``FINAL REPORT``). The table keeps each report's whole ``text``: the labeller
(``cxreval label-reports``, :func:`cxreval.labeller.split_sections`) finds the sections and labels
FINDINGS and IMPRESSION; the others (the reason for the study, the technique, the comparison) are not
labelled.

Table: ``study_id`` (the ``study_id`` number, as in the label files of :mod:`cxreval.datasets.mimic`),
``patient_id`` (``subject_id``), ``text``. A ``.txt`` member whose path is not of that pattern is
listed in the read report's ``dropped``, never read as a report; a file that is not UTF-8 is refused.

Examples
--------
>>> res = read_mimic_reports("mimic-cxr-reports.zip")   # doctest: +SKIP
>>> res.table.columns.tolist()                          # doctest: +SKIP
['study_id', 'patient_id', 'text']
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from .._typing import PathLike
from ..exceptions import DataUnavailableError, SchemaError
from ..results import ReadReport, ReadResult

__all__: list[str] = []

REPORTS_FILE = "mimic-cxr-reports.zip"
REPORT_PATH = re.compile(r"(?:^|/)p(1\d)/p(\1\d{6})/s(\d{8})\.txt$")
"""A report's path: ``p1x/p<subject_id>/s<study_id>.txt`` (``subject_id`` 8 digits starting with the group)."""


def is_mimic_report_tree(folder: PathLike) -> bool:
    """Whether ``folder`` holds MIMIC-CXR reports: ``mimic-cxr-reports.zip``, or a ``files/p1x`` / ``p1x`` tree."""
    d = Path(folder)
    if not d.is_dir():
        return False
    if (d / REPORTS_FILE).is_file():
        return True
    return any(
        g.is_dir() and re.fullmatch(r"p1\d", g.name)
        for base in (d, d / "files")
        if base.is_dir()
        for g in base.iterdir()
    )


def _members(p: Path) -> Iterator[tuple[str, bytes]]:
    if p.is_file():
        try:
            with zipfile.ZipFile(p) as zf:
                for info in zf.infolist():
                    if not info.is_dir() and info.filename.lower().endswith(".txt"):
                        yield info.filename, zf.read(info)
        except zipfile.BadZipFile as exc:
            raise SchemaError(
                f"File {str(p)!r} is not a zip archive ({exc}); expected {REPORTS_FILE}."
            ) from None
        return
    base = p / "files" if (p / "files").is_dir() else p
    for f in sorted(base.rglob("*.txt")):
        yield f.relative_to(base).as_posix(), f.read_bytes()


def read_mimic_reports(path: PathLike) -> ReadResult:
    """Read MIMIC-CXR's reports into ``study_id, patient_id, text`` (one row per report, by study id).

    Parameters
    ----------
    path : path
        ``mimic-cxr-reports.zip``, a folder holding it, or the unzipped ``files/`` tree (or the folder
        above it).

    Returns
    -------
    res : ReadResult
        ``res.table`` sorted by study id; ``res.report.dropped``: ``.txt`` members outside the
        ``p1x/pNNNNNNNN/sNNNNNNNN.txt`` pattern.

    Raises
    ------
    DataUnavailableError
        Nothing at ``path``, or a folder without reports (naming what is expected there).
    SchemaError
        Not a zip archive, a report that is not UTF-8 text, a study found twice, no report at all.
    """
    p = Path(path)
    if not p.exists():
        raise DataUnavailableError(
            f"{str(p)!r} does not exist; pass {REPORTS_FILE} (from "
            "https://physionet.org/content/mimic-cxr/2.0.0/) or its unzipped files/ tree."
        )
    if p.is_dir() and (p / REPORTS_FILE).is_file():
        p = p / REPORTS_FILE
    elif p.is_dir() and not is_mimic_report_tree(p):
        raise DataUnavailableError(
            f"Folder {str(p)!r} holds neither {REPORTS_FILE} nor a files/p1x/pNNNNNNNN/"
            f"sNNNNNNNN.txt tree: download {REPORTS_FILE} from "
            "https://physionet.org/content/mimic-cxr/2.0.0/ and place it there (or unzip it)."
        )
    studies, patients, texts, dropped = [], [], [], []
    n_read = 0
    for name, data in _members(p):
        n_read += 1
        m = REPORT_PATH.search(name)
        if m is None:
            dropped.append((n_read - 1, "path not of the form p1x/pNNNNNNNN/sNNNNNNNN.txt", name))
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SchemaError(
                f"Report {name!r} in {str(p)!r} is not UTF-8 text (byte {exc.start})."
            ) from None
        studies.append(m.group(3))
        patients.append(m.group(2))
        texts.append(text)
    table = pd.DataFrame(
        {
            "study_id": pd.Series(studies, dtype=object),
            "patient_id": pd.Series(patients, dtype=object),
            "text": pd.Series(texts, dtype=object),
        }
    )
    if not len(table):
        raise SchemaError(
            f"{str(p)!r} holds no report (no p1x/pNNNNNNNN/sNNNNNNNN.txt; {n_read} .txt files read)."
        )
    dup = table["study_id"].duplicated()
    if dup.any():
        raise SchemaError(f"Study {table['study_id'][dup].iloc[0]!r} has two reports in {str(p)!r}.")
    table = table.sort_values("study_id", kind="stable").reset_index(drop=True)
    drop_df = pd.DataFrame(dropped, columns=["row", "reason", "value"])
    return ReadResult(table, ReadReport(str(p), n_read, len(table), dropped=drop_df))
