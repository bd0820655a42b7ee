"""One latent truth per finding: the latent-class model of the readers and of every model's score at once
(private to :mod:`cxreval.latent`; the public entry is :func:`~cxreval.latent.evaluate_latent_auc`).

The model. ``T ~ Bernoulli(π)``; the readers as in :mod:`cxreval.latent._model` (a sensitivity and specificity
each, conditionally independent given ``T``; a declared group of dependent readers is one reader whose joint
label pattern has a free distribution in each class); the models' scores enter through the density ratio
``log f1(x) / f0(x) = h(x)·β`` with ``f0``, the joint distribution of all the models' scores given ``T = 0``,
left free. ``x`` holds every model's normal score ``z_m = Φ⁻¹((rank - ½)/n)``; ``h`` is a natural cubic spline of
their mean ``z̄`` (the study as all the models see it) plus each model's linear deviation ``z_m - z̄`` (one
dropped: they sum to zero). With one model it is the ``'spline'`` model of :func:`fit_latent_class`. A model
without a score for a study contributes no deviation there (``z_m - z̄ = 0``) and ``z̄`` is the mean of the
scores it has.

Every model's latent AUC is :func:`~cxreval.latent.latent_auc_score` of its scores with the *same* posteriors
``P(T = 1 | readers, all scores)``: one reference per finding, so that the models are ranked against one truth.
Those posteriors condition on everything the scores depend on, which is what makes the pair-weighted AUC a
ratio of unbiased sums for each model.

Score models (``score_model``): ``'spline'`` (readers independent of the scores given the truth),
``'dependent'`` (each reader's sensitivity and specificity a logistic function of ``z̄`` within the class: the
readers miss what every model finds hard), or ``'auto'``: both, averaged by their Bayesian-information-criterion
weights ``exp(-BIC/2)`` (Bayesian model averaging of the posteriors, refitted and reweighted in every
replicate) instead of picking one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..bootstrap import ResamplingPlan, iter_shards
from ..stats._normal_scores import normal_scores
from . import _em
from ._auc import latent_auc_rows
from ._fitting import (
    Inputs,
    ReaderData,
    check_inputs,
    default_n_bins,
    fit_rows,
    group_accuracy,
    score_bins,
    spline_basis,
    state_parameters,
    study_posterior,
)
from ._model import LatentClassFit, fit_from_state

__all__ = ["JOINT_SCORE_MODELS", "FindingFit", "fit_finding", "joint_design", "candidates_of"]

#: The score models of the joint fit; ``'auto'`` averages ``'spline'`` and ``'dependent'``.
JOINT_SCORE_MODELS = ("auto", "spline", "dependent")
_CHUNK_ELEMENTS = 2_000_000
#: A candidate score model with less weight than this on the data is left out of the replicates.
_NEGLIGIBLE = 1e-3


def candidates_of(score_model: str) -> tuple[str, ...]:
    """The score models a ``score_model`` fits (two for ``'auto'``, averaged)."""
    return ("spline", "dependent") if score_model == "auto" else (score_model,)


def joint_design(scores: np.ndarray, n_knots: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(bins, bin_basis, study_basis)`` of the joint density-ratio model: the basis ``h(x)`` of every study
    (n, d) (column 0 the constant, column 1 the standardised ``z̄``), its distinct rows as bins."""
    n, m = scores.shape
    z = np.full((n, m), np.nan)
    for j in range(m):
        ok = np.isfinite(scores[:, j])
        if ok.any():
            z[ok, j] = normal_scores(scores[ok, j])
    has = np.isfinite(z).any(axis=1)
    zbar = np.zeros(n)
    zbar[has] = np.nanmean(z[has], axis=1)
    dev = np.nan_to_num(z - zbar[:, None])[:, : max(m - 1, 0)]
    knots = np.unique(np.quantile(zbar, np.linspace(0.05, 0.95, n_knots)))
    study = np.column_stack([spline_basis(zbar, knots), dev])
    sd = study.std(axis=0)
    keep = np.r_[True, sd[1:] > 1e-12]
    study = study[:, keep]
    study[:, 1:] /= sd[keep][1:]
    bin_basis, bins = np.unique(study, axis=0, return_inverse=True)
    return bins.reshape(-1).astype(np.intp), bin_basis, study


