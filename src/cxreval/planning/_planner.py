"""Per finding: the posteriors, the two-phase AUC of every model, the leading pair, each study's expected effect on
the leading pair's AUC difference, and the Monte Carlo probability that the pair is separable after relabelling."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats._normal_scores import normal_scores
from ._design import inclusion_probabilities, pair_estimate, systematic_sample
from ._inputs import FindingData, merge_identical_scores
from ._mixture import fit_joint, log_odds
from ._soft_auc import ScoreOrder, delta_variance, reveal_auc, score_order, soft_auc, weighted_auc

__all__ = [
    "FindingFit",
    "fit_finding",
    "sampling_score",
    "posterior_truths",
    "decisions",
    "auc_prior_weights",
    "effective_draws",
    "DesignGrid",
    "power_curve",
    "PowerCurve",
    "search_budgets",
]


@dataclass(frozen=True)
class FindingFit:
    """One finding's fitted state.

    ``posterior`` is ``P(T = 1 | references, every model's score, anchor)`` per study (one latent model of all
    scores: the weights of every model's AUC, what truths are drawn from and expectations taken with);
    ``prediction`` is ``P(T = 1 | references, the models' mean normal score, anchor)`` (one score axis: the
    prediction the design-based estimate corrects and the sampling score follows; on the CheXpert test set it
    tracks the radiologists' consensus more closely than the joint posterior, whose many score dimensions make it
    overconfident);
    ``change`` each study's expected absolute change of ``delta`` = AUC(best) - AUC(runner-up) when its truth is
    revealed, ``flip`` the probability that revealing it flips the sign of ``delta``; ``converged`` whether both
    latent fits (the joint one and the prediction's) converged.
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
    prediction: np.ndarray


def _leading(auc: dict[str, float], scores: dict[str, np.ndarray]) -> tuple[str, str | None]:
    ranked = sorted(auc, key=lambda m: (-np.nan_to_num(auc[m], nan=-1.0), m))
    best = ranked[0]
    for m in ranked[1:]:  # a model with the best model's very scores cannot be separated from it: skip it
        if not np.array_equal(scores[m], scores[best]):
            return best, m
    return best, None


def distinct_models(scores: dict[str, np.ndarray]) -> list[str]:
    """The models of ``scores`` with a score vector of their own: the first of each set of identical ones."""
    return list(merge_identical_scores(scores)[0])


def distinct_scores(scores: dict[str, np.ndarray]) -> np.ndarray:
    """The normal-scale scores of the models, one column per distinct score vector (copies would make the
    covariance singular)."""
    return np.column_stack(
        [normal_scores(np.asarray(scores[m], dtype=float)) for m in distinct_models(scores)]
    )


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
    prediction, prediction_converged = fit_joint(data.references, x.mean(axis=1)[:, None], anchor=data.anchor)
    converged = converged and prediction_converged
    return FindingFit(data, x, order, w, auc, best, runner, float(delta), change, flip, converged, prediction)


def sampling_score(fits: list[FindingFit], n: int) -> np.ndarray:
    """Each of the ``n`` studies' sampling score: ``sqrt(sum_f w_f / P_f^2 + (1 - w_f) / Q_f^2)`` over the findings,
    ``w_f`` the study's prediction of finding ``f`` and ``P_f``, ``Q_f`` the expected numbers of positive and
    negative studies not yet known (0 for a known study). A study's share of an AUC's pair sums is about ``1 / P``
    as a positive and ``1 / Q`` as a negative: inclusion probabilities proportional to the root of its expected
    square (Neyman allocation) make the design-based AUCs' variance small, summed over the findings an expert reads
    at once. With a rare finding it favours its likely positives."""
    score = np.zeros(n)
    for ff in fits:
        open_ = np.isnan(ff.data.anchor)
        w = ff.prediction[open_]
        pos, neg = max(float(w.sum()), 1.0), max(float((1.0 - w).sum()), 1.0)
        score[ff.data.index[open_]] += w / pos**2 + (1.0 - w) / neg**2
    return np.sqrt(score)


def interval(
    ff: FindingFit, a: str, b: str, w: np.ndarray, revealed: np.ndarray, *, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(delta, half-width)`` of the interval of AUC(a) - AUC(b) with posterior weights ``w`` ((n,) or (D, n))."""
    from scipy.special import ndtri

    delta, var = delta_variance(w, ff.order[a], w, ff.order[b], revealed=revealed)
    return delta, float(ndtri(0.5 + confidence_level / 2)) * np.sqrt(np.maximum(var, 0.0))


def _leading_rows(ff: FindingFit, auc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``auc`` (D, models of ``ff.data.scores``): the indices of the leading model and of the runner-up
    (the runner-up skips models with the leader's very scores; -1 when there is none)."""
    models = list(ff.data.scores)
    auc = np.nan_to_num(auc, nan=-1.0)
    # ties broken by name, as in _leading: the models are in sorted order, and argsort is stable
    order = np.argsort(-auc, axis=1, kind="stable")
    best = order[:, 0]
    runner = np.full(len(auc), -1)
    same = np.array([[np.array_equal(ff.data.scores[a], ff.data.scores[b]) for b in models] for a in models])
    for d in range(len(auc)):
        for j in order[d, 1:]:
            if not same[best[d], j]:
                runner[d] = j
                break
    return best, runner


def posterior_truths(
    ff: FindingFit, n_draws: int, rng: np.random.Generator, *, sweeps: int = 20
) -> np.ndarray:
    """``(n_draws, n)`` truths drawn from the posterior predictive of the latent model, its parameters' uncertainty
    included: ``n_draws`` chains of data augmentation (Tanner & Wong 1987) started at the fitted posteriors, each
    sweep drawing every study's truth given the parameters, then the parameters given the truths (prevalence,
    sensitivities and specificities from their Beta posteriors with the fit's half-count priors, the class means
    of the normal scores from their normal posteriors; the common covariance at its value given the truths); the
    truths of the last sweep are returned. Anchored studies keep their truth."""
    from scipy.special import expit

    y = ff.data.references
    obs = ~np.isnan(y)
    yo, no = (obs & (y == 1)).astype(float), (obs & (y == 0)).astype(float)
    x = ff.x
    n, p = x.shape
    anchor = ff.data.anchor
    known = ~np.isnan(anchor)
    w = np.broadcast_to(ff.posterior, (n_draws, n))
    sxx = x.T @ x
    ridge = 1e-6 * np.eye(p)
    eps = 1e-3
    for _ in range(sweeps):
        t = np.where(known, anchor, rng.random((n_draws, n)) < w)
        n1 = np.clip(t.sum(axis=1), 1.0, n - 1.0)
        n0 = n - n1
        prev = np.clip(rng.beta(1.0 + n1, 1.0 + n0), eps, 1 - eps)
        sens = np.clip(rng.beta(0.5 + t @ yo, 0.5 + t @ no), eps, 1 - eps)
        spec = np.clip(rng.beta(0.5 + (1 - t) @ no, 0.5 + (1 - t) @ yo), eps, 1 - eps)
        m1 = (t @ x) / n1[:, None]
        m0 = ((1 - t) @ x) / n0[:, None]
        cov = (
            sxx
            - n1[:, None, None] * m1[:, :, None] * m1[:, None, :]
            - n0[:, None, None] * m0[:, :, None] * m0[:, None, :]
        ) / n + ridge
        chol = np.linalg.cholesky(cov)
        mu1 = m1 + (chol @ rng.standard_normal((n_draws, p, 1)))[:, :, 0] / np.sqrt(n1)[:, None]
        mu0 = m0 + (chol @ rng.standard_normal((n_draws, p, 1)))[:, :, 0] / np.sqrt(n0)[:, None]
        w = np.where(known, anchor, expit(log_odds(prev, sens, spec, mu1, mu0, cov, yo, no, x)))
    return np.where(known, anchor, (rng.random((n_draws, n)) < w).astype(float))


@dataclass(frozen=True)
class PowerCurve:
    """What :func:`power_curve` returns: ``points`` ``(p_right, mc_se, p_separable, p_wrong)`` per budget of the
    grid; ``needed`` the smallest budget found whose P(right) reaches the target (None: no budget up to ``n_all``
    does), with its point in ``at_needed``; ``at_all`` the point with every candidate study relabelled (budget
    ``n_all``) and ``half_all`` the median half-width of the interval of AUC(best) - AUC(runner-up) there;
    ``separable_now`` whether the predictions as they are separate the pair in every draw (budget 0, not
    searched: the search asks what relabelling brings)."""

    points: list[tuple[float, float, float, float]]
    effective_draws: float
    separable_now: bool
    needed: int | None
    at_needed: tuple[float, float, float, float]
    n_all: int
    at_all: tuple[float, float, float, float]
    half_all: float


_NAN4 = (float("nan"),) * 4


def search_budgets(grid: list[int], n_all: int) -> list[int]:
    """The budgets searched for the target power beyond the grid: doubling from its largest (at least 1) up to,
    and ending at, ``n_all`` (every candidate study)."""
    out, k = [], max(max(grid, default=0), 1)
    while k * 2 < n_all:
        k *= 2
        out.append(k)
    return [*out, n_all] if n_all > max(grid, default=0) else out


_TAU2_FLOOR = 1e-4  # the between-model variance of the AUCs is taken as at least 0.01 squared


def auc_prior_weights(ff: FindingFit, truths: np.ndarray) -> np.ndarray:
    """``(D,)`` weights of ``D`` drawn truths under an exchangeable normal prior on the models' AUCs.

    The draws are of a posterior with a flat prior on every model's AUC, under which the leading pair's difference is
    centred at its estimate; but the pair was picked as the two largest estimates, so its difference runs high (the
    winner's curse) and so would the power. Empirical Bayes: each distinct model's AUC against the drawn truth,
    ``A_dm``, centred per draw (``C_dm = A_dm - mean_m A_dm``); the between-model variance ``tau2 = (sum_m
    mean_d(C_dm)^2 - sum_m var_d(C_dm)) / (M - 1)`` (method of moments: the spread of the centred AUCs less what their
    uncertainty adds; at least 0.01^2); the prior, with its centre integrated out, weights a draw by
    ``exp(-sum_m C_dm^2 / (2 tau2))``.
    """
    models = distinct_models(ff.data.scores)
    if len(models) < 2:
        return np.ones(len(truths))
    a = np.column_stack([np.nan_to_num(soft_auc(truths, ff.order[m]), nan=0.5) for m in models])
    c = a - a.mean(axis=1, keepdims=True)
    tau2 = max(float(((c.mean(axis=0) ** 2).sum() - c.var(axis=0).sum()) / (a.shape[1] - 1)), _TAU2_FLOOR)
    log_w = -(c**2).sum(axis=1) / (2 * tau2)
    return np.exp(log_w - log_w.max())


def effective_draws(weight: np.ndarray) -> float:
    """Kish's effective number of draws of weights ``weight``: ``(sum w)^2 / sum w^2`` (``len`` when equal)."""
    total = float(weight.sum())
    return total * total / float((weight * weight).sum()) if total > 0 else 0.0


def decisions(
    ff: FindingFit,
    truth: np.ndarray,
    boot: np.ndarray,
    sampled: np.ndarray,
    pi: np.ndarray,
    *,
    confidence_level: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per draw (rows of ``truth``, the drawn truths; ``boot``, Bayesian bootstrap weights of the studies;
    ``sampled``, the design's draw): ``(right, separable, half-width)``. The design-based estimate
    (:func:`pair_estimate`, the posteriors as predictions) picks its leading pair; separable = the interval of
    their difference excludes 0; right = separable and the leader is the population's best of that draw (the
    largest AUC against the drawn truth with the bootstrap weights, shrunk by :func:`shrink_population_aucs`;
    ties to the first in order)."""
    from scipy.special import ndtri

    models = list(ff.data.scores)
    est = [pair_estimate(ff.prediction, truth, sampled, pi, ff.order[m]) for m in models]
    best, runner = _leading_rows(ff, np.column_stack([e.auc for e in est]))
    pop = np.column_stack([np.nan_to_num(weighted_auc(truth, boot, ff.order[m]), nan=0.5) for m in models])
    true_best = np.argmax(pop, axis=1)
    z = float(ndtri(0.5 + confidence_level / 2))
    sep = np.zeros(len(truth), dtype=bool)
    half = np.full(len(truth), np.nan)
    imputed = np.where(sampled, truth, ff.prediction)
    every = np.ones(truth.shape[1], dtype=bool)
    for a, b in sorted(set(zip(best.tolist(), runner.tolist()))):
        if b < 0:
            continue
        rows = (best == a) & (runner == b)
        ea, eb = est[a], est[b]
        design = (ea.q[rows] * (ea.psi[rows] - eb.psi[rows]) ** 2).sum(axis=-1)
        _, sampling = delta_variance(
            imputed[rows], ff.order[models[a]], imputed[rows], ff.order[models[b]], revealed=every
        )
        h = z * np.sqrt(np.maximum(design + sampling, 0.0))
        sep[rows] = np.abs(ea.auc[rows] - eb.auc[rows]) > h
        half[rows] = h
    return sep & (best == true_best), sep, half


@dataclass(frozen=True)
class DesignGrid:
    """What the power needs of the design, for any budget: every study's priority score over the plan's candidates
    (``candidate``, global), the uniform floor, and where this finding's studies are (``index``)."""

    score: np.ndarray
    candidate: np.ndarray
    uniform_floor: float
    index: np.ndarray

    def pi(self, k: int) -> np.ndarray:
        """This finding's inclusion probabilities at budget ``k`` (1 for a study that is no candidate: known)."""
        out = np.ones(len(self.score))
        out[self.candidate] = inclusion_probabilities(
            self.score[self.candidate], k, uniform_floor=self.uniform_floor
        )
        return out

    def sample(self, k: int, n_draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """``(sampled, pi)`` of this finding's studies: ``n_draws`` designs of budget ``k`` drawn over every
        candidate (the same random order and start for every ``k``: common random numbers)."""
        pi = self.pi(k)
        drawn = np.ones((n_draws, len(pi)), dtype=bool)
        if k > 0:
            drawn[:, self.candidate] = systematic_sample(
                pi[self.candidate], np.random.default_rng(seed), n_draws
            )
        else:
            drawn[:, self.candidate] = False
        return drawn[:, self.index], pi[self.index]


def power_curve(
    ff: FindingFit,
    grid: DesignGrid,
    budgets: list[int],
    *,
    n_draws: int,
    confidence_level: float,
    rng: np.random.Generator,
    n_all: int,
    target_power: float = 0.8,
) -> PowerCurve:
    """P(right decision) at each budget of ``budgets``: the probability that, once the expert has labelled a
    sample of that size drawn by the plan's design, the design-based estimate separates its leading pair and the
    leader is the population's best; with its Monte Carlo standard error, P(separable) and P(separable with the
    wrong leader); and the smallest budget whose P(right) reaches ``target_power``, searched up to ``n_all`` (every
    candidate study).

    Monte Carlo: ``n_draws`` truths of every study from :func:`posterior_truths` (the latent model's posterior
    predictive, its parameters' uncertainty included) and as many Bayesian bootstrap weights of the studies (the
    population they stand for: which model is best there); per budget, as many draws of the design (the same random
    order and start for every budget), the drawn truths revealed on each sample and :func:`decisions` asked. The
    answers are averaged with the weights of :func:`auc_prior_weights` (an exchangeable prior on the models' AUCs,
    against the winner's curse of the leading pair), which leave fewer draws in effect (:func:`effective_draws`,
    ``E``): the standard error of a probability ``p`` is ``sqrt(p (1 - p) / E)``. A budget of 0 reveals nothing:
    the estimate is the predictions' alone.

    The search: the grid's budgets from 1, then :func:`search_budgets` (doubling up to ``n_all``), in order, until a
    budget reaches the target; then bisection between it and the budget before it (0 before the first) (the same
    draws throughout, at most 6 steps, to within 1/64 of the gap). The curve need not rise with the budget, so this
    is the first crossing found, not a proof that no smaller budget reaches it.
    """
    if ff.runner_up is None:
        return PowerCurve(
            [_NAN4] * len(budgets), float("nan"), False, None, _NAN4, n_all, _NAN4, float("nan")
        )
    truth = posterior_truths(ff, n_draws, rng)
    boot = rng.dirichlet(np.ones(truth.shape[1]), size=n_draws)
    weight = auc_prior_weights(ff, truth)
    ess = effective_draws(weight)
    seed = int(rng.integers(2**63))
    seen: dict[int, tuple[float, float, float, float, float]] = {}

    def at(k: int) -> tuple[float, float, float, float, float]:
        """``(p_right, mc_se, p_separable, p_wrong, median half-width)`` at budget ``k``."""
        if k not in seen:
            sampled, pi = grid.sample(k, n_draws, seed)
            right, sep, half = decisions(ff, truth, boot, sampled, pi, confidence_level=confidence_level)
            p = float((weight * right).sum() / weight.sum())
            seen[k] = (
                p,
                float(np.sqrt(p * (1 - p) / ess)),
                float((weight * sep).sum() / weight.sum()),
                float((weight * (sep & ~right)).sum() / weight.sum()),
                float(np.nanmedian(half)) if np.isfinite(half).any() else float("nan"),
            )
        return seen[k]

    points = [at(k)[:4] for k in budgets]
    needed = None
    before = 0
    for k in sorted({*budgets, *search_budgets(budgets, n_all)} - {0}):
        if at(k)[0] >= target_power:
            needed = k
            break
        before = k
    if needed is not None:
        lo, hi = before, needed
        tol = max(1, -(-(hi - lo) // 64))
        while hi - lo > tol:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if at(mid)[0] >= target_power else (mid, hi)
        needed = hi
    return PowerCurve(
        points,
        ess,
        bool(at(0)[2] == 1.0),
        needed,
        at(needed)[:4] if needed is not None else _NAN4,
        n_all,
        at(n_all)[:4],
        at(n_all)[4],
    )
