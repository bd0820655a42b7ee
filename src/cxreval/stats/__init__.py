"""Statistical kernels the analyses share: rank correlations, the AUC kernel, the latent-class EM, normal scores.

Each analysis package (classification, ranking, latent, fusion, mrmc, planning, iqa, ...) imports these from
here, never from another analysis package: the rank correlations with ties (``stats/_rank_correlation.py``),
normal scores (``stats/_normal_scores.py``), Dawid–Skene EM on answer patterns (``stats/_dawid_skene.py``,
``stats/_answer_patterns.py``).
"""

from __future__ import annotations

from ._answer_patterns import AnswerPatterns, answer_patterns, group_patterns
from ._dawid_skene import DawidSkeneFit, dawid_skene_em, fit_dawid_skene
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
    "group_patterns",
    "DawidSkeneFit",
    "dawid_skene_em",
    "fit_dawid_skene",
]
