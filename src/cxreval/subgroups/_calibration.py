"""Calibration of probabilities against a reference, per group, with patient-bootstrap intervals.

For scores ``p`` in [0, 1] and labels ``y`` in {0, 1}, with ``n_bins`` equal-width bins (bin ``k`` holds ``p`` in
``((k-1)/K, k/K]``, the first also 0: scikit-learn's ``calibration_curve(strategy='uniform')``), ``n_k``
studies, mean score ``p_k`` and fraction positive ``y_k``, over ``N`` studies of prevalence ``y_bar``:

- Brier score ``mean((p - y)^2)``; its binned Murphy decomposition ``reliability = sum n_k/N (p_k - y_k)^2``,
  ``resolution = sum n_k/N (y_k - y_bar)^2``, ``uncertainty = y_bar (1 - y_bar)``, and the within-bin remainder
  ``brier - (reliability - resolution + uncertainty)`` (zero when the scores are constant within each bin);
- ``ece = sum n_k/N |p_k - y_k|`` (the plug-in L1 expected calibration error), ``ece_l2`` its L2 form
  ``sqrt(reliability)``, and ``ece_l2_debiased = sqrt(max(0, sum n_k/N [(p_k - y_k)^2 - y_k (1 - y_k) / (n_k -
  1)]))``: the plug-in squared error less the sampling variance of each bin's fraction (Kumar, Liang & Ma,
  "Verified uncertainty calibration", NeurIPS 2019), which the plug-in estimate adds on small bins (bins of one
  study keep their plug-in term);
- the calibration intercept (``a`` of ``logit P(y) = a + logit(p)``: calibration-in-the-large, 0 when calibrated)
  and slope (``b`` of ``logit P(y) = a + b logit(p)``: 1 when calibrated, below 1 when over-confident), by
  Newton's method on the logistic likelihood, ``p`` clipped to ``[1e-12, 1 - 1e-12]``.

The Brier score and both ECEs have percentile intervals over the patient bootstrap (the replicates' bin sums
come from one product of the plan's counts with per-patient sums); intercept and slope are point estimates. A
row whose intercept or slope is undefined (a group with one class, or scores that separate the classes) says so in
``reason``.
"""

from __future__ import annotations

import numpy as np

from ..bootstrap import summarize_distribution

__all__ = ["N_BINS", "calibration_rows", "logistic_calibration", "reliability_rows"]

N_BINS = 10
_EPS = 1e-12


def _bin_of(p: np.ndarray, n_bins: int) -> np.ndarray:
    return np.searchsorted(np.linspace(0.0, 1.0, n_bins + 1)[1:-1], p)


def _sums(
    y: np.ndarray,
    p: np.ndarray,
    pat: np.ndarray,
    code: np.ndarray,
    ct: np.ndarray,
    n_groups: int,
    n_bins: int,
) -> dict[str, np.ndarray]:
    """Every column of ``ct``'s bin sums per group: ``n``, ``p``, ``y``, ``sq`` (of ``(p - y)^2``), shape
    ``(1 + B, n_groups, n_bins)``."""
    keep = code >= 0
    cell = pat[keep] * (n_groups * n_bins) + code[keep] * n_bins + _bin_of(p[keep], n_bins)
    size = ct.shape[0] * n_groups * n_bins
    ctf = ct.T.astype(np.float64)
    yf = y[keep].astype(float)
    out = {}
    for name, w in (("n", None), ("p", p[keep]), ("y", yf), ("sq", (p[keep] - yf) ** 2)):
        per = np.bincount(cell, weights=w, minlength=size).reshape(ct.shape[0], n_groups * n_bins)
        out[name] = (ctf @ per).reshape(ct.shape[1], n_groups, n_bins)
    return out


