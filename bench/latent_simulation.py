"""Simulated readers and models with a known truth: the latent-truth AUC beside the AUC against fused labels.

Each simulated study set draws its size (300-2,000 studies), 3-5 readers with sensitivity and specificity in
[0.65, 0.95] (conditionally independent given the truth), a prevalence in [0.05, 0.4] and five models whose
scores depend on the truth only (binormal with equal variances, with unequal variances, and a monotone transform
of a binormal score; their separations spread the true AUCs over about 0.6-0.97). Each set x model is a *cell*;
its true-label AUC is the AUC of the scores against the simulated truth of those studies. Against it, per cell:

- ``latent``: :func:`cxreval.latent.bootstrap_latent_class` with ``score_model='auto'`` (the default of
  ``evaluate_latent_auc``: the score-dependent readers model where the BIC prefers it, else the spline) with a
  patient bootstrap of ``n_resamples`` replicates (each patient one study here): point estimate and 95%
  interval, and the share of cells where it chose the score-dependent model;
- ``latent, spline``: readers conditionally independent of the score (``score_model='spline'``), point estimate;
- ``latent, dependent``: the model with score-dependent readers (``score_model='dependent'``), point estimate;
- ``latent, bins``: the same model with the Zhou et al. score bins (``score_model='bins'``), point estimate;
- ``oracle posterior``: the pair-weighted AUC with the posteriors of the *true* parameters and score densities
  (the best any posterior-weighted estimate can do: the floor of its error);
- ``majority vote (hard)``: the ordinary AUC against the readers' majority (ties left out);
- ``Dawid-Skene (hard)``: against the readers-only latent-class posteriors thresholded at 0.5;
- ``reader-only soft``: the pair-weighted AUC with the readers-only posteriors (what the issue warns about).

Usage: python bench/latent_simulation.py [N_SETS] [N_RESAMPLES]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from cxreval.bootstrap import draw_plan
from cxreval.classification import roc_auc_score
from cxreval.latent import bootstrap_latent_class, fit_latent_class, latent_auc_score

__all__ = ["METHODS", "simulate_set", "measure"]

#: (name, separation d, sd of the positives' score, monotone transform) of the five models
MODELS = (
    ("A", 0.4, 1.0, None),
    ("B", 0.9, 1.3, None),
    ("C", 1.4, 1.0, "exp"),
    ("D", 2.0, 0.8, None),
    ("E", 2.6, 1.0, "exp"),
)
METHODS = (
    "latent",
    "latent, spline",
    "latent, dependent",
    "latent, bins",
    "oracle posterior",
    "majority vote (hard)",
    "Dawid-Skene (hard)",
    "reader-only soft",
)


def simulate_set(rng: np.random.Generator, reader_slope: float = 0.0) -> dict[str, object]:
    """One study set; ``reader_slope`` > 0 makes the readers' errors depend on the score given the truth: each
    reader's logit sensitivity rises by ``reader_slope x U(0.5, 1.5)`` per unit of a positive's latent score above
    its class mean (hard positives, scored low, are missed more), its logit specificity falls by half as much
    per unit of a negative's latent score (the first model's score stands for what every model and reader sees).
    ``oracle`` posteriors are those of the conditionally independent model (``reader_slope=0`` only)."""
    n = int(rng.integers(300, 2001))
    r = int(rng.integers(3, 6))
    pi = float(rng.uniform(0.05, 0.4))
    se = rng.uniform(0.65, 0.95, r)
    sp = rng.uniform(0.65, 0.95, r)
    t = rng.random(n) < pi
    while t.sum() < 2 or (~t).sum() < 2:
        t = rng.random(n) < pi
    latent = rng.normal(size=n) if reader_slope > 0 else np.zeros(n)
    if reader_slope > 0:
        k = reader_slope * rng.uniform(0.5, 1.5, r)
        p_pos = expit(np.log(se / (1 - se))[None] + k[None] * latent[:, None])
        p_neg = expit(np.log(sp / (1 - sp))[None] - 0.5 * k[None] * latent[:, None])
        y = np.where(t[:, None], rng.random((n, r)) < p_pos, rng.random((n, r)) > p_neg).astype(float)
    else:
        y = np.where(t[:, None], rng.random((n, r)) < se, rng.random((n, r)) > sp).astype(float)
    reader_lr = (
        (y * np.log(se) + (1 - y) * np.log1p(-se)).sum(axis=1)
        - (y * np.log1p(-sp) + (1 - y) * np.log(sp)).sum(axis=1)
        + np.log(pi / (1 - pi))
    )
    scores = {}
    oracle = {}
    for name, d, sd1, transform in MODELS:
        # every model's score shares the latent part of the study (rho = 0.7) with the readers' difficulty
        if reader_slope > 0:
            noise = 0.7 * latent + np.sqrt(1 - 0.49) * rng.normal(size=n)
            x = np.where(t, d + sd1 * noise, noise)
        else:
            x = np.where(t, rng.normal(d, sd1, n), rng.normal(0.0, 1.0, n))
        scores[name] = np.exp(x) if transform == "exp" else x
        oracle[name] = expit(reader_lr + norm.logpdf(x, d, sd1) - norm.logpdf(x))
    return {
        "n": n,
        "readers": r,
        "prevalence": pi,
        "truth": t,
        "labels": y,
        "scores": scores,
        "oracle": oracle,
    }


def _hard_auc(y_true: np.ndarray, score: np.ndarray) -> float:
    keep = ~np.isnan(y_true)
    yt = y_true[keep]
    if yt.min(initial=1) == yt.max(initial=0):
        return float("nan")
    return roc_auc_score(yt.astype(int), score[keep])


def measure(n_sets: int, n_resamples: int, seed: int = 0, reader_slope: float = 0.0) -> dict[str, object]:
    """Every method's error per (set, model); ``n_resamples=0``: point estimates only (no interval)."""
    rng = np.random.default_rng(seed + (7919 if reader_slope > 0 else 0))
    rows = []
    t0 = time.perf_counter()
    fit_s = 0.0
    for k in range(n_sets):
        sim = simulate_set(rng, reader_slope)
        y, t = sim["labels"], sim["truth"]
        n = sim["n"]
        votes = np.nansum(y, axis=1) / y.shape[1]
        mv = np.where(votes > 0.5, 1.0, np.where(votes < 0.5, 0.0, np.nan))
        readers_only = fit_latent_class(y)
        ds_hard = (readers_only.posterior > 0.5).astype(float)
        plan = draw_plan(np.arange(n), n_resamples=max(n_resamples, 1), rng=seed * 1_000_003 + k)
        for name, score in sim["scores"].items():
            true = roc_auc_score(t.astype(int), score)
            f0 = time.perf_counter()
            if n_resamples > 0:
                res = bootstrap_latent_class(y, score, plan, score_model="auto")
                auc, ci_low, ci_high, not_conv = (
                    res.auc,
                    res.auc_bootstrap.confidence_interval.low,
                    res.auc_bootstrap.confidence_interval.high,
                    res.n_not_converged,
                )
                chosen = res.fit.score_model
            else:
                auto = fit_latent_class(y, score, score_model="auto")
                auc, chosen = latent_auc_score(score, auto.posterior), auto.score_model
                ci_low = ci_high = float("nan")
                not_conv = 0
            fit_s += time.perf_counter() - f0
            spline = fit_latent_class(y, score)
            bins = fit_latent_class(y, score, score_model="bins")
            dep = fit_latent_class(y, score, score_model="dependent")
            est = {
                "latent": auc,
                "latent, spline": latent_auc_score(score, spline.posterior),
                "latent, dependent": latent_auc_score(score, dep.posterior),
                "latent, bins": latent_auc_score(score, bins.posterior),
                "oracle posterior": latent_auc_score(score, sim["oracle"][name]),
                "majority vote (hard)": _hard_auc(mv, score),
                "Dawid-Skene (hard)": _hard_auc(ds_hard, score),
                "reader-only soft": latent_auc_score(score, readers_only.posterior),
            }
            rows.append(
                {
                    "set": k,
                    "model": name,
                    "n": n,
                    "readers": sim["readers"],
                    "prevalence": sim["prevalence"],
                    "positives": int(t.sum()),
                    "true_auc": true,
                    "ci_low": ci_low,
                    "ci_high": ci_high,
                    "covered": bool(ci_low <= true <= ci_high),
                    "not_converged": not_conv,
                    "auto chose dependent": chosen == "dependent",
                    **{f"err {m}": est[m] - true for m in METHODS},
                }
            )
    return {
        "rows": rows,
        "seconds": time.perf_counter() - t0,
        "latent_seconds": fit_s,
        "n_sets": n_sets,
        "n_resamples": n_resamples,
    }


