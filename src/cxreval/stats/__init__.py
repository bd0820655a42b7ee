"""Statistical kernels the analyses share: rank correlations, the AUC kernel, the latent-class EM, normal scores.

Each analysis package (classification, ranking, latent, fusion, mrmc, planning, iqa, ...) imports these from
here, never from another analysis package: the rank correlations with ties (``stats/_rank_correlation.py``),
normal scores (``stats/_normal_scores.py``), Dawid–Skene EM on answer patterns (``stats/_dawid_skene.py``,
``stats/_answer_patterns.py``), and what every AUC analysis (classification, latent, ranking) shares: the
inputs validated and laid out as arrays (:func:`prepare_inputs`, :func:`prepare_from_files` →
:class:`PreparedInputs`; ``stats/_auc_inputs.py``, its choices in ``stats/_auc_choices.py``, finding maps in
``stats/_auc_maps.py``, soft labels in ``stats/_soft_labels.py``), the count-weighted AUC kernel
(``stats/_auc_kernel.py``) and the AUC results with their files (:class:`AUCResult`, :class:`AUCTableResult`;
``stats/_auc_result.py``). The AUC analyses themselves are :mod:`cxreval.classification`'s.
"""

from __future__ import annotations

from ._answer_patterns import AnswerPatterns, GroupPatterns, answer_patterns, group_patterns
from ._auc_inputs import (
    MISSING_SCORES,
    STUDY_DESIGNS,
    PreparedInputs,
    check_design,
    loaded_table,
    prepare_from_files,
    prepare_inputs,
)
from ._auc_kernel import (
    AUCBlock,
    AUCIndex,
    BlockInputs,
    auc_block,
    binary_labels,
    finite_scores,
    positive_weights,
    soft_auc_rows,
    spill_inputs,
    weighted_auc_float,
)
from ._auc_result import (
    AUC_COLUMNS,
    AUC_SUMMARY_FILE,
    COUNT_COLUMNS,
    COVERAGE_COLUMNS,
    DEFAULT_GROUP,
    DROPPED_COLUMNS,
    LABELLED,
    MEAN_MODEL,
    NO_EFFECT,
    NOT_LABELLED,
    NOT_SCORED,
    ONE_CLASS,
    POINT_AUC_COLUMNS,
    AUCResult,
    AUCTableResult,
    markdown_auc_table,
)
from ._dawid_skene import DawidSkeneEM, DawidSkeneFit, dawid_skene_em, fit_dawid_skene
from ._normal_scores import normal_scores
from ._rank_correlation import (
    KENDALL_VARIANTS,
    SPEARMAN_VARIANTS,
    VARIANT_TEXT,
    correlation_function,
    kendall_tau_a,
    kendall_tau_b,
    spearman_rho,
    spearman_rho_d2,
)
from ._soft_labels import SOFT_AUC_MEANING

__all__ = [
    "KENDALL_VARIANTS",
    "SPEARMAN_VARIANTS",
    "VARIANT_TEXT",
    "correlation_function",
    "kendall_tau_a",
    "kendall_tau_b",
    "spearman_rho",
    "spearman_rho_d2",
    "normal_scores",
    "AnswerPatterns",
    "answer_patterns",
    "GroupPatterns",
    "group_patterns",
    "DawidSkeneFit",
    "DawidSkeneEM",
    "dawid_skene_em",
    "fit_dawid_skene",
    "PreparedInputs",
    "prepare_inputs",
    "prepare_from_files",
    "loaded_table",
    "check_design",
    "STUDY_DESIGNS",
    "MISSING_SCORES",
    "AUCResult",
    "AUCTableResult",
    "markdown_auc_table",
    "AUC_COLUMNS",
    "COUNT_COLUMNS",
    "COVERAGE_COLUMNS",
    "DROPPED_COLUMNS",
    "POINT_AUC_COLUMNS",
    "AUC_SUMMARY_FILE",
    "DEFAULT_GROUP",
    "MEAN_MODEL",
    "LABELLED",
    "ONE_CLASS",
    "NO_EFFECT",
    "NOT_LABELLED",
    "NOT_SCORED",
    "AUCIndex",
    "BlockInputs",
    "binary_labels",
    "finite_scores",
    "AUCBlock",
    "auc_block",
    "spill_inputs",
    "positive_weights",
    "soft_auc_rows",
    "weighted_auc_float",
    "SOFT_AUC_MEANING",
]
