"""The jobs: one function per command, above the analyses.

A job takes what a user has (DataFrames, or paths to files), checks it before any long computation, runs the
analyses and returns one Result that owns every file the command writes: ``cxreval X ... -o out`` is
``job(...).save(out)``, byte for byte (``run.json`` aside). The command-line shells in ``cxreval.cli`` parse
options, call one job, save and print; the analyses below never import a job.

=================  ==========================================  ============================================
command            job                                         result
=================  ==========================================  ============================================
``agree``          :func:`compare_sources_files`               :class:`~cxreval.agreement.SourceComparisonResult`
``fuse``           :func:`fuse_and_compare_files`              :class:`~cxreval.fusion.FusionResult`
``label-reports``  :func:`label_reports_file`                  :class:`~cxreval.labeller.ReportLabelsResult`
``localize``       :func:`evaluate_localization_files`         :class:`~cxreval.localization.LocalizationResult`
``subgroups``      :func:`evaluate_subgroups_files`            :class:`~cxreval.subgroups.SubgroupResult`
``synth``          :func:`simulate_localization_study_files`   :class:`~cxreval.localization.LocalizationStudy`
=================  ==========================================  ============================================

:func:`fuse_and_compare` is the fusion job on a table in memory (the demo's fusion section).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the private module that defines it; imported on first access (PEP 562), so that importing the
# package loads no analysis: ``cxreval synth`` prints its study without pandas
_LAZY_ATTRS: dict[str, str] = {
    "compare_sources_files": "_agree",
    "ClassifierEvaluation": "_classify",
    "evaluate_classifiers": "_classify",
    "evaluate_classifiers_files": "_classify",
    "audit_dataset_files": "_data",
    "export_dataset_files": "_data",
    "fetch_dataset_metadata": "_data",
    "list_registered_datasets": "_data",
    "split_dataset_files": "_data",
    "DEFAULT_FUSION_METHODS": "_fuse",
    "fuse_and_compare": "_fuse",
    "fuse_and_compare_files": "_fuse",
    "compare_metrics_file": "_iqa",
    "compare_with_experts_files": "_iqa",
    "degrade_image_folder": "_iqa",
    "list_iqa_metrics": "_iqa",
    "score_pairs_file": "_iqa",
    "label_reports_file": "_label_reports",
    "label_rules_text": "_label_reports",
    "evaluate_localization_files": "_localize",
    "evaluate_reader_study": "_mrmc",
    "evaluate_reader_study_files": "_mrmc",
    "plan_reader_study_files": "_plan",
    "plan_relabelling_files": "_plan",
    "ReferenceComparison": "_rank",
    "compare_auc_table": "_rank",
    "compare_auc_table_file": "_rank",
    "compare_references": "_rank",
    "compare_references_files": "_rank",
    "CASE_GRID": "_reader_study_plan",
    "ReaderStudyPlanResult": "_reader_study_plan",
    "plan_reader_study": "_reader_study_plan",
    "write_report_page": "_report",
    "evaluate_subgroups_files": "_subgroups",
    "REAL_BOXES_FETCHED": "_synth",
    "real_boxes_file": "_synth",
    "simulate_localization_study_files": "_synth",
}

__all__ = [
    "compare_sources_files",
    "ClassifierEvaluation",
    "evaluate_classifiers",
    "evaluate_classifiers_files",
    "audit_dataset_files",
    "export_dataset_files",
    "fetch_dataset_metadata",
    "list_registered_datasets",
    "split_dataset_files",
    "DEFAULT_FUSION_METHODS",
    "fuse_and_compare",
    "fuse_and_compare_files",
    "compare_metrics_file",
    "compare_with_experts_files",
    "degrade_image_folder",
    "list_iqa_metrics",
    "score_pairs_file",
    "label_reports_file",
    "label_rules_text",
    "evaluate_localization_files",
    "evaluate_reader_study",
    "evaluate_reader_study_files",
    "plan_reader_study_files",
    "plan_relabelling_files",
    "ReferenceComparison",
    "compare_auc_table",
    "compare_auc_table_file",
    "compare_references",
    "compare_references_files",
    "CASE_GRID",
    "ReaderStudyPlanResult",
    "plan_reader_study",
    "write_report_page",
    "evaluate_subgroups_files",
    "REAL_BOXES_FETCHED",
    "real_boxes_file",
    "simulate_localization_study_files",
]

if TYPE_CHECKING:
    from ._agree import compare_sources_files
    from ._classify import ClassifierEvaluation, evaluate_classifiers, evaluate_classifiers_files
    from ._data import (
        audit_dataset_files,
        export_dataset_files,
        fetch_dataset_metadata,
        list_registered_datasets,
        split_dataset_files,
    )
    from ._fuse import DEFAULT_FUSION_METHODS, fuse_and_compare, fuse_and_compare_files
    from ._iqa import (
        compare_metrics_file,
        compare_with_experts_files,
        degrade_image_folder,
        list_iqa_metrics,
        score_pairs_file,
    )
    from ._label_reports import label_reports_file, label_rules_text
    from ._localize import evaluate_localization_files
    from ._mrmc import evaluate_reader_study, evaluate_reader_study_files
    from ._plan import plan_reader_study_files, plan_relabelling_files
    from ._rank import (
        ReferenceComparison,
        compare_auc_table,
        compare_auc_table_file,
        compare_references,
        compare_references_files,
    )
    from ._reader_study_plan import CASE_GRID, ReaderStudyPlanResult, plan_reader_study
    from ._report import write_report_page
    from ._subgroups import evaluate_subgroups_files
    from ._synth import REAL_BOXES_FETCHED, real_boxes_file, simulate_localization_study_files


def __getattr__(name: str) -> Any:
    """Import a job's module on first access (PEP 562)."""
    if name not in _LAZY_ATTRS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY_ATTRS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
