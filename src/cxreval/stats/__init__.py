"""Statistical kernels the analyses share: rank correlations, the AUC kernel, the latent-class EM, normal scores.

Each analysis package (classification, ranking, latent, fusion, mrmc, planning, iqa, ...) imports these from
here, never from another analysis package. The rank correlations with ties are in
:mod:`cxreval.stats._rank_correlation`.
"""

from __future__ import annotations

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
    "normal_scores",
    "spearman_rho",
    "spearman_rho_d2",
]
