"""The design of an expert's relabelling and the design-based estimate it allows.

Design. The studies are drawn with known inclusion probabilities: ``pi_i = k ((1 - f) c_i / sum c + f / N)``
for a budget of ``k`` of ``N`` candidate studies, ``c_i`` the study's priority score (the expected change of the
leading pair's AUC difference) and ``f`` the uniform floor (the share of the budget spread evenly, so that every
study has ``pi_i >= k f / N > 0``); probabilities above 1 are set to 1 and the rest rescaled (iteratively). The
sample is a randomized systematic probability-proportional-to-size sample (Goodman & Kish 1950; Hartley & Rao
1962): the candidates in a random order, then every unit whose cumulative probability crosses ``u, u + 1, ...``
(``u`` uniform): exactly ``k`` studies, each with probability ``pi_i``. Each sampled study is marked as the random
part with probability ``(k f / N) / pi_i``: every study is in the random part with probability ``k f / N``, an
equal-probability sample whose plain AUC needs no model at all.

Estimate (augmented inverse probability weighting, AIPW; Robins, Rotnitzky & Zhao 1994; prediction-powered
inference, Angelopoulos et al. 2023). With predictions ``w_i`` (the latent posteriors ``P(T_i = 1 | cheap
labels, scores)``, fitted without the expert's labels of this sample) and the expert's truth ``T_i`` on the sample
``S``, the pseudo-truths ``T~_i = w_i + 1{i in S} (T_i - w_i) / pi_i`` have ``E[T~_i] = T_i`` over the design
whatever ``w`` is; the AUC is the Mann-Whitney ratio with ``T~`` as the positive masses (:func:`soft_auc`). Its
numerator and denominator are unbiased for those of the AUC against the expert on all ``N`` studies (the pairs'
inclusions independent: exact under Poisson sampling, to ``O(1/k)`` under the fixed-size design), so the estimate
is consistent without any assumption on the latent model: the predictions only decide how small its variance is.

Interval. The variance is the design's, by linearization (``sum_{i in S} (1 - pi_i) / pi_i^2 (T_i - w_i)^2 g_i^2``,
``g_i`` the AUC's derivative in ``T~_i``, as if the inclusions were independent: a little conservative for the
fixed-size design), plus the studies' own sampling variance (DeLong's with the imputed truths ``T`` on ``S`` and
``w`` elsewhere): the interval is for the AUC of the population the studies come from, not only for these ``N``.
"""

from __future__ import annotations

import numpy as np

from ._soft_auc import ScoreOrder, auc_gradient, auc_variance, delta_variance, soft_auc

__all__ = [
    "DESIGN_METHOD",
    "inclusion_probabilities",
    "systematic_sample",
    "random_part",
    "pseudo_truth",
    "design_auc",
    "design_delta",
]

DESIGN_METHOD = (
    "design-based (AIPW) estimate: the latent posteriors as predictions, corrected on the expert's sample with "
    "inverse inclusion probabilities; valid whatever the latent model, which only affects the width; interval = "
    "linearized design variance + DeLong's sampling variance"
)


def inclusion_probabilities(score: np.ndarray, budget: int, *, uniform_floor: float) -> np.ndarray:
    """``pi_i = budget ((1 - f) c_i / sum c + f / N)``, capped at 1 with the rest rescaled (module docstring);
    sums to ``budget`` (every study 1 when ``budget >= N``). A score that is all zero spreads evenly."""
    c = np.maximum(np.nan_to_num(np.asarray(score, dtype=float)), 0.0)
    n = len(c)
    if budget >= n:
        return np.ones(n)
    share = c / c.sum() if c.sum() > 0 else np.full(n, 1.0 / n)
    base = (1.0 - uniform_floor) * share + uniform_floor / n
    capped = np.zeros(n, dtype=bool)
    pi = budget * base
    while (pi[~capped] > 1.0).any():
        capped |= pi > 1.0
        pi = np.where(capped, 1.0, (budget - capped.sum()) * base / base[~capped].sum())
    return pi