def _scores(s: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Brier, its decomposition and the ECEs from bin sums (each ``(..., n_groups)``)."""
    n = s["n"]
    total = n.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pk, yk = s["p"] / n, s["y"] / n
        share = n / total[..., None]
        ybar = s["y"].sum(axis=-1) / total
        diff = np.where(n > 0, pk - yk, 0.0)
        rel = (share * diff**2).sum(axis=-1)
        res = (share * np.where(n > 0, yk - ybar[..., None], 0.0) ** 2).sum(axis=-1)
        var = np.where(n > 1, yk * (1 - yk) / (n - 1), 0.0)
        debiased = (share * (diff**2 - var)).sum(axis=-1)
        brier = s["sq"].sum(axis=-1) / total
    unc = ybar * (1 - ybar)
    return {
        "brier": brier,
        "reliability": rel,
        "resolution": res,
        "uncertainty": unc,
        "brier_within_bin": brier - (rel - res + unc),
        "ece": (share * np.abs(diff)).sum(axis=-1),
        "ece_l2": np.sqrt(rel),
        "ece_l2_debiased": np.sqrt(np.maximum(debiased, 0.0)),
    }


def logistic_calibration(y: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    """``(intercept, slope)``: ``a`` of ``logit P(y) = a + logit(p)`` and ``b`` of ``logit P(y) = a' + b logit(p)``,
    by Newton's method; NaN without both classes, and a NaN slope where the fit has no finite maximum."""
    if y.size == 0 or y.all() or not y.any():
        return float("nan"), float("nan")
    x = np.log(np.clip(p, _EPS, 1 - _EPS)) - np.log1p(-np.clip(p, _EPS, 1 - _EPS))
    yf = y.astype(float)
    a = 0.0
    for _ in range(100):  # intercept with offset x: one parameter
        mu = 1.0 / (1.0 + np.exp(-(a + x)))
        step = (yf - mu).sum() / max(float((mu * (1 - mu)).sum()), 1e-300)
        a += step
        if abs(step) < 1e-13:
            break
    beta = np.zeros(2)
    design = np.column_stack([np.ones_like(x), x])
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(100):
            mu = 1.0 / (1.0 + np.exp(-(design @ beta)))
            hess = design.T @ (design * (mu * (1 - mu))[:, None])
            try:
                step = np.linalg.solve(hess, design.T @ (yf - mu))
            except np.linalg.LinAlgError:
                break
            beta += step
            if not np.all(np.isfinite(beta)):
                break
            if np.abs(step).max() < 1e-12:
                return float(a), float(beta[1])
    return float(a), float("nan")  # no finite maximum (the scores separate the classes) or no convergence


def calibration_rows(
    y: np.ndarray,
    p: np.ndarray,
    pat: np.ndarray,
    code: np.ndarray,
    ct: np.ndarray,
    *,
    groups: tuple[str, ...],
    n_bins: int,
    confidence_level: float,
) -> dict[str, list[object]]:
    """One row per group (a dict of columns): counts, the scores of :func:`_scores` with intervals for the Brier
    score and the ECEs, intercept and slope."""
    sums = _sums(y, p, pat, code, ct, len(groups), n_bins)
    sc = _scores(sums)
    cols: dict[str, list[object]] = {"group": list(groups)}
    n_all = sums["n"][0].sum(axis=-1).astype(int)
    n_pos = np.rint(sums["y"][0].sum(axis=-1)).astype(int)
    cols["n"] = n_all.tolist()
    cols["n_pos"] = n_pos.tolist()
    for name, arr in sc.items():
        cols[name] = arr[0].tolist()
        if name in ("brier", "ece", "ece_l2_debiased"):
            d = summarize_distribution(arr[1:].T, confidence_level=confidence_level)
            cols[f"{name}_ci_low"] = d["ci_low"].tolist()
            cols[f"{name}_ci_high"] = d["ci_high"].tolist()
    fits = [logistic_calibration(y[code == g], p[code == g]) for g in range(len(groups))]
    cols["intercept"] = [a for a, _ in fits]
    cols["slope"] = [b for _, b in fits]
    cols["reason"] = [_not_estimable(int(a), int(k), b) for a, k, (_, b) in zip(n_all, n_pos, fits)]
    return cols


def _not_estimable(n: int, n_pos: int, slope: float) -> str:
    """What a calibration row cannot say, in words ('' when every column is estimated): no study; one class only
    (intercept and slope undefined, the ECE and Brier score only measure how close the scores are to 0 or 1); a
    slope without a finite maximum (the scores separate the classes)."""
    if n == 0:
        return "not estimable: no study labelled by the reference"
    if n_pos == 0 or n_pos == n:
        which = "positives" if n_pos == 0 else "negatives"
        return f"intercept and slope not estimable: no {which}"
    if not np.isfinite(slope):
        return "slope not estimable: the scores separate the classes (no finite maximum)"
    return ""


def reliability_rows(
    y: np.ndarray, p: np.ndarray, code: np.ndarray, *, groups: tuple[str, ...], n_bins: int
) -> dict[str, list[object]]:
    """The reliability diagram of each group: one row per non-empty bin (``bin``, ``bin_low``, ``bin_high``, ``n``,
    ``mean_score``, ``fraction_positive``)."""
    keep = code >= 0
    k = _bin_of(p[keep], n_bins)
    cell = code[keep] * n_bins + k
    size = len(groups) * n_bins
    n = np.bincount(cell, minlength=size)
    sp = np.bincount(cell, weights=p[keep], minlength=size)
    sy = np.bincount(cell, weights=y[keep].astype(float), minlength=size)
    at = np.flatnonzero(n)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return {
        "group": [groups[i // n_bins] for i in at],
        "bin": (at % n_bins).tolist(),
        "bin_low": edges[at % n_bins].tolist(),
        "bin_high": edges[at % n_bins + 1].tolist(),
        "n": n[at].tolist(),
        "mean_score": (sp[at] / n[at]).tolist(),
        "fraction_positive": (sy[at] / n[at]).tolist(),
    }
