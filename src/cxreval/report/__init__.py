"""The HTML report: one self-contained page (Plotly inlined) from the folders cxreval commands write.

>>> from cxreval.report import KINDS
>>> [k.name for k in KINDS][:3]
['audit', 'classification', 'ranking']
"""

from __future__ import annotations

from ._html import (
    NoResultsError,
    RenderedReport,
    ReportResult,
    find_result_folders,
    render_report,
    report_inputs,
    write_report,
)
from ._key_findings import KeyFinding, key_finding
from ._pdf import PdfError, PdfUnavailableError, find_chromium, print_pdf
from ._sections import KINDS, Section, Unavailable, build_sections, detect_kinds, result_files
from ._thresholds import LANDIS_KOCH, SRCC_BANDS, Thresholds, load_thresholds

__all__ = [
    "KINDS",
    "result_files",
    "LANDIS_KOCH",
    "SRCC_BANDS",
    "KeyFinding",
    "NoResultsError",
    "PdfError",
    "PdfUnavailableError",
    "Thresholds",
    "find_chromium",
    "key_finding",
    "load_thresholds",
    "print_pdf",
    "ReportResult",
    "Section",
    "Unavailable",
    "build_sections",
    "detect_kinds",
    "find_result_folders",
    "report_inputs",
    "RenderedReport",
    "render_report",
    "write_report",
]
