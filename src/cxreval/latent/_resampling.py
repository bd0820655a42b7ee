"""The patient bootstrap of the latent-class model: every replicate refits it, all replicates at once.

A replicate's weights are the counts of a :class:`~cxreval.bootstrap.ResamplingPlan` (a patient drawn ``c`` times
weighs ``c`` in each of its studies); EM runs on the ``(replicates, cells)`` weights together, each replicate
starting from the fit to the data (a warm start: a few iterations each) and stopping on its own. The score
bins, the spline knots and the normal scores are those of the data, fixed across replicates (the score's rank
transform is a fixed monotone map of the score). Each replicate's AUC is :func:`~cxreval.latent.latent_auc_score`
with that replicate's posteriors and counts, so the interval carries the uncertainty of the labels' truth, of the
readers' accuracies and of the studies drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..bootstrap import BootstrapResult, ResamplingPlan, iter_shards, percentile_ci
from ..exceptions import InvalidParameterError
from ..results import readonly
from . import _em
from ._auc import latent_auc_rows
from ._fitting import (
    ReaderData,
    check_inputs,
    fit_rows,
    select_score_model,
    state_parameters,
    study_posterior,
)
from ._model import LatentClassFit, fit_from_state

__all__ = ["LatentClassBootstrap", "bootstrap_latent_class"]

#: Replicates fitted together: as many as keep one (replicates, cells, 2 x readers) array near 16 MiB (EM's
#: per-iteration overhead is paid once per chunk; a row stops when it converges), at most 1,024.
_CHUNK_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class LatentClassBootstrap:
    """The latent-class model fitted to the data and to every replicate of a patient bootstrap.

    Attributes
    ----------
    fit : LatentClassFit
        The fit to the data.
    auc : float
        ``latent_auc_score(score, fit.posterior)`` (NaN without a score).
    auc_bootstrap : BootstrapResult or None
        The replicates' AUCs and their percentile interval (``None`` without a score).
    prevalence : ndarray of shape (n_resamples,)
    sensitivity, specificity : ndarray of shape (n_resamples, n_readers)
        Each replicate's fitted values (the given values for fixed readers; NaN for a reader without labels).
    n_not_converged : int
        Replicates whose EM stopped at ``max_iter``.
    """

    fit: LatentClassFit
    auc: float
    auc_bootstrap: BootstrapResult | None
    prevalence: np.ndarray = field(repr=False)
    sensitivity: np.ndarray = field(repr=False)
    specificity: np.ndarray = field(repr=False)
    n_not_converged: int

    def __post_init__(self) -> None:
        for name in ("prevalence", "sensitivity", "specificity"):
            readonly(getattr(self, name))

    def reader_interval(self, *, confidence_level: float = 0.95) -> dict[str, np.ndarray]:
        """Percentile intervals of each reader's sensitivity and specificity: arrays ``sensitivity_low``,
        ``sensitivity_high``, ``specificity_low``, ``specificity_high`` of shape (n_readers,)."""
        a = (1 - confidence_level) / 2 * 100
        out = {}
        for name in ("sensitivity", "specificity"):
            d = getattr(self, name)
            ok = np.isfinite(d).any(axis=0)
            lo = np.full(d.shape[1], np.nan)
            hi = lo.copy()
            if ok.any():
                lo[ok], hi[ok] = np.nanpercentile(d[:, ok], [a, 100 - a], axis=0)
            out[f"{name}_low"], out[f"{name}_high"] = lo, hi
        return out


def bootstrap_latent_class(
    reader_labels: np.ndarray,
    score: np.ndarray | None,
    plan: ResamplingPlan,
    *,
    anchor: np.ndarray | None = None,
    reader_accuracy: np.ndarray | None = None,
    confidence_level: float = 0.95,
    score_model: str = "spline",
    n_bins: int | None = None,
    score_prior: float = 0.5,
    max_iter: int = 2000,
    tol: float = 1e-10,
    replicate_tol: float = 1e-8,
) -> LatentClassBootstrap:
    """Fit :func:`~cxreval.latent.fit_latent_class` to the data and to every replicate of ``plan``.

    Parameters
    ----------
    reader_labels, score, anchor, reader_accuracy, score_model, n_bins, score_prior, max_iter, tol
        As :func:`~cxreval.latent.fit_latent_class` (``score=None``: the readers alone, no AUC).
    plan : ResamplingPlan
        A patient bootstrap plan over the same studies in the same order (:func:`cxreval.bootstrap.draw_plan`
        of the studies' patient ids); one plan shared by several models makes their replicates paired.
    confidence_level : float, default=0.95
    replicate_tol : float, default=1e-8
        EM's stopping rule in the replicates (they start from the data's fit).

    Returns
    -------
    res : LatentClassBootstrap

    Examples
    --------
    >>> import numpy as np
    >>> from cxreval.bootstrap import draw_plan
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(600) < 0.3
    >>> readers = np.where(truth[:, None], rng.random((600, 3)) < 0.85, rng.random((600, 3)) > 0.9).astype(float)
    >>> score = truth + rng.normal(size=600)
    >>> res = bootstrap_latent_class(readers, score, draw_plan(np.arange(600), n_resamples=200, rng=0))
    >>> ci = res.auc_bootstrap.confidence_interval
    >>> bool(ci.low < res.auc < ci.high), res.sensitivity.shape
    (True, (200, 3))
    """
    data, func = ReaderData(reader_labels, score, anchor, reader_accuracy, None), "bootstrap_latent_class"
    if score_model == "auto":  # chosen once on the data; every replicate refits the chosen model
        score_model = select_score_model(*data, n_bins, max_iter=max_iter, tol=tol, func=func)
    inputs = check_inputs(data, n_bins, score_prior, score_model=score_model, func=func)
    if not isinstance(plan, ResamplingPlan):
        raise InvalidParameterError(
            f"bootstrap_latent_class: 'plan' must be a ResamplingPlan (cxreval.bootstrap."
            f"draw_plan); got {type(plan).__name__}."
        )
    n = inputs.labels.shape[0]
    if plan.n_studies != n:
        raise InvalidParameterError(
            f"bootstrap_latent_class: 'plan' covers {plan.n_studies} studies but "
            f"'reader_labels' has {n} rows; draw it from these studies' patient ids."
        )
    cells, st = fit_rows(inputs, inputs.weight[None, :], score_prior=score_prior, max_iter=max_iter, tol=tol)
    fit = fit_from_state(inputs, cells, st, 0)
    init = state_parameters(st, 0)
    s = None if score is None else np.asarray(score, dtype=float)
    auc = (
        float(latent_auc_rows(s, fit.posterior[None, :], inputs.weight[None, :])[0])
        if s is not None
        else np.nan
    )
    b_total = plan.n_resamples
    r = inputs.labels.shape[1]
    prev = np.empty(b_total)
    se = np.empty((b_total, r))
    sp = np.empty((b_total, r))
    aucs = np.full(b_total, np.nan)
    not_conv = 0
    has = (~np.isnan(inputs.labels)).any(axis=0)
    for sl in iter_shards(b_total, int(np.clip(_CHUNK_ELEMENTS // (cells.n_cells * 2 * r), 64, 1024))):
        w = plan.study_weights(replicates=sl).astype(float)
        cells_b, st_b = fit_rows(
            inputs, w, score_prior=score_prior, max_iter=max_iter, tol=replicate_tol, init=init
        )
        prev[sl] = st_b.prevalence
        se_m, sp_m = _em.marginal_accuracy(cells_b, _em.cell_weights(cells_b, w), st_b)
        se[sl] = np.where(has, se_m, np.nan)
        sp[sl] = np.where(has, sp_m, np.nan)
        not_conv += int((~st_b.converged).sum())
        if s is not None:
            aucs[sl] = latent_auc_rows(s, study_posterior(inputs, cells_b, st_b), w)
    boot = None if s is None else percentile_ci(aucs, estimate=auc, confidence_level=confidence_level)
    return LatentClassBootstrap(fit, auc, boot, prev, se, sp, not_conv)
