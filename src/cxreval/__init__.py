"""cxreval: clinically grounded evaluation of chest X-ray machine learning.

Does a conclusion (which model, localizer or image-processing method is best) survive a change of
evaluation reference? cxreval loads every label source into one table and measures how rankings move.

Importing ``cxreval`` is cheap and has no side effects: only the exceptions load eagerly. The jobs
re-exported here (``cxreval.compare_references``, ``cxreval.evaluate_classifiers``, ...), the dataset
loaders and the subpackages (``cxreval.classification``, ``cxreval.report``, ...) are imported on first
access (PEP 562 module ``__getattr__``), so ``import cxreval`` does not pull in pandas, SciPy or plotly.
The analyses' functions and results live in their packages (``from cxreval.fusion import fuse_labels``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__
from .exceptions import (
    CxrevalError,
    CxrevalWarning,
    DataUnavailableError,
    InvalidParameterError,
    SchemaError,
    UndefinedMetricWarning,
)

# public name -> the submodule (relative to cxreval) that defines it; imported on first access
_LAZY_ATTRS: dict[str, str] = {
    # the jobs of the commands and their results
    "compare_sources_files": "jobs",
    "ClassifierEvaluation": "jobs",
    "evaluate_classifiers": "jobs",
    "evaluate_classifiers_files": "jobs",
    "audit_dataset_files": "jobs",
    "export_dataset_files": "jobs",
    "fetch_dataset_metadata": "jobs",
    "list_registered_datasets": "jobs",
    "split_dataset_files": "jobs",
    "fuse_and_compare": "jobs",
    "fuse_and_compare_files": "jobs",
    "compare_metrics_file": "jobs",
    "compare_with_experts_files": "jobs",
    "degrade_image_folder": "jobs",
    "list_iqa_metrics": "jobs",
    "score_pairs_file": "jobs",
    "label_reports_file": "jobs",
    "evaluate_localization_files": "jobs",
    "evaluate_reader_study": "jobs",
    "evaluate_reader_study_files": "jobs",
    "plan_reader_study_files": "jobs",
    "plan_relabelling_files": "jobs",
    "ReferenceComparison": "jobs",
    "compare_auc_table": "jobs",
    "compare_auc_table_file": "jobs",
    "compare_references": "jobs",
    "compare_references_files": "jobs",
    "ReaderStudyPlanResult": "jobs",
    "plan_reader_study": "jobs",
    "write_report_page": "jobs",
    "real_boxes_file": "jobs",
    "simulate_localization_study_files": "jobs",
    # data, execution and the type aliases of the public signatures
    "load_dataset": "datasets",
    "list_datasets": "datasets",
    "get_executor": "executor",
    "ExecutorLike": "executor",
    "RNGLike": "_typing",
    "PathLike": "_typing",
    "FindingsLike": "_typing",
    "Studies": "_typing",
    # the option groups of the jobs
    "Design": "options",
    "Resampling": "options",
    "Compute": "options",
}

_SUBMODULES: tuple[str, ...] = (
    "agreement",
    "bootstrap",
    "classification",
    "datasets",
    "exceptions",
    "executor",
    "findings",
    "fusion",
    "iqa",
    "jobs",
    "labels",
    "options",
    "localization",
    "ranking",
    "report",
    "results",
)

__all__ = [
    "CxrevalError",
    "CxrevalWarning",
    "DataUnavailableError",
    "InvalidParameterError",
    "SchemaError",
    "UndefinedMetricWarning",
    "compare_sources_files",
    "ClassifierEvaluation",
    "evaluate_classifiers",
    "evaluate_classifiers_files",
    "audit_dataset_files",
    "export_dataset_files",
    "fetch_dataset_metadata",
    "list_registered_datasets",
    "split_dataset_files",
    "fuse_and_compare",
    "fuse_and_compare_files",
    "compare_metrics_file",
    "compare_with_experts_files",
    "degrade_image_folder",
    "list_iqa_metrics",
    "score_pairs_file",
    "label_reports_file",
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
    "ReaderStudyPlanResult",
    "plan_reader_study",
    "write_report_page",
    "real_boxes_file",
    "simulate_localization_study_files",
    "load_dataset",
    "list_datasets",
    "get_executor",
    "ExecutorLike",
    "RNGLike",
    "PathLike",
    "FindingsLike",
    "Studies",
    "Design",
    "Resampling",
    "Compute",
]

if TYPE_CHECKING:  # what the lazy names resolve to, for type checkers and IDEs
    from ._typing import FindingsLike, PathLike, RNGLike, Studies
    from .datasets import list_datasets, load_dataset
    from .executor import ExecutorLike, get_executor
    from .jobs import (
        ClassifierEvaluation,
        ReaderStudyPlanResult,
        ReferenceComparison,
        audit_dataset_files,
        compare_auc_table,
        compare_auc_table_file,
        compare_metrics_file,
        compare_references,
        compare_references_files,
        compare_sources_files,
        compare_with_experts_files,
        degrade_image_folder,
        evaluate_classifiers,
        evaluate_classifiers_files,
        evaluate_localization_files,
        evaluate_reader_study,
        evaluate_reader_study_files,
        export_dataset_files,
        fetch_dataset_metadata,
        fuse_and_compare,
        fuse_and_compare_files,
        label_reports_file,
        list_iqa_metrics,
        list_registered_datasets,
        plan_reader_study,
        plan_reader_study_files,
        plan_relabelling_files,
        real_boxes_file,
        score_pairs_file,
        simulate_localization_study_files,
        split_dataset_files,
        write_report_page,
    )
    from .options import Compute, Design, Resampling


def __getattr__(name: str) -> Any:
    """Import a subpackage or a re-exported entry point on first access (PEP 562)."""
    if name in _LAZY_ATTRS:
        value = getattr(importlib.import_module(f".{_LAZY_ATTRS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