def systematic_sample(pi: np.ndarray, rng: np.random.Generator, n_draws: int = 1) -> np.ndarray:
    """``(n_draws, N)`` inclusion indicators of randomized systematic samples with inclusion probabilities ``pi``
    (each of ``round(sum pi)`` studies; the draws independent)."""
    n = len(pi)
    perm = rng.permuted(np.tile(np.arange(n), (n_draws, 1)), axis=1)
    total = float(pi.sum())
    cum = np.cumsum(pi[perm], axis=1) * (round(total) / total if total > 0 else 1.0)
    u = rng.random((n_draws, 1))
    hits = np.floor(cum - u + 1e-12)
    picked = np.diff(hits, axis=1, prepend=np.floor(-u)) > 0
    out = np.zeros((n_draws, n), dtype=bool)
    np.put_along_axis(out, perm, picked, axis=1)
    return out


def random_part(
    sampled: np.ndarray, pi: np.ndarray, budget: int, uniform_floor: float, rng: np.random.Generator
) -> np.ndarray:
    """Mark each sampled study as the random part with probability ``(budget f / N) / pi_i``: every study is in
    it with probability ``budget f / N``."""
    pi_u = min(budget * uniform_floor / len(pi), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = np.where(pi > 0, pi_u / pi, 0.0)
    return sampled & (rng.random(sampled.shape) < keep)


def pseudo_truth(pred: np.ndarray, truth: np.ndarray, sampled: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``T~ = w + 1{sampled} (T - w) / pi`` (broadcast over draws)."""
    resid = np.where(sampled, np.nan_to_num(truth) - pred, 0.0)
    return pred + resid / np.where(sampled, pi, 1.0)


def _design_weight(pred: np.ndarray, truth: np.ndarray, sampled: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``1{sampled} (1 - pi) / pi^2 (T - w)^2``: each study's term of the design variance, before ``g_i^2``."""
    resid = np.where(sampled, np.nan_to_num(truth) - pred, 0.0)
    return np.where(sampled, (1.0 - pi) / np.where(sampled, pi, 1.0) ** 2, 0.0) * resid**2


def design_auc(
    pred: np.ndarray, truth: np.ndarray, sampled: np.ndarray, pi: np.ndarray, so: ScoreOrder
) -> tuple[np.ndarray, np.ndarray]:
    """``(AUC, variance)`` of one model's design-based estimate (module docstring)."""
    t = pseudo_truth(pred, truth, sampled, pi)
    auc, grad = auc_gradient(t, so)
    design = (_design_weight(pred, truth, sampled, pi) * np.nan_to_num(grad) ** 2).sum(axis=-1)
    imputed = np.where(sampled, np.nan_to_num(truth), pred)
    return auc, design + auc_variance(imputed, so)


def design_delta(
    pred: np.ndarray,
    truth: np.ndarray,
    sampled: np.ndarray,
    pi: np.ndarray,
    so_a: ScoreOrder,
    so_b: ScoreOrder,
) -> tuple[np.ndarray, np.ndarray]:
    """``(delta, variance)`` of AUC(a) - AUC(b), both design-based on the same sample."""
    t = pseudo_truth(pred, truth, sampled, pi)
    auc_a, ga = auc_gradient(t, so_a)
    auc_b, gb = auc_gradient(t, so_b)
    design = (_design_weight(pred, truth, sampled, pi) * np.nan_to_num(ga - gb) ** 2).sum(axis=-1)
    imputed = np.where(sampled, np.nan_to_num(truth), np.broadcast_to(pred, t.shape))
    _, sampling = delta_variance(imputed, so_a, imputed, so_b, revealed=np.ones(t.shape[-1], dtype=bool))
    return auc_a - auc_b, design + sampling


def plugin_auc(pred: np.ndarray, so: ScoreOrder) -> float:
    """The AUC with the predictions alone as the truth (no correction): what the design corrects."""
    return float(soft_auc(pred, so))
