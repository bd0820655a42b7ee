"""Posterior-weighted Mann–Whitney AUC, what revealing one study's truth does to it (closed form), and the variance
of a difference of two such AUCs. Every function is batched over draws: weights of shape ``(n,)`` or ``(D, n)``.

With weights ``w_i = P(T_i = 1 | data)`` a study is positive with mass ``p_i = w_i`` and negative with mass
``q_i = 1 - w_i``; the AUC is ``N / D`` with ``N = sum_{i != j} p_i q_j H(s_i - s_j)`` (``H`` = 1, 1/2, 0 for
>, =, <) and ``D = P Q - sum_i p_i q_i`` (``P = sum p``, ``Q = sum q``). With 0/1 weights it is the ordinary AUC.

The AUC is the statistic of :func:`cxreval.latent.latent_auc_score` (classification's pair-weighted kernel; a test
checks they agree). It is not called here because the planner needs more than the total: the per-study sums
``C_i``, ``B_i`` behind the reveal effects and DeLong's soft structural components, batched over Monte Carlo draws
of the weights with one sort per model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ScoreOrder",
    "score_order",
    "soft_sums",
    "soft_auc",
    "reveal_auc",
    "delta_variance",
    "auc_gradient",
    "weighted_auc",
    "auc_variance",
    "mass_below",
]


@dataclass(frozen=True)
class ScoreOrder:
    """One model's scores sorted once: the order, and where each tie group starts."""

    order: np.ndarray  # (n,) argsort of the scores
    starts: np.ndarray  # (g,) first sorted position of each tie group
    group: np.ndarray  # (n,) tie group of each sorted position


def score_order(score: np.ndarray) -> ScoreOrder:
    s = np.asarray(score, dtype=float)
    order = np.argsort(s, kind="stable")
    ss = s[order]
    new = np.r_[True, ss[1:] != ss[:-1]]
    return ScoreOrder(order=order, starts=np.flatnonzero(new), group=np.cumsum(new) - 1)


def mass_below(mass: np.ndarray, so: ScoreOrder) -> np.ndarray:
    """``sum_{j != i} mass_j H(s_i - s_j)`` for every i (same shape as ``mass``)."""
    ms = mass[..., so.order]
    if len(so.starts) == len(so.order):  # no ties: each study its own group, the same sums without regrouping
        out_sorted = np.cumsum(ms, axis=-1) - ms
        out = np.empty_like(out_sorted)
        out[..., so.order] = out_sorted
        return out
    g = np.add.reduceat(ms, so.starts, axis=-1)
    lower = np.cumsum(g, axis=-1) - g
    out_sorted = lower[..., so.group] + 0.5 * (g[..., so.group] - ms)
    out = np.empty_like(out_sorted)
    out[..., so.order] = out_sorted
    return out


def soft_sums(w: np.ndarray, so: ScoreOrder) -> tuple[np.ndarray, np.ndarray]:
    """``C_i = sum_{j != i} q_j H(s_i - s_j)`` (negative mass below i) and ``B_i = sum_{j != i} p_j H(s_j - s_i)``
    (positive mass above i)."""
    p = np.asarray(w, dtype=float)
    q = 1.0 - p
    c = mass_below(q, so)
    total_p = p.sum(axis=-1, keepdims=True)
    # positive mass above i (ties counted half) = the positive mass of the others - what lies below (ties half)
    b = (total_p - p) - mass_below(p, so)
    return c, b


def _denominator(p: np.ndarray) -> np.ndarray:
    q = 1.0 - p
    return p.sum(axis=-1) * q.sum(axis=-1) - (p * q).sum(axis=-1)


def soft_auc(w: np.ndarray, so: ScoreOrder) -> np.ndarray:
    """The posterior-weighted AUC (shape ``w.shape[:-1]``); NaN when no positive-negative mass exists."""
    p = np.asarray(w, dtype=float)
    c, _ = soft_sums(p, so)
    num = (p * c).sum(axis=-1)
    den = _denominator(p)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def reveal_auc(w: np.ndarray, so: ScoreOrder) -> tuple[np.ndarray, np.ndarray]:
    """The AUC after revealing study i's truth, for every i: ``(A_i(T_i = 1), A_i(T_i = 0))``, each of the shape of
    ``w``. Exact (no refit of the posteriors of the other studies): O(n log n) in all."""
    p = np.asarray(w, dtype=float)
    q = 1.0 - p
    c, b = soft_sums(p, so)
    num = (p * c).sum(axis=-1, keepdims=True)
    big_p = p.sum(axis=-1, keepdims=True)
    big_q = q.sum(axis=-1, keepdims=True)
    s = (p * q).sum(axis=-1, keepdims=True)
    base = num - p * c - q * b
    out = []
    for v in (1.0, 0.0):
        n_v = base + v * c + (1.0 - v) * b
        d_v = (big_p - p + v) * (big_q - q + 1.0 - v) - (s - p * q)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(d_v > 0, n_v / np.where(d_v > 0, d_v, 1.0), np.nan))
    return out[0], out[1]


