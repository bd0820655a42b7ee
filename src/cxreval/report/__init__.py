"""The HTML report: one self-contained page (Plotly inlined) from the folders cxreval commands write.

>>> from cxreval.report import KINDS
>>> [k.name for k in KINDS][:3]
['audit', 'classification', 'ranking']
"""

from __future__ import annotations

from .html import NoResultsError, ReportResult, find_result_folders, render_report, write_report
from .key_findings import KeyFinding, key_finding
from .pdf import PdfError, PdfUnavailableError, find_chromium, print_pdf
from .sections import KINDS, Section, Unavailable, build_sections, detect_kinds
from .thresholds import Thresholds, load_thresholds

__all__ = [
    "KINDS",
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
    "render_report",
    "write_report",
]