#: How the simulated sets are grouped into design conditions for the bias (systematic error): studies per set,
#: readers per set and prevalence band; a design cell is a condition x model.
DESIGN = "studies (300-999, 1000-2000) x readers (3, 4, 5) x prevalence (0.05-0.2, 0.2-0.4) x model (5)"


def design_cell(row: dict[str, object]) -> tuple[object, ...]:
    """The design cell of one simulated (set, model): see :data:`DESIGN`."""
    return (int(row["n"]) >= 1000, int(row["readers"]), float(row["prevalence"]) >= 0.2, row["model"])


def design_bias(rows: list[dict[str, object]], method: str) -> tuple[float, float, int]:
    """``(mean |bias|, max |bias|, number of design cells)``: bias = the mean signed error of ``method`` over the
    simulated sets of one design cell (systematic error; the set-to-set noise averages out within the cell)."""
    groups: dict[tuple[object, ...], list[float]] = {}
    for r in rows:
        e = float(r[f"err {method}"])
        if np.isfinite(e):
            groups.setdefault(design_cell(r), []).append(e)
    bias = np.array([np.mean(v) for v in groups.values()])
    return float(np.abs(bias).mean()), float(np.abs(bias).max()), int(bias.size)


def summarise(m: dict[str, object]) -> dict[str, object]:
    """Mean |error|, mean signed error and mean |bias| over design cells per method; coverage; by number of
    positives."""
    rows = m["rows"]
    out: dict[str, object] = {
        "cells": len(rows),
        "coverage": float(np.mean([r["covered"] for r in rows])),
        "not_converged": int(sum(r["not_converged"] for r in rows)),
    }
    pos = np.array([r["positives"] for r in rows])
    strata = (
        ("all cells", np.ones(pos.size, dtype=bool)),
        ("< 50 positives", pos < 50),
        ("50-149 positives", (pos >= 50) & (pos < 150)),
        (">= 150 positives", pos >= 150),
    )
    table = []
    for method in METHODS:
        e = np.array([r[f"err {method}"] for r in rows], dtype=float)
        row = {"method": method}
        for label, mask in strata:
            v = e[mask & np.isfinite(e)]
            row[f"mean |error| {label}"] = float(np.abs(v).mean()) if v.size else float("nan")
            row[f"mean error {label}"] = float(v.mean()) if v.size else float("nan")
        row["mean |bias|"], row["max |bias|"], row["design cells"] = design_bias(rows, method)
        table.append(row)
    out["table"] = table
    out["strata"] = [(label, int(mask.sum())) for label, mask in strata]
    cov = np.array([r["covered"] for r in rows])
    out["coverage_by_stratum"] = [
        (label, float(cov[mask].mean()) if mask.any() else float("nan")) for label, mask in strata
    ]
    width = np.array([r["ci_high"] - r["ci_low"] for r in rows])
    out["mean_ci_width"] = float(width.mean())
    out["auto_dependent_share"] = float(np.mean([r["auto chose dependent"] for r in rows]))
    return out


if __name__ == "__main__":
    n_sets = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    n_res = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    m = measure(n_sets, n_res)
    s = summarise(m)
    print(f"{s['cells']} cells, coverage {s['coverage']:.3f}, {m['seconds']:.0f} s")
    for row in s["table"]:
        print(
            f"{row['method']:>24}: mean |error| {row['mean |error| all cells']:.4f}, "
            f"mean error {row['mean error all cells']:+.4f}, mean |bias| {row['mean |bias|']:.4f} "
            f"({row['design cells']} design cells)"
        )
