"""The HTML report: one self-contained page (Plotly inlined) from the folders cxreval commands write.

>>> from cxreval.report._sections import KINDS
>>> [k.name for k in KINDS][:3]
['audit', 'classification', 'ranking']
"""

from __future__ import annotations

from ._html import ReportResult, write_report

__all__ = [
    "ReportResult",
    "write_report",
]
