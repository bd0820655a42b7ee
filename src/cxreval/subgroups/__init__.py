"""Subgroups and calibration: does a model fail some patients more than others, and are its probabilities honest?

:func:`evaluate_subgroups` takes predictions, labels and a metadata table keyed by ``study_id`` (sex, age band,
view, site, ...), and reports, per model × finding × reference × group of each attribute (a column, or the
intersection ``"sex*view"`` of two):

- the ROC-AUC, and at one operating point (a threshold, or a fixed specificity chosen on all studies) the
  sensitivity, specificity, false-negative rate (the under-diagnosis rate) and selection rate;
- the gap to the rest of the studies (or to a named reference group) with a percentile interval from a
  patient-clustered bootstrap (one plan shared by every model, finding and reference, vectorised over the
  replicates), a two-sided Wald p-value from the bootstrap standard error and Holm's adjustment across the groups
  of the attribute;
- under every reference side by side, and the verdict where the gap changes sign or significance with the
  reference: a gap measured against text-mined labels may be the labeller's, not the model's;
- calibration per group: reliability bins, ECE (plug-in and debiased), the Brier score and its decomposition,
  calibration intercept and slope (:mod:`cxreval.subgroups._calibration` states the formulas).

A group where a metric is undefined (no positives, no negatives, no labelled study, no metadata value) is a row
marked ``estimable=False`` with its ``reason``, never dropped. :func:`simulate_subgroup_set` draws a set with a
known truth (a model without a gap, a labeller with one). The user guide's page is ``docs/subgroups.md``.
"""

from __future__ import annotations

from ._evaluate import evaluate_subgroups
from ._result import SubgroupResult
from ._simulation import SimulatedSubgroupSet, simulate_subgroup_set

__all__ = ["evaluate_subgroups", "SubgroupResult", "simulate_subgroup_set", "SimulatedSubgroupSet"]
