"""The design of an expert's relabelling and the design-based estimate it allows.

Design. The studies are drawn with known inclusion probabilities: ``pi_i = k ((1 - f) c_i / sum c + f / N)``
for a budget of ``k`` of ``N`` candidate studies, ``c_i`` the study's sampling score (how much its labels sharpen
the models' AUCs: :func:`cxreval.planning.plan_relabelling`, Notes) and ``f`` the uniform floor (the share of the
budget spread evenly, so that every study has ``pi_i >= k f / N > 0``); probabilities above 1 are set to 1 and the rest rescaled (iteratively). The
sample is a randomized systematic probability-proportional-to-size sample (Goodman & Kish 1950; Hartley & Rao
1962): the candidates in a random order, then every unit whose cumulative probability crosses ``u, u + 1, ...``
(``u`` uniform): exactly ``k`` studies, each with probability ``pi_i``. Each sampled study is marked as the random
part with probability ``(k f / N) / pi_i``: every study is in the random part with probability ``k f / N``, an
equal-probability sample whose plain AUC needs no model at all.

Estimate (augmented inverse probability weighting, AIPW; Robins, Rotnitzky & Zhao 1994; prediction-powered
inference with power tuning, Angelopoulos et al. 2023). The AUC against the expert on all ``N`` studies is ``N / D``
with ``N = sum_{i != j} T_i (1 - T_j) H(s_i - s_j)`` and ``D`` the same without ``H``: sums over pairs. With
predictions ``w_i`` (the latent posteriors ``P(T_i = 1 | cheap labels, scores)``, fitted without the expert's
labels of this sample) and the expert's truth ``T_i`` on the sample ``S``, each sum is estimated by

    ``N^ = lam N_w + sum_{i != j in S} [T_i (1 - T_j) - lam w_i (1 - w_j)] H(s_i - s_j) / (pi_i pi_j)``

(``N_w`` the predictions' own sum over all pairs), unbiased for ``N`` over the design whatever ``w`` and ``lam``
are (pairs included with probability ``pi_i pi_j``: exact under Poisson sampling, to ``O(1/k)`` under the fixed-size
design); the estimate is ``N^ / D^``. ``lam`` in [0, 1] weighs the predictions by how much they help (power tuning:
the value that minimizes the design variance, estimated from the sample and shrunk towards 0 by its own sampling
error, since a weight estimated from a few studies costs more precision than it saves; 0 = the
inverse-probability-weighted AUC of the sample alone, which for equal probabilities is its plain AUC). So the
estimate is consistent without any assumption on the latent model: the predictions only decide how small its
variance is. The estimate is kept in [0, 1]; a sample holding one class of a finding defines no pair, and the
estimate is then the predictions' own AUC (its variance that of the uncorrected predictions).

Interval. The variance is the design's, by linearization (``sum_{i in S} (1 - pi_i) / pi_i^2 psi_i^2``, ``psi_i``
study ``i``'s projection of the sample's pair sum, divided by ``D^``; as if the inclusions were independent, a little
conservative for the fixed-size design), plus the studies' own sampling variance (DeLong's with the imputed truths,
``T`` on ``S`` and ``w`` elsewhere): the interval is for the AUC of the population the studies come from, not only
for these ``N``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._soft_auc import ScoreOrder, auc_variance, delta_variance, mass_below, soft_auc

__all__ = [
    "DESIGN_METHOD",
    "inclusion_probabilities",
    "systematic_sample",
    "random_part",
    "PairEstimate",
    "pair_estimate",
    "design_auc",
    "design_delta",
]

DESIGN_METHOD = (
    "design-based (AIPW, prediction-powered with power tuning) estimate: the latent posteriors as predictions, "
    "corrected on the expert's sample with inverse inclusion probabilities of its pairs and weighed by how much "
    "they help; valid whatever the latent model, which only affects the width; interval = linearized design "
    "variance + DeLong's sampling variance"
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


@dataclass(frozen=True)
class PairEstimate:
    """One model's design-based AUC (batched over rows): ``auc``, the design variance ``design_var`` (of the AUC,
    linearized), the power-tuning weight ``lam`` and each study's projection ``psi`` (scaled by ``1 / D``, zero
    off the sample), from which the variance of a difference of two models follows."""

    auc: np.ndarray
    design_var: np.ndarray
    lam: np.ndarray
    psi: np.ndarray
    q: np.ndarray


def _projection(t: np.ndarray, c: np.ndarray, a: np.ndarray, so: ScoreOrder) -> np.ndarray:
    """``sum_{j != i} c_j (phi_ij + phi_ji)`` for ``phi_ij = t_i (1 - t_j) (H_ij - a)``: study ``i``'s share of the
    sample's pair sum ``sum_{i != j} c_i c_j phi_ij`` (its Hajek projection), for every ``i``."""
    neg, pos = c * (1.0 - t), c * t
    a = a[..., None]
    as_pos = mass_below(neg, so) - a * (neg.sum(axis=-1, keepdims=True) - neg)
    above = (pos.sum(axis=-1, keepdims=True) - pos) - mass_below(pos, so)
    as_neg = above - a * (pos.sum(axis=-1, keepdims=True) - pos)
    return t * as_pos + (1.0 - t) * as_neg


