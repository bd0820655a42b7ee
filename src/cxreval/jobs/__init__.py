"""The jobs: one function per command, above the analyses.

A job takes what a user has (DataFrames, or paths to files), checks it before any long computation, runs the
analyses and returns one Result that owns every file the command writes: ``cxreval X ... -o out`` is
``job(...).save(out)``, byte for byte (``run.json`` aside). The command-line shells in ``cxreval.cli`` parse
options, call one job, save and print; the analyses below never import a job.
"""

from __future__ import annotations

from ._classify import ClassifierEvaluation, evaluate_classifiers, evaluate_classifiers_files
from ._data import (
    audit_dataset_files,
    export_dataset_files,
    fetch_dataset_metadata,
    list_registered_datasets,
    split_dataset_files,
)
from ._iqa import (
    compare_metrics_file,
    compare_with_experts_files,
    degrade_image_folder,
    list_iqa_metrics,
    score_pairs_file,
)
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

__all__: list[str] = [
    "ClassifierEvaluation",
    "evaluate_classifiers",
    "evaluate_classifiers_files",
    "ReferenceComparison",
    "compare_references",
    "compare_references_files",
    "compare_auc_table",
    "compare_auc_table_file",
    "evaluate_reader_study",
    "evaluate_reader_study_files",
    "plan_relabelling_files",
    "plan_reader_study",
    "plan_reader_study_files",
    "ReaderStudyPlanResult",
    "CASE_GRID",
    "list_iqa_metrics",
    "degrade_image_folder",
    "score_pairs_file",
    "compare_metrics_file",
    "compare_with_experts_files",
    "fetch_dataset_metadata",
    "list_registered_datasets",
    "audit_dataset_files",
    "split_dataset_files",
    "export_dataset_files",
    "write_report_page",
]
