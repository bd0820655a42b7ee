"""Per-group metrics over every bootstrap replicate at once, their gaps, intervals and Holm-adjusted p-values.

One model × finding × reference × attribute at a time: the per-patient counts of each group (positives,
negatives, true positives, true negatives, predicted positives) form ``(n_patients, n_groups)`` matrices, and
one product with the plan's ``(n_patients, 1 + B)`` count matrix gives every replicate's counts of every group
(column 0 of the counts is all ones: the estimate). The AUC of a group uses the count-weighted kernel of
:mod:`cxreval.stats` (:class:`~cxreval.stats._auc_kernel.AUCIndex`), one sparse product per group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..bootstrap import summarize_distribution
from ..stats._auc_kernel import AUCIndex

__all__ = ["METRICS", "GroupMetrics", "group_metrics", "holm", "gap_summary", "pvalues"]

METRICS: tuple[str, ...] = ("auc", "sensitivity", "specificity", "fnr", "selection_rate")
"""The metrics of a subgroup: ROC-AUC, and at the operating point sensitivity (recall), specificity, false
negative rate (the under-diagnosis rate, 1 - sensitivity) and selection rate (the share called positive)."""


@dataclass(frozen=True)
class GroupMetrics:
    """Per metric, ``value[g, b]`` and ``comparator[g, b]`` (the rest of the studies, or the reference group) for
    every group ``g`` and column ``b`` of the counts (0: the estimate; 1..B: the replicates); the counts of each
    group and of its comparator."""

    value: dict[str, np.ndarray]
    comparator: dict[str, np.ndarray]
    n_pos: np.ndarray
    n_neg: np.ndarray
    n_pos_comparator: np.ndarray
    n_neg_comparator: np.ndarray


def _per_patient(
    pat: np.ndarray, code: np.ndarray, weight: np.ndarray, n_pat: int, n_groups: int
) -> np.ndarray:
    keep = code >= 0
    flat = np.bincount(pat[keep] * n_groups + code[keep], weights=weight[keep], minlength=n_pat * n_groups)
    return flat.reshape(n_pat, n_groups)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    return np.where(den > 0, out, np.nan)


def group_metrics(
    y: np.ndarray,
    s: np.ndarray,
    pat: np.ndarray,
    code: np.ndarray,
    ct: np.ndarray,
    *,
    n_groups: int,
    threshold: float,
    reference_group: int | None,
) -> GroupMetrics:
    """Every metric of every group and of its comparator, for every column of ``ct``.

    Parameters
    ----------
    y, s : ndarray of shape (n,)
        Labels (bool) and scores of the studies a reference labels and the model scores.
    pat, code : ndarray of int, shape (n,)
        Each study's patient (a row of ``ct``) and group (-1: no value, left out).
    ct : ndarray of int32, shape (n_patients, 1 + B)
        Patient counts: column 0 all ones, then the replicates of the plan.
    """
    n_pat = ct.shape[0]
    pred = s >= threshold
    ctf = ct.T.astype(np.float64)
    parts = {
        "pos": y,
        "neg": ~y,
        "tp": y & pred,
        "tn": ~y & ~pred,
        "sel": pred,
    }
    group = {k: ctf @ _per_patient(pat, code, v.astype(float), n_pat, n_groups) for k, v in parts.items()}
    if reference_group is None:
        other = {k: v.sum(axis=1, keepdims=True) - v for k, v in group.items()}
    else:
        other = {k: np.repeat(v[:, [reference_group]], n_groups, axis=1) for k, v in group.items()}

    def rates(c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        sens = _ratio(c["tp"], c["pos"])
        return {
            "sensitivity": sens,
            "specificity": _ratio(c["tn"], c["neg"]),
            "fnr": 1.0 - sens,
            "selection_rate": _ratio(c["sel"], c["pos"] + c["neg"]),
        }

    value, comp = rates(group), rates(other)
    aucs = np.full((n_groups, ct.shape[1]), np.nan)
    rest = np.full_like(aucs, np.nan)
    top = int(ct.max(initial=1))
    for g in range(n_groups):
        aucs[g] = _auc(y, s, pat, code == g, ct, top)
        if reference_group is None:
            rest[g] = _auc(y, s, pat, (code >= 0) & (code != g), ct, top)
    if reference_group is not None:
        rest[:] = aucs[reference_group]
    value["auc"], comp["auc"] = aucs.T, rest.T
    return GroupMetrics(
        value={k: v.T for k, v in value.items()},
        comparator={k: v.T for k, v in comp.items()},
        n_pos=group["pos"][0].astype(int),
        n_neg=group["neg"][0].astype(int),
        n_pos_comparator=other["pos"][0].astype(int),
        n_neg_comparator=other["neg"][0].astype(int),
    )


def _auc(
    y: np.ndarray, s: np.ndarray, pat: np.ndarray, sub: np.ndarray, ct: np.ndarray, top: int
) -> np.ndarray:
    ys = y[sub]
    if not ys.any() or ys.all():
        return np.full(ct.shape[1], np.nan)
    return AUCIndex(ys, s[sub]).auc_grouped(ct, pat[sub], ct_max=top)


def pvalues(gap: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Two-sided Wald p-values of ``gap / sd`` (``sd`` the bootstrap standard error); NaN where undefined, 1 for
    a zero gap of zero spread."""
    out = np.full(gap.shape, np.nan)
    for i, (g, e) in enumerate(zip(gap.tolist(), sd.tolist())):
        if not (math.isfinite(g) and math.isfinite(e)):
            continue
        out[i] = 1.0 if g == 0 else (0.0 if e == 0 else math.erfc(abs(g / e) / math.sqrt(2.0)))
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of the finite p-values of one family (NaN stays NaN)."""
    adjusted = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    ranked = finite[np.argsort(p[finite], kind="stable")]
    factor = len(ranked) - np.arange(len(ranked))
    adjusted[ranked] = np.clip(np.maximum.accumulate(factor * p[ranked]), None, 1.0)
    return adjusted


def gap_summary(
    value: np.ndarray, comparator: np.ndarray, *, confidence_level: float
) -> dict[str, np.ndarray]:
    """Estimates (column 0), percentile intervals of the replicates (columns 1..B) of ``value`` and of ``value -
    comparator``, the gap's Wald p-value and the count of undefined replicates."""
    gap = value - comparator
    v = summarize_distribution(value[:, 1:], confidence_level=confidence_level)
    d = summarize_distribution(gap[:, 1:], confidence_level=confidence_level)
    return {
        "value": value[:, 0],
        "ci_low": v["ci_low"],
        "ci_high": v["ci_high"],
        "comparator_value": comparator[:, 0],
        "gap": gap[:, 0],
        "gap_ci_low": d["ci_low"],
        "gap_ci_high": d["ci_high"],
        "pvalue": pvalues(gap[:, 0], d["sd"]),
        "n_undefined": d["n_undefined"],
    }
