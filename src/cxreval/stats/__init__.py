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

from ._auc_inputs import PreparedInputs, prepare_from_files, prepare_inputs
from ._auc_result import AUCResult, AUCTableResult
from ._rank_correlation import kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2

__all__ = [
    "kendall_tau_a",
    "kendall_tau_b",
    "spearman_rho",
    "spearman_rho_d2",
    "PreparedInputs",
    "prepare_inputs",
    "prepare_from_files",
    "AUCResult",
    "AUCTableResult",
]