def _components(p: np.ndarray, so: ScoreOrder) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DeLong's structural components with soft weights: ``V10_i`` (study i as a positive: the negative mass it
    outscores, as a fraction) and ``V01_i`` (as a negative), and the AUC."""
    q = 1.0 - p
    c, b = soft_sums(p, so)
    big_p = p.sum(axis=-1, keepdims=True)
    big_q = q.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        v10 = c / np.maximum(big_q - q, 1e-12)
        v01 = b / np.maximum(big_p - p, 1e-12)
    return v10, v01, soft_auc(p, so)


def delta_variance(
    w_a: np.ndarray, so_a: ScoreOrder, w_b: np.ndarray, so_b: ScoreOrder, *, revealed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(delta, variance)`` of ``AUC_a - AUC_b`` (each with its own posterior weights).

    The variance is DeLong's (structural components weighted by the posterior masses; with 0/1 weights exactly
    DeLong's) plus the label uncertainty of the studies not revealed: ``sum_i pbar_i (1 - pbar_i) (d_i(1) -
    d_i(0))^2``, the first-order variance of ``delta`` over independent draws of their truths, where ``d_i(v)``
    is ``delta`` with study i's truth revealed as ``v`` (:func:`reveal_auc`) and ``pbar`` the mean of the two
    posteriors. The uncertainty of the fitted latent-class parameters is not included.
    """
    wa = np.asarray(w_a, dtype=float)
    wb = np.asarray(w_b, dtype=float)
    pbar = 0.5 * (wa + wb)
    qbar = 1.0 - pbar
    v10a, v01a, auc_a = _components(wa, so_a)
    v10b, v01b, auc_b = _components(wb, so_b)
    big_p = pbar.sum(axis=-1)
    big_q = qbar.sum(axis=-1)
    ea = v10a - auc_a[..., None]
    eb = v10b - auc_b[..., None]
    fa = v01a - auc_a[..., None]
    fb = v01b - auc_b[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        s10 = (pbar * (ea - eb) ** 2).sum(axis=-1) / np.maximum(big_p - 1.0, 1e-12)
        s01 = (qbar * (fa - fb) ** 2).sum(axis=-1) / np.maximum(big_q - 1.0, 1e-12)
        sampling = s10 / np.maximum(big_p, 1e-12) + s01 / np.maximum(big_q, 1e-12)
    a1, a0 = reveal_auc(wa, so_a)
    b1, b0 = reveal_auc(wb, so_b)
    jump = (a1 - b1) - (a0 - b0)
    open_ = ~np.asarray(revealed, dtype=bool)
    label = (np.where(open_, pbar * qbar, 0.0) * np.nan_to_num(jump) ** 2).sum(axis=-1)
    return auc_a - auc_b, sampling + label


def auc_gradient(p: np.ndarray, so: ScoreOrder) -> tuple[np.ndarray, np.ndarray]:
    """``(AUC, dAUC/dp_i)`` of the weighted AUC ``N / D`` as a function of the positive masses ``p`` (any real
    values, ``q = 1 - p``): ``dN/dp_i = C_i - B_i`` and ``dD/dp_i = (Q - q_i) - (P - p_i)``, so ``dAUC/dp_i =
    (C_i - B_i - AUC ((Q - q_i) - (P - p_i))) / D``. Batched like every function here."""
    p = np.asarray(p, dtype=float)
    q = 1.0 - p
    c, b = soft_sums(p, so)
    auc = soft_auc(p, so)
    den = _denominator(p)[..., None]
    big_p = p.sum(axis=-1, keepdims=True)
    big_q = q.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        grad = (c - b - auc[..., None] * ((big_q - q) - (big_p - p))) / den
    return auc, grad


def weighted_auc(t: np.ndarray, v: np.ndarray, so: ScoreOrder) -> np.ndarray:
    """The AUC against 0/1 truths ``t`` with study weights ``v`` (a pair ``(i, j)`` weighs ``v_i v_j``): the
    population AUC of a Bayesian bootstrap draw (Rubin 1981) when ``v`` is Dirichlet(1, ..., 1)."""
    t = np.asarray(t, dtype=float)
    pos, neg = v * t, v * (1.0 - t)
    num = (pos * mass_below(neg, so)).sum(axis=-1)
    den = pos.sum(axis=-1) * neg.sum(axis=-1) - (pos * neg).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def auc_variance(w: np.ndarray, so: ScoreOrder) -> np.ndarray:
    """DeLong's variance of one AUC with posterior weights ``w`` in [0, 1] (structural components weighted by the
    masses; with 0/1 weights exactly DeLong's): the sampling variance of the studies, no label uncertainty."""
    p = np.asarray(w, dtype=float)
    q = 1.0 - p
    v10, v01, auc = _components(p, so)
    big_p, big_q = p.sum(axis=-1), q.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s10 = (p * (v10 - auc[..., None]) ** 2).sum(axis=-1) / np.maximum(big_p - 1.0, 1e-12)
        s01 = (q * (v01 - auc[..., None]) ** 2).sum(axis=-1) / np.maximum(big_q - 1.0, 1e-12)
        return s10 / np.maximum(big_p, 1e-12) + s01 / np.maximum(big_q, 1e-12)