def _pair_sums(t: np.ndarray, c: np.ndarray, so: ScoreOrder) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_{i != j} c_i t_i c_j (1 - t_j) H_ij, sum_{i != j} c_i t_i c_j (1 - t_j))``."""
    pos, neg = c * t, c * (1.0 - t)
    num = (pos * mass_below(neg, so)).sum(axis=-1)
    den = pos.sum(axis=-1) * neg.sum(axis=-1) - (pos * neg).sum(axis=-1)
    return num, den


def pair_estimate(
    pred: np.ndarray, truth: np.ndarray, sampled: np.ndarray, pi: np.ndarray, so: ScoreOrder
) -> PairEstimate:
    """The design-based AUC of one model (module docstring), batched over the rows of ``truth``/``sampled``."""
    shape = np.broadcast_shapes(np.shape(pred), np.shape(truth), np.shape(sampled))
    w = np.broadcast_to(pred, shape)
    t = np.broadcast_to(np.nan_to_num(truth), shape)
    c = np.where(sampled, 1.0 / np.where(sampled, pi, 1.0), 0.0)
    q = np.where(sampled, (1.0 - pi) / np.where(sampled, pi, 1.0) ** 2, 0.0)
    n_t, d_t = _pair_sums(t, c, so)
    n_s, d_s = _pair_sums(w, c, so)
    n_w, d_w = _pair_sums(w, np.ones(shape), so)

    def auc_at(lam: np.ndarray) -> np.ndarray:
        num, den = lam * (n_w - n_s) + n_t, lam * (d_w - d_s) + d_t
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    a1 = np.nan_to_num(auc_at(np.ones(shape[:-1])), nan=0.5)
    psi_t, psi_w = _projection(t, c, a1, so), _projection(w, c, a1, so)
    lam = _tuned_weight(psi_t, psi_w, q, np.where(sampled, pi, 1.0))
    auc = auc_at(lam)
    # a sample with one class of this finding defines no pair: the predictions' own AUC (lam = 1, no correction)
    undefined = np.isnan(auc)
    lam = np.where(undefined, 1.0, lam)
    with np.errstate(invalid="ignore", divide="ignore"):
        plugin = np.where(d_w > 0, n_w / np.where(d_w > 0, d_w, 1.0), np.nan)
    auc = np.clip(np.where(undefined, plugin, auc), 0.0, 1.0)
    a = np.nan_to_num(auc, nan=0.5)
    den = np.where(undefined, d_w, lam * (d_w - d_s) + d_t)
    with np.errstate(invalid="ignore", divide="ignore"):
        psi = (_projection(t, c, a, so) - lam[..., None] * _projection(w, c, a, so)) / den[..., None]
    psi = np.where(sampled, np.nan_to_num(psi), 0.0)
    return PairEstimate(auc, (q * psi**2).sum(axis=-1), lam, psi, q)


def _tuned_weight(psi_t: np.ndarray, psi_w: np.ndarray, q: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """The power-tuning weight: ``lam^ = sum q psi_t psi_w / sum q psi_w^2`` (the variance-minimizing weight
    estimated from the sample) shrunk by its own sampling error, ``lam^ max(0, 1 - var(lam^) / lam^2)`` (positive
    part), in [0, 1]. A weight estimated from a few studies is mostly noise, and a noisy weight costs more than it
    saves: the shrinkage keeps it only where the sample shows that the predictions help."""
    with np.errstate(invalid="ignore", divide="ignore"):
        den = (q * psi_w**2).sum(axis=-1)
        lam = np.nan_to_num((q * psi_t * psi_w).sum(axis=-1) / den)
        z = q * pi * psi_w * (psi_t - lam[..., None] * psi_w)
        var = np.nan_to_num((q * z**2).sum(axis=-1) / den**2)
        keep = np.nan_to_num(np.clip(1.0 - var / lam**2, 0.0, 1.0))
    return np.clip(lam * keep, 0.0, 1.0)


def _imputed(pred: np.ndarray, truth: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    return np.where(sampled, np.nan_to_num(truth), pred)


def design_auc(
    pred: np.ndarray, truth: np.ndarray, sampled: np.ndarray, pi: np.ndarray, so: ScoreOrder
) -> tuple[np.ndarray, np.ndarray]:
    """``(AUC, variance)`` of one model's design-based estimate: the design's variance plus DeLong's sampling
    variance of the studies (with their truths imputed: the expert's on the sample, the predictions elsewhere)."""
    est = pair_estimate(pred, truth, sampled, pi, so)
    return est.auc, est.design_var + auc_variance(_imputed(pred, truth, sampled), so)


def design_delta(
    pred: np.ndarray,
    truth: np.ndarray,
    sampled: np.ndarray,
    pi: np.ndarray,
    so_a: ScoreOrder,
    so_b: ScoreOrder,
) -> tuple[np.ndarray, np.ndarray]:
    """``(delta, variance)`` of AUC(a) - AUC(b), both design-based on the same sample."""
    ea = pair_estimate(pred, truth, sampled, pi, so_a)
    eb = pair_estimate(pred, truth, sampled, pi, so_b)
    design = (ea.q * (ea.psi - eb.psi) ** 2).sum(axis=-1)
    imputed = _imputed(pred, truth, sampled)
    _, sampling = delta_variance(
        imputed, so_a, imputed, so_b, revealed=np.ones(imputed.shape[-1], dtype=bool)
    )
    return ea.auc - eb.auc, design + sampling


def plugin_auc(pred: np.ndarray, so: ScoreOrder) -> float:
    """The AUC with the predictions alone as the truth (no correction): what the design corrects."""
    return float(soft_auc(pred, so))
