"""Report-derived labels: a section-aware, rule-based labeller for radiology report text.

The pipeline: :func:`~cxreval.datasets.report_files.read_report_file` (CSV/Parquet, or the OpenI archive) ->
:func:`~cxreval.labeller.split_sections` (FINDINGS, IMPRESSION and their header variants) ->
:class:`~cxreval.labeller.Engine` (sentences, finding mentions, scoped negation and uncertainty)
-> :func:`~cxreval.labeller.label_reports` (report-level states per section source, every one
traced to its mentions) -> :func:`~cxreval.labeller.compute_precision_recall` (scoring against a
reference source with bootstrap CIs). The phrases and triggers are YAML data (:func:`cxreval.labeller.load_rules`).

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1"], "text": ["FINDINGS: No effusion. IMPRESSION: Cardiomegaly."]})
>>> res = label_reports(t, sections="findings,impression")
>>> res.labels.query("finding == 'Cardiomegaly'")[["source", "state"]].to_string(index=False)
'           source  state\\n  report_findings     -1\\nreport_impression      2'
"""

from ._labeller import ReportLabelsResult, label_reports
from ._rules import load_rules
from ._validation import LabellerValidationResult, compute_precision_recall, prf_markdown

__all__ = [
    "ReportLabelsResult",
    "label_reports",
    "load_rules",
    "LabellerValidationResult",
    "compute_precision_recall",
    "prf_markdown",
]
