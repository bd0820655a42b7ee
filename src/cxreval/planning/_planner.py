"""Per finding: the posteriors, the two-phase AUC of every model, the leading pair, each study's expected effect on
the leading pair's AUC difference, and the Monte Carlo probability that the pair is separable after relabelling."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..latent import normal_scores
from ._inputs import FindingData
from ._mixture import fit_joint
from ._soft_auc import ScoreOrder, delta_variance, reveal_auc, score_order, soft_auc

__all__ = ["FindingFit", "fit_finding", "separable", "power_curve"]


@dataclass(frozen=True)
class FindingFit:
    """One finding's fitted state.

    ``posterior`` is ``P(T = 1 | references, every model's score, anchor)`` per study (one latent model of all
    scores: the weights of every model's AUC, what truths are drawn from and expectations taken with);
    ``change`` each study's expected absolute change of ``delta`` = AUC(best) - AUC(runner-up) when its truth is
    revealed, ``flip`` the probability that revealing it flips the sign of ``delta``.
    """

    data: FindingData
    x: np.ndarray
    order: dict[str, ScoreOrder]
    posterior: np.ndarray
    auc: dict[str, float]
    best: str
    runner_up: str | None
    delta: float
    change: np.ndarray
    flip: np.ndarray
    converged: bool


def _leading(auc: dict[str, float], scores: dict[str, np.ndarray]) -> tuple[str, str | None]:
    ranked = sorted(auc, key=lambda m: (-np.nan_to_num(auc[m], nan=-1.0), m))
    best = ranked[0]
    for m in ranked[1:]:  # a model with the best model's very scores cannot be separated from it: skip it
        if not np.array_equal(scores[m], scores[best]):
            return best, m
    return best, None


def distinct_scores(scores: dict[str, np.ndarray]) -> np.ndarray:
    """The normal-scale scores of the models, one column per distinct score vector (copies would make the
    covariance singular)."""
    cols: list[np.ndarray] = []
    seen: list[np.ndarray] = []
    for s in scores.values():
        if not any(np.array_equal(s, t) for t in seen):
            seen.append(s)
            cols.append(normal_scores(np.asarray(s, dtype=float)))
    return np.column_stack(cols)


def fit_finding(data: FindingData) -> FindingFit:
    order = {m: score_order(s) for m, s in data.scores.items()}
    x = distinct_scores(data.scores)
    w, converged = fit_joint(data.references, x, anchor=data.anchor)
    auc = {m: float(soft_auc(w, order[m])) for m in data.scores}
    best, runner = _leading(auc, data.scores)
    n = len(w)
    if runner is None:
        change, flip, delta = np.zeros(n), np.zeros(n), 0.0
    else:
        a1, a0 = reveal_auc(w, order[best])
        b1, b0 = reveal_auc(w, order[runner])
        delta = auc[best] - auc[runner]
        d1, d0 = a1 - b1, a0 - b0
        change = w * np.abs(d1 - delta) + (1 - w) * np.abs(d0 - delta)
        flip = w * (np.sign(d1) != np.sign(delta)) + (1 - w) * (np.sign(d0) != np.sign(delta))
        known = ~np.isnan(data.anchor)
        change[known] = 0.0
        flip[known] = 0.0
    return FindingFit(data, x, order, w, auc, best, runner, float(delta), change, flip, converged)


def interval(ff: FindingFit, a: str, b: str, w: np.ndarray, revealed: np.ndarray, *, confidence_level: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """``(delta, half-width)`` of the interval of AUC(a) - AUC(b) with posterior weights ``w`` ((n,) or (D, n))."""
    from scipy.special import ndtri

    delta, var = delta_variance(w, ff.order[a], w, ff.order[b], revealed=revealed)
    return delta, float(ndtri(0.5 + confidence_level / 2)) * np.sqrt(np.maximum(var, 0.0))


def separable(ff: FindingFit, w: np.ndarray, revealed: np.ndarray, *, confidence_level: float) -> np.ndarray:
    """Whether the interval of AUC(best) - AUC(runner-up) excludes 0 (one answer per row of ``w``)."""
    if ff.runner_up is None:
        raise ValueError("no runner-up to separate from")
    delta, half = interval(ff, ff.best, ff.runner_up, w, revealed, confidence_level=confidence_level)
    return np.asarray(np.abs(delta) > half)


def power_curve(ff: FindingFit, ranks: np.ndarray, budgets: list[int], *, n_draws: int, confidence_level: float,
                rng: np.random.Generator) -> list[float]:
    """P(separable) after revealing the studies of global priority < k, for each k of ``budgets``.

    Monte Carlo from the fitted model: every study's truth drawn from ``posterior`` (the same draws for every
    budget); the drawn truths of the revealed studies replace their posteriors and the other posteriors are kept
    (the latent model is not refitted per draw: a first-order predictive of the two-phase estimate); separable =
    the interval of :func:`interval` excludes 0. ``ranks`` gives each of this finding's studies its 0-based global
    priority (``>= len`` = not a candidate).
    """
    if ff.runner_up is None:
        return [float("nan")] * len(budgets)
    w = ff.posterior
    truth = (rng.random((n_draws, len(w))) < w).astype(float)
    known = ~np.isnan(ff.data.anchor)
    out = []
    for k in budgets:
        reveal = (ranks < k) & ~known
        if not reveal.any():
            out.append(float(separable(ff, w, known, confidence_level=confidence_level)))
            continue
        wd = np.where(reveal, truth, w)
        out.append(float(separable(ff, wd, known | reveal, confidence_level=confidence_level).mean()))
    return out