@dataclass(frozen=True)
class FindingFit:
    """The joint fit of one finding (:func:`fit_finding`).

    ``posterior`` (n,): the (model-averaged) posteriors; ``auc`` (M,): each model's latent AUC with them;
    ``distribution`` (M, B) its replicates (None without a plan); ``candidates``, ``weights`` (K,): the score
    models fitted and their weights on the data; ``candidate_auc`` (K, M); ``fits``: each candidate's
    :class:`LatentClassFit`; ``sensitivity``, ``specificity`` (B, R): the first refitted candidate's readers in
    each replicate (None without a plan); ``n_not_converged``: replicates whose EM stopped at ``max_iter``.
    """

    posterior: np.ndarray
    auc: np.ndarray
    distribution: np.ndarray | None
    candidates: tuple[str, ...]
    weights: np.ndarray
    candidate_auc: np.ndarray
    fits: tuple[LatentClassFit, ...]
    sensitivity: np.ndarray | None
    specificity: np.ndarray | None
    n_not_converged: int


def _n_params(inputs: Inputs, cells: _em.Cells) -> int:
    """Free parameters of a candidate (the BIC's penalty): the density ratio (or prevalence), the estimated
    readers' two accuracies (and two slopes under ``'dependent'``), each group's pattern probabilities."""
    grouped = {j for g in inputs.groups for j in g}
    has = (~np.isnan(inputs.labels)).any(axis=0)
    free = sum(1 for j in range(has.size) if has[j] and not inputs.fixed[j] and j not in grouped)
    d = 1 if inputs.bin_basis is None else inputs.bin_basis.shape[1]
    n_groups = 0 if cells.group_onehot is None else 2 * cells.group_onehot.shape[1]
    return d + (4 if inputs.model == "dependent" else 2) * free + n_groups


def _bic_weights(objective: np.ndarray, n_params: np.ndarray, n: np.ndarray) -> np.ndarray:
    """(K, B) weights ``exp(-BIC/2)`` normalised over the K candidates, ``BIC = -2 ll + k log n``."""
    a = objective - 0.5 * n_params[:, None] * np.log(np.maximum(n, 2.0))[None, :]
    a = a - a.max(axis=0, keepdims=True)
    e = np.exp(a)
    return e / e.sum(axis=0, keepdims=True)


