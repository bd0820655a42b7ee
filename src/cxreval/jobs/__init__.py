"""The jobs: one function per command, above the analyses.

A job takes what a user has (DataFrames, or paths to files), checks it before any long computation, runs the
analyses and returns one Result that owns every file the command writes: ``cxreval X ... -o out`` is
``job(...).save(out)``, byte for byte (``run.json`` aside). The command-line shells in ``cxreval.cli`` parse
options, call one job, save and print; the analyses below never import a job.
"""

from __future__ import annotations

from ._classify import ClassifierEvaluation, evaluate_classifiers, evaluate_classifiers_files
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
]
