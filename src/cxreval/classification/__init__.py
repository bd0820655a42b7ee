"""ROC-AUC of many models against many references, with patient-level bootstrap confidence intervals.

Per finding, and two averages over the evaluated findings: the *macro* average (``finding='macro'``, the mean
of the per-finding AUCs) and the *micro* average (``finding='micro'``, the XQA paper's "Micro Avg.", Table 28:
one AUC of every (study, finding) pair pooled, each scored by the model's score for that finding, equal to
``sklearn.metrics.roc_auc_score`` on the pooled labels and scores). Both use the same patient bootstrap: a
patient drawn ``c`` times weighs ``c`` in every pooled pair of its studies.

The AUC is the tie-aware Mann–Whitney form, equal to ``sklearn.metrics.roc_auc_score``:

.. math:: \\mathrm{AUC} = \\frac{\\sum_{i \\in P} \\sum_{j \\in N} w_i w_j \\,([s_i > s_j] + \\tfrac12 [s_i = s_j])}
          {\\sum_{i \\in P} w_i \\; \\sum_{j \\in N} w_j}

with integer weights ``w`` (bootstrap counts). It is computed with one sort of the scores per
model × finding (× reference, for its label mask). The sorted negatives are cut into segments at every
positive score (``searchsorted`` once), and one sparse ``(segments, patients)`` count matrix per model ×
finding × reference turns the plan's ``(patients, replicates)`` counts into, for every replicate at once,
each segment's negative weight and the positive weight reading each break (a single sparse-dense product,
no per-replicate gather over the studies); the segment weights are accumulated and dotted with the positive
weights. Every sum is an exact integer, so the replicate AUCs equal a loop of ``roc_auc_score`` over the same
resampled indices to floating-point rounding (~1e-16).

The package: :mod:`~cxreval.classification._auc_score` (:func:`roc_auc_score`, :func:`weighted_auc`),
:mod:`~cxreval.classification.blocks` (the block driver), :mod:`~cxreval.classification._evaluate`
(:func:`evaluate_auc`, :func:`evaluate_auc_prepared`) and :mod:`~cxreval.classification._files`
(:func:`evaluate_auc_files`, what ``cxreval classify`` runs). The paired comparison (:func:`compare_auc`,
:func:`delong_test`, :func:`compare_best_models`) lives in :mod:`cxreval.classification._comparison`. What the AUC
analyses of classification, latent and ranking share is :mod:`cxreval.stats`': the inputs laid out as arrays
(:func:`~cxreval.stats.prepare_inputs`, :func:`~cxreval.stats.prepare_from_files` →
:class:`~cxreval.stats.PreparedInputs`), the count-weighted kernel, and the results
(:class:`~cxreval.stats.AUCResult`, which owns ``auc``, ``counts`` and ``dropped``; :class:`~cxreval.stats.AUCTableResult`,
a point AUC table).

Examples
--------
>>> import numpy as np
>>> y = np.array([0, 0, 1, 1, 0, 1])
>>> s = np.array([0.1, 0.4, 0.35, 0.8, 0.4, 0.4])
>>> round(roc_auc_score(y, s), 6)
0.666667
>>> from cxreval.classification._auc_score import weighted_auc
>>> w = np.array([[1, 1, 1, 1, 1, 1], [2, 0, 1, 1, 0, 1]])
>>> np.round(weighted_auc(y, s, w), 6).tolist()
[0.666667, 1.0]
"""

from __future__ import annotations

from ._auc_score import roc_auc_score
from ._comparison import (
    DeLongResult,
    PairedComparisonResult,
    SeparabilityResult,
    compare_auc,
    compare_best_models,
    delong_test,
)
from ._evaluate import evaluate_auc, evaluate_auc_prepared
from ._operating_points import OperatingPointResult, evaluate_operating_points

__all__ = [
    "evaluate_auc_prepared",
    "roc_auc_score",
    "evaluate_auc",
    "PairedComparisonResult",
    "compare_auc",
    "DeLongResult",
    "delong_test",
    "SeparabilityResult",
    "compare_best_models",
    "OperatingPointResult",
    "evaluate_operating_points",
]