def _aucs(scores: np.ndarray | None, post: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(M, B): each model's latent AUC on the studies it scores."""
    if scores is None:
        return np.empty((0, post.shape[0]))
    out = np.full((scores.shape[1], post.shape[0]), np.nan)
    for j in range(scores.shape[1]):
        ok = np.isfinite(scores[:, j])
        if ok.sum() >= 2:
            out[j] = latent_auc_rows(scores[ok, j], post[:, ok], w[:, ok])
    return out


def _reader_rows(inputs: Inputs, cells: _em.Cells, st: _em.EMState, w: np.ndarray) -> tuple[np.ndarray, ...]:
    has = (~np.isnan(inputs.labels)).any(axis=0)
    se, sp = _em.marginal_accuracy(cells, _em.cell_weights(cells, w), st)
    if st.group1 is not None and st.group0 is not None:
        se_g, sp_g = group_accuracy(inputs.groups, st.group1, st.group0, inputs.labels.shape[1])
        se, sp = np.where(np.isnan(se_g), se, se_g), np.where(np.isnan(sp_g), sp, sp_g)
    return np.where(has, se, np.nan), np.where(has, sp, np.nan)


def fit_finding(
    labels: np.ndarray,
    scores: np.ndarray | None,
    plan: ResamplingPlan | None,
    *,
    anchor: np.ndarray | None = None,
    reader_accuracy: np.ndarray | None = None,
    groups: tuple[tuple[int, ...], ...] = (),
    score_model: str = "auto",
    correlation: float = 0.0,
    accuracy_prior: np.ndarray | None = None,
    max_iter: int = 2000,
    tol: float = 1e-10,
    replicate_tol: float = 1e-8,
) -> FindingFit:
    """The joint model of the readers ``labels`` (n, R) and every model's ``scores`` (n, M; NaN: not scored;
    None: the readers alone) of one finding, fitted to the data and to every replicate of ``plan``;
    ``accuracy_prior`` (R, 4): Beta prior pseudo-counts of the readers' accuracies (posterior mode)."""
    data = ReaderData(labels, None, anchor, reader_accuracy, None)
    base = check_inputs(data, None, 0.5, groups=groups, accuracy_prior=accuracy_prior)
    if scores is not None:
        bins, bin_basis, study_basis = joint_design(np.asarray(scores, dtype=float))
        z = study_basis[:, 1] if study_basis.shape[1] > 1 else np.zeros(study_basis.shape[0])
        r_bins = score_bins(z, default_n_bins(z.size, score_model="dependent")).bins
        r_z = np.bincount(r_bins, weights=z) / np.bincount(r_bins)
        base = replace(
            base,
            bins=bins,
            n_bins=int(bin_basis.shape[0]),
            study_basis=study_basis,
            bin_basis=bin_basis,
            reader_bins=r_bins,
            reader_z=r_z,
        )
        names = candidates_of(score_model)
    else:
        names = ("none",)
    cands = [replace(base, model=name) for name in names]
    n_obs = float(base.weight.sum())
    fitted = []
    for inputs in cands:
        cells, st = fit_rows(
            inputs,
            inputs.weight[None, :],
            score_prior=0.5,
            max_iter=max_iter,
            tol=tol,
            correlation=correlation,
        )
        fitted.append((cells, st))
    k_params = np.array([_n_params(i, c) for i, (c, _) in zip(cands, fitted)], dtype=float)
    obj = np.array([st.objective[0] for _, st in fitted])[:, None]
    weights = _bic_weights(obj, k_params, np.array([n_obs]))[:, 0]
    posts = np.stack([study_posterior(i, c, st)[0] for i, (c, st) in zip(cands, fitted)])
    post = weights @ posts
    one = base.weight[None, :]
    cand_auc = np.stack([_aucs(scores, p[None, :], one)[:, 0] for p in posts])
    auc = _aucs(scores, post[None, :], one)[:, 0]
    fits = tuple(fit_from_state(i, c, st, 0) for i, (c, st) in zip(cands, fitted))
    if plan is None:
        return FindingFit(post, auc, None, tuple(names), weights, cand_auc, fits, None, None, 0)
    b_total, r = plan.n_resamples, base.labels.shape[1]
    dist = np.full((auc.shape[0], b_total), np.nan)
    se, sp = np.empty((b_total, r)), np.empty((b_total, r))
    not_conv = 0
    chunk = int(np.clip(_CHUNK_ELEMENTS // (fitted[0][0].n_cells * 2 * r), 64, 1024))
    # a candidate whose weight on the data is negligible is not refitted in the replicates (weight 0 there)
    live = [k for k in range(len(cands)) if weights[k] >= _NEGLIGIBLE]
    for sl in iter_shards(b_total, chunk):
        w = plan.study_weights(replicates=sl).astype(float)
        objs, posts_b = [], []
        for k in live:
            inputs = cands[k]
            init = state_parameters(fitted[k][1], 0)
            cells_b, st_b = fit_rows(
                inputs,
                w,
                score_prior=0.5,
                max_iter=max_iter,
                tol=replicate_tol,
                init=init,
                correlation=correlation,
            )
            objs.append(st_b.objective)
            posts_b.append(study_posterior(inputs, cells_b, st_b))
            not_conv += int((~st_b.converged).sum())
            if k == live[0]:
                se[sl], sp[sl] = _reader_rows(inputs, cells_b, st_b, w)
        wk = _bic_weights(np.stack(objs), k_params[live], w.sum(axis=1))
        post_b = np.einsum("kb,kbn->bn", wk, np.stack(posts_b))
        dist[:, sl] = _aucs(scores, post_b, w)
    return FindingFit(post, auc, dist, tuple(names), weights, cand_auc, fits, se, sp, not_conv)
