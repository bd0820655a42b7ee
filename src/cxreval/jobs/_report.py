"""The job of ``cxreval report``: result folders -> one self-contained HTML page (and its PDF)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._validation import check_paths
from ..exceptions import InvalidParameterError

if TYPE_CHECKING:
    from ..report import ReportResult

__all__ = ["write_report_page"]


def write_report_page(
    result_dirs: Sequence[str | Path],
    out: str | Path = "report.html",
    *,
    title: str = "cxreval report",
    thresholds: str | Path | None = None,
    pdf: bool = False,
    overwrite: bool = False,
) -> ReportResult:
    """Write the report of ``result_dirs`` to the HTML file ``out`` and, with ``pdf``, print it to ``out`` with
    the suffix ``.pdf`` (``cxreval report``).

    The thresholds file is read, ``out`` (and the PDF, whose printer must be found) checked before any work:
    neither may replace a file the report reads nor, without ``overwrite``, an existing file. Then
    :func:`cxreval.report.write_report` and :func:`cxreval.report.print_pdf`.

    Parameters
    ----------
    result_dirs : sequence of paths
        Folders written by cxreval commands, or their parent folder.
    out : path, default='report.html'
        The HTML file, written atomically.
    title : str, default='cxreval report'
        The page title.
    thresholds : path, optional
        JSON file of verdict thresholds (:func:`cxreval.report.load_thresholds`); default the built-in ones.
    pdf : bool, default=False
        Also print the page to PDF with headless Chromium.
    overwrite : bool, default=False
        Replace an existing ``out`` (and its PDF).

    Returns
    -------
    res : ReportResult
        With ``pdf`` the PDF's path.
    """
    from ..outputs._folder import check_output_path
    from ..report import write_report
    from ..report._html import report_inputs
    from ..report._pdf import find_chromium, print_pdf
    from ..report._thresholds import load_thresholds

    check_paths("write_report_page", ("out",), out=out, thresholds=thresholds)
    out = Path(out)
    th = load_thresholds(thresholds)
    inputs = [*report_inputs(result_dirs), *([Path(thresholds)] if thresholds is not None else [])]
    check_output_path(out, overwrite=overwrite, kind="file", inputs=inputs)
    pdf_out = out.with_suffix(".pdf")
    if pdf:  # checked before any work
        if pdf_out.absolute() == out.absolute():
            raise InvalidParameterError(
                f"out= {str(out)!r} with pdf=True: the PDF (out= with .pdf) would replace the "
                "HTML page it is printed from. Give out= a .html name."
            )
        find_chromium()
        check_output_path(pdf_out, overwrite=overwrite, kind="file", inputs=inputs)
    res = write_report(result_dirs, out, title=title, thresholds=th, overwrite=overwrite)
    if not pdf:
        return res
    return dataclasses.replace(res, pdf=print_pdf(res.path, pdf_out, overwrite=overwrite, inputs=inputs))
