"""The HTML report: one self-contained page (Plotly inlined) from the folders cxreval commands write.

>>> from cxreval.report import KINDS
>>> [k.name for k in KINDS][:3]
['audit', 'classification', 'ranking']
"""

from __future__ import annotations

from .html import ReportResult, find_result_folders, render_report, write_report
from .sections import KINDS, Section, Unavailable, build_sections, detect_kinds

__all__ = [
    "KINDS",
    "ReportResult",
    "Section",
    "Unavailable",
    "build_sections",
    "detect_kinds",
    "find_result_folders",
    "render_report",
    "write_report",
]
