"""cxreval: clinically grounded evaluation of chest X-ray machine learning.

Does a conclusion (which model, localizer or image-processing method is best) survive a change of
evaluation reference? cxreval loads every label source into one table and measures how rankings move.

Importing ``cxreval`` is cheap and has no side effects: only the exceptions and the finding vocabulary
load eagerly. The subpackages (``cxreval.classification``, ``cxreval.report``, ...) and the entry points
re-exported here (``cxreval.evaluate_auc``, ``cxreval.read_labels``, ...) are imported on first access
(PEP 562 module ``__getattr__``), so ``import cxreval`` does not pull in pandas, SciPy or plotly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .exceptions import (
    CxrevalError,
    CxrevalWarning,
    DataUnavailableError,
    InvalidParameterError,
    SchemaError,
    UndefinedMetricWarning,
)
from .findings import ALIASES, CHESTXRAY8, CHESTXRAY14, CHEXPERT, canonical_finding

# public name -> the submodule (relative to cxreval) that defines it; imported on first access
_LAZY_ATTRS: dict[str, str] = {
    # label tables and results
    "LabelState": "schema",
    "binarize": "schema",
    "read_labels": "labels",
    "read_wide_labels": "labels",
    "validate_label_table": "labels",
    "validate_predictions": "labels",
    "ConfidenceInterval": "results",
    "ReadReport": "results",
    "ReadResult": "results",
    # classification, bootstrap, ranking
    "evaluate_auc": "classification",
    "roc_auc_score": "classification",
    "compare_auc": "classification",
    "delong_test": "classification",
    "AUCResult": "stats",
    "draw_plan": "bootstrap",
    "ResamplingPlan": "bootstrap",
    "BootstrapResult": "bootstrap",
    "compare_rankings": "ranking",
    "compare_table_rankings": "ranking",
    "RankingStabilityResult": "ranking",
    "evaluate_classifiers": "jobs",
    "evaluate_classifiers_files": "jobs",
    "ClassifierEvaluation": "jobs",
    "compare_references": "jobs",
    "compare_references_files": "jobs",
    "compare_auc_table": "jobs",
    "compare_auc_table_file": "jobs",
    "ReferenceComparison": "jobs",
    # agreement and fusion
    "compute_agreement": "agreement",
    "agreement_scores": "agreement",
    "cohen_kappa": "agreement",
    "AgreementResult": "agreement",
    "get_fusion": "fusion",
    "list_fusion": "fusion",
    "fuse_labels": "fusion",
    "FusionResult": "fusion",
    "compare_sources": "agreement",
    "SourceComparisonResult": "agreement",
    "AgreementTableResult": "agreement",
    "fuse_and_compare": "jobs",
    "label_reports": "labeller",
    "ReportLabelsResult": "labeller",
    # localization, IQA, report
    "LocalizationProtocol": "localization",
    "heatmaps_to_boxes": "localization",
    "score_images": "localization",
    "evaluate_heatmap_files": "localization",
    "LocalizationResult": "localization",
    "simulate_localization_study": "localization",
    "LocalizationStudy": "localization",
    "get_metric": "iqa",
    "list_metrics": "iqa",
    "score_pairs": "iqa",
    "degrade_folder": "iqa",
    "compare_metrics": "iqa",
    "compare_with_experts": "iqa",
    "DegradeResult": "iqa",
    "ScoresResult": "iqa",
    "MetricComparisonResult": "iqa",
    "ExpertAgreementResult": "iqa",
    "finetune": "predict",
    "FinetuneResult": "predict",
    "PredictResult": "predict",
    "write_report": "report",
    # data, splits, execution, published tables
    "load_dataset": "datasets",
    "list_datasets": "datasets",
    "fetch_metadata": "datasets",
    "metadata_path": "datasets",
    "patient_split": "datasets",
    "audit_split": "datasets",
    "read_split_lists": "datasets",
    "get_executor": "executor",
    "load_xqa_auc_table": "ranking",
    # type aliases of the public signatures
    "RNGLike": "_typing",
    "PathLike": "_typing",
    "FindingsLike": "_typing",
    "Studies": "_typing",
    "ExecutorLike": "executor",
    # jobs of the commands and their results (one line each)
    "audit_dataset": "datasets.audit",
    "DatasetAudit": "datasets.audit",
    "split_dataset": "datasets",
    "DatasetSplit": "datasets",
    "export_dataset": "datasets",
    "DatasetExport": "datasets",
    "FetchResult": "datasets",
    "ReportResult": "report",
    "run_demo": "demo",
    "DemoResult": "demo",
    "create_study": "reader",
    "export_study": "reader",
    "StudyCreated": "reader",
    "check_study": "reader",
    "StudyStatus": "reader",
    "StudyExport": "reader.export",
    "plan_relabelling": "planning",
    "RelabelPlanResult": "planning",
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
    "localization",
    "ranking",
    "report",
    "results",
)

__all__ = [
    "__version__",
    "CxrevalError",
    "CxrevalWarning",
    "DataUnavailableError",
    "InvalidParameterError",
    "SchemaError",
    "UndefinedMetricWarning",
    "ALIASES",
    "CHESTXRAY8",
    "CHESTXRAY14",
    "CHEXPERT",
    "canonical_finding",
    "LabelState",
    "binarize",
    "read_labels",
    "read_wide_labels",
    "validate_label_table",
    "validate_predictions",
    "ConfidenceInterval",
    "ReadReport",
    "ReadResult",
    "evaluate_auc",
    "roc_auc_score",
    "compare_auc",
    "delong_test",
    "AUCResult",
    "draw_plan",
    "ResamplingPlan",
    "BootstrapResult",
    "compare_rankings",
    "compare_table_rankings",
    "RankingStabilityResult",
    "evaluate_classifiers",
    "evaluate_classifiers_files",
    "ClassifierEvaluation",
    "compare_references",
    "compare_references_files",
    "compare_auc_table",
    "compare_auc_table_file",
    "ReferenceComparison",
    "compute_agreement",
    "agreement_scores",
    "cohen_kappa",
    "AgreementResult",
    "get_fusion",
    "list_fusion",
    "fuse_labels",
    "FusionResult",
    "compare_sources",
    "SourceComparisonResult",
    "AgreementTableResult",
    "fuse_and_compare",
    "label_reports",
    "ReportLabelsResult",
    "LocalizationProtocol",
    "heatmaps_to_boxes",
    "score_images",
    "evaluate_heatmap_files",
    "LocalizationResult",
    "simulate_localization_study",
    "LocalizationStudy",
    "get_metric",
    "list_metrics",
    "score_pairs",
    "degrade_folder",
    "compare_metrics",
    "compare_with_experts",
    "DegradeResult",
    "ScoresResult",
    "MetricComparisonResult",
    "ExpertAgreementResult",
    "finetune",
    "FinetuneResult",
    "PredictResult",
    "write_report",
    "load_dataset",
    "list_datasets",
    "fetch_metadata",
    "metadata_path",
    "patient_split",
    "audit_split",
    "read_split_lists",
    "get_executor",
    "load_xqa_auc_table",
    "create_study",
    "check_study",
    "export_study",
    "StudyCreated",
    "StudyStatus",
    "StudyExport",
    "RNGLike",
    "Studies",
    "ExecutorLike",
    "PathLike",
    "FindingsLike",
    "audit_dataset",
    "DatasetAudit",
    "split_dataset",
    "DatasetSplit",
    "export_dataset",
    "DatasetExport",
    "FetchResult",
    "ReportResult",
    "run_demo",
    "DemoResult",
    "plan_relabelling",
    "RelabelPlanResult",
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
    "localization",
    "ranking",
    "report",
    "results",
]

if TYPE_CHECKING:  # what the lazy names resolve to, for type checkers and IDEs
    from . import (
        agreement,
        bootstrap,
        classification,
        datasets,
        executor,
        fusion,
        iqa,
        jobs,
        labels,
        localization,
        ranking,
        report,
        results,
    )
    from ._typing import FindingsLike, PathLike, RNGLike, Studies
    from .agreement import AgreementResult, agreement_scores, cohen_kappa, compute_agreement
    from .bootstrap import BootstrapResult, ResamplingPlan, draw_plan
    from .classification import compare_auc, delong_test, evaluate_auc, roc_auc_score
    from .datasets import (
        DatasetExport,
        DatasetSplit,
        FetchResult,
        audit_split,
        export_dataset,
        fetch_metadata,
        list_datasets,
        load_dataset,
        metadata_path,
        patient_split,
        read_split_lists,
        split_dataset,
    )
    from .datasets.audit import DatasetAudit, audit_dataset
    from .demo import DemoResult, run_demo
    from .executor import ExecutorLike, get_executor
    from .fusion import FusionResult, fuse_labels, get_fusion, list_fusion
    from .iqa import (
        DegradeResult,
        ExpertAgreementResult,
        MetricComparisonResult,
        ScoresResult,
        compare_metrics,
        compare_with_experts,
        degrade_folder,
        get_metric,
        list_metrics,
        score_pairs,
    )
    from .jobs import (
        ClassifierEvaluation,
        ReferenceComparison,
        compare_auc_table,
        compare_auc_table_file,
        compare_references,
        compare_references_files,
        evaluate_classifiers,
        evaluate_classifiers_files,
    )
    from .labels import read_labels, read_wide_labels, validate_label_table, validate_predictions
    from .localization import (
        LocalizationProtocol,
        LocalizationResult,
        LocalizationStudy,
        evaluate_heatmap_files,
        heatmaps_to_boxes,
        score_images,
        simulate_localization_study,
    )
    from .planning import RelabelPlanResult, plan_relabelling
    from .predict import FinetuneResult, PredictResult, finetune  # type: ignore[no-redef, unused-ignore]
    from .ranking import (
        RankingStabilityResult,
        compare_rankings,
        compare_table_rankings,
        load_xqa_auc_table,
    )
    from .reader import StudyCreated, StudyStatus, check_study, create_study, export_study
    from .reader.export import StudyExport
    from .report import ReportResult, write_report
    from .results import ConfidenceInterval, ReadReport, ReadResult
    from .schema import LabelState, binarize
    from .stats import AUCResult

if TYPE_CHECKING:  # the jobs of agree, fuse and label-reports and what they return
    from .agreement import AgreementTableResult, SourceComparisonResult, compare_sources
    from .jobs import fuse_and_compare
    from .labeller import ReportLabelsResult, label_reports


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
