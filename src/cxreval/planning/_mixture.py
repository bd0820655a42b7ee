"""A two-class latent model of binary references and the models' scores, fitted by EM.

The model: ``T ~ Bernoulli(prevalence)``; each reference ``r`` says positive with probability ``sensitivity_r``
when ``T = 1`` and ``1 - specificity_r`` when ``T = 0``; the scores, each as the normal quantile of its mid-rank
(``x = Phi^-1((rank - 1/2) / n)``), are multivariate normal with class means ``mu_T`` and a common covariance given
``T``; references and scores are independent given ``T``. With a single reference this normal score model is what
identifies it (a parametric assumption: the model is not identified without it). Studies whose truth is known
(``anchor``, 1.0/0.0; NaN elsewhere) enter with their truth: the likelihood of the two-phase design, in which
the selection of the anchored studies depends only on observed labels and scores (missing at random).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit, ndtri
from scipy.stats import rankdata

__all__ = ["probit_rank", "fit_joint"]

_EPS = 1e-3


def probit_rank(score: np.ndarray) -> np.ndarray:
    """``Phi^-1((rank - 1/2) / n)`` with mid-ranks for ties: a monotone map of the score to the normal scale."""
    s = np.asarray(score, dtype=float)
    return ndtri((rankdata(s) - 0.5) / len(s))


def fit_joint(references: np.ndarray, x: np.ndarray, *, anchor: np.ndarray | None = None, max_iter: int = 5000,
              tol: float = 1e-7) -> tuple[np.ndarray, bool]:
    """Posteriors ``P(T = 1 | references, x, anchor)`` and whether EM converged.

    Parameters
    ----------
    references : ndarray of shape (n, r)
        1.0 / 0.0 / NaN (not labelled).
    x : ndarray of shape (n, p)
        The scores on the normal scale (:func:`probit_rank`).
    anchor : ndarray of shape (n,), optional
        Known truths (1.0 / 0.0, NaN unknown).
    """
    y = np.asarray(references, dtype=float)
    y = y[:, None] if y.ndim == 1 else y
    xs = np.asarray(x, dtype=float)
    n, p = xs.shape
    obs = ~np.isnan(y)
    yo = (obs & (y == 1)).astype(float)
    no = (obs & (y == 0)).astype(float)
    anc = np.full(n, np.nan) if anchor is None else np.asarray(anchor, dtype=float)
    known = ~np.isnan(anc)
    k = obs.sum(axis=1)
    w = np.clip(np.where(k > 0, yo.sum(axis=1) / np.maximum(k, 1), 0.5), 0.05, 0.95)
    w = np.clip(0.5 * w + 0.5 * expit(xs.mean(axis=1)), 0.02, 0.98)
    w = np.where(known, np.nan_to_num(anc), w)
    for _ in range(max_iter):
        prev = np.clip(w.mean(), _EPS, 1 - _EPS)
        sens = np.clip((w @ yo + 0.5) / (w @ (yo + no) + 1.0), _EPS, 1 - _EPS)
        spec = np.clip(((1 - w) @ no + 0.5) / ((1 - w) @ (yo + no) + 1.0), _EPS, 1 - _EPS)
        mu1 = w @ xs / max(w.sum(), 1e-12)
        mu0 = (1 - w) @ xs / max((1 - w).sum(), 1e-12)
        r1, r0 = xs - mu1, xs - mu0
        cov = ((w[:, None] * r1).T @ r1 + ((1 - w)[:, None] * r0).T @ r0) / n + 1e-6 * np.eye(p)
        beta = np.linalg.solve(cov, mu1 - mu0)
        lo = (logit(prev) + yo @ np.log(sens / (1 - spec)) + no @ np.log((1 - sens) / spec)
              + xs @ beta - 0.5 * (mu1 @ np.linalg.solve(cov, mu1) - mu0 @ np.linalg.solve(cov, mu0)))
        w_new = np.where(known, np.nan_to_num(anc), expit(lo))
        change = float(np.max(np.abs(w_new - w)))
        w = w_new
        if change < tol:
            return w, True
    return w, False
