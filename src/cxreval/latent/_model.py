"""The latent-class model of several readers and one model's score, fitted by EM.

Model (per finding, per model): each study ``i`` has a true state ``T_i``; given ``T_i`` the readers' labels
are independent of each other and of the score, reader ``r`` saying positive with probability ``Se_r`` when
``T_i = 1`` and negative with probability ``Sp_r`` when ``T_i = 0``. A missing reader label drops out of the
likelihood; a study with an *anchor* (its truth known exactly, e.g. the relabelled subset of a two-phase design)
has ``T_i`` observed. Known reader accuracies are held fixed. EM starts from the mean of each study's reader
labels (a soft majority vote), and the fitted classes are the ones on which the readers agree with the truth
more often than not. Two models of the score given the truth (``score_model``):

``'spline'`` (default)
    The semiparametric density-ratio model: ``P(T = 1 | score) = expit(h(z)·β)`` with ``h`` a natural cubic
    spline (4 knots at the 5/35/65/95% quantiles) of the score's normal score ``z = Φ⁻¹((rank - ½)/n)``, i.e.
    the class-conditional densities are free apart from a smooth log ratio ``log f1/f0`` (equivalently the
    prevalence ``π`` and ``F0`` are free and ``F1 = F0·exp(...)``). A weak ridge (``10⁻³ |β|²/2`` on the
    standardised non-constant terms) keeps a perfectly separating score finite. The fit groups the scores into
    ``n_bins`` quantile bins (each at its mean ``z``); the posterior of a study is evaluated at its own score.
``'bins'``
    The nonparametric model of Zhou, Castelluccio & Zhou [1]_: ``T ~ Bernoulli(π)``, the score cut into
    quantile bins with a free multinomial ``F1``, ``F0`` per class, with a Dirichlet(1 + α) prior
    (``score_prior=α``, default 0.5 pseudo-studies per bin and class, so that an empty bin does not force a
    posterior to 0 or 1; 0 for the plain maximum likelihood).
``'dependent'``
    The ``'spline'`` score model without the conditional independence of the readers and the score given the
    truth: each reader's sensitivity and specificity is a logistic function of the score's standardised normal
    score ``z`` within the class, ``logit Se_r(z) = logit Se_r + a_r z`` and ``logit Sp_r(z) = logit Sp_r + b_r z``
    (two slopes per reader; a ridge ``(a_r² + b_r²)/2``, i.e. a standard-normal prior on each slope), the readers
    independent of each other given the truth *and* the score. This is the covariate-dependent latent-class
    model of the diagnostic-accuracy literature (a reader's accuracy depends on an observed characteristic of
    the study: Qu, Tan & Kutner [2]_ model the conditional dependence through a shared study effect; here the
    effect is the score itself, so no latent random effect is needed): hard positives that both the readers and
    the model miss (``a_r > 0``: the readers see positives with a high score more often) are no longer read as
    negatives. Identified with three readers: at each score the three readers' 8 label patterns (7 degrees of
    freedom) fix ``P(T = 1 | z)`` and each reader's ``Se_r(z)``, ``Sp_r(z)`` (7 parameters), and the model
    restricts them to be smooth in ``z``. Fitted from the ``'spline'`` fit (EM continues from it with the slopes
    at 0), on ``default_n_bins`` bins of the score, the reader part at each bin's mean ``z``.
``'auto'``
    ``'dependent'`` where the Bayesian information criterion prefers it to ``'spline'`` (two parameters more per
    reader; :func:`select_score_model`), else ``'spline'``: the score-dependent model only where the data show
    the dependence.

On the simulation of ``bench/suites/latent.py`` both give posteriors whose pair-weighted AUC
(:func:`~cxreval.latent.latent_auc_score`) is far closer to the true-label AUC than reader-only posteriors;
``'bins'`` keeps a downward bias (pairs in one bin are not ordered by their posteriors, and the free bins are
noisy with few positives), which the smooth ``'spline'`` does not, so ``'spline'`` is the default.

Identification: with fewer than three readers of a finding and neither known reader accuracies nor an anchor
subset, the model is not identified (a two-reader latent-class model has more parameters than the data have
degrees of freedom), and :func:`fit_latent_class` raises :class:`NotIdentifiedError` with the sentence
:data:`NOT_IDENTIFIED`.

References
----------
.. [1] Zhou X-H, Castelluccio P, Zhou C (2005). Nonparametric estimation of ROC curves in the absence of a
   gold standard. Biometrics 61(2):600-609. doi:10.1111/j.0006-341X.2005.00291.x
.. [2] Qu Y, Tan M, Kutner MH (1996). Random effects models in latent class analysis for evaluating accuracy
   of diagnostic tests. Biometrics 52(3):797-810. doi:10.2307/2533043
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..results import readonly
from . import _em
from ._fitting import (
    NOT_IDENTIFIED,
    SCORE_MODELS,
    Inputs,
    NotIdentifiedError,
    ReaderData,
    ScoreBins,
    check_inputs,
    default_n_bins,
    fit_rows,
    group_accuracy,
    score_bins,
    select_score_model,
    study_posterior,
)

__all__ = [
    "NOT_IDENTIFIED",
    "NotIdentifiedError",
    "SCORE_MODELS",
    "LatentClassFit",
    "fit_latent_class",
    "fit_from_state",
    "default_n_bins",
    "ScoreBins",
    "score_bins",
    "select_score_model",
]


@dataclass(frozen=True)
class LatentClassFit:
    """A fitted latent-class model (:func:`fit_latent_class`).

    Attributes
    ----------
    posterior : ndarray of shape (n_studies,)
        ``P(T_i = 1 | reader labels of i, score bin of i)`` under the fitted model; exactly 1.0 / 0.0 on anchors.
    prevalence : float
        The fitted ``π``.
    sensitivity, specificity : ndarray of shape (n_readers,)
        Each reader's fitted (or given, when fixed) sensitivity and specificity; NaN for a reader without any
        label. Under ``score_model='dependent'``: averaged over the scores of the fitted class.
    score_given_positive, score_given_negative : ndarray of shape (n_bins,)
        The bin probabilities of the score given ``T = 1`` and ``T = 0``: fitted (``bins``), or the
        posterior-weighted share of each bin (``spline``); 1.0 in one bin without a score.
    bins : ndarray of int, shape (n_studies,)
        Each study's score bin (all 0 without a score).
    bin_edges : ndarray of shape (n_bins - 1,)
        The scores at which the bins start (a score equal to an edge is in the bin above).
    log_likelihood : float
        The final value of the objective EM maximises: the weighted log-likelihood plus
        ``score_prior * sum(log F1 + log F0)``.
    log_likelihood_trace : ndarray of shape (n_iter + 1,)
        The objective after each E-step (non-decreasing, a property of EM).
    n_iter : int
    converged : bool
        Whether the objective rose by less than ``tol`` per unit of weight in the last iteration.
    fixed_readers : ndarray of bool, shape (n_readers,)
        The readers whose accuracy was given (held fixed).
    score_model : {'spline', 'bins', 'dependent', 'none'}
        The model of the score given the truth (``'none'``: fitted without a score).
    sensitivity_slope, specificity_slope : ndarray of shape (n_readers,)
        ``'dependent'``: each reader's slope of ``logit Se`` / ``logit Sp`` in the score's standardised normal
        score within the class; 0.0 under the other models (their assumption), NaN for a reader without a label.
    """

    posterior: np.ndarray = field(repr=False)
    prevalence: float
    sensitivity: np.ndarray
    specificity: np.ndarray
    score_given_positive: np.ndarray = field(repr=False)
    score_given_negative: np.ndarray = field(repr=False)
    bins: np.ndarray = field(repr=False)
    bin_edges: np.ndarray = field(repr=False)
    log_likelihood: float
    log_likelihood_trace: np.ndarray = field(repr=False)
    n_iter: int
    converged: bool
    fixed_readers: np.ndarray = field(repr=False)
    score_model: str = "spline"
    sensitivity_slope: np.ndarray = field(default_factory=lambda: np.empty(0))
    specificity_slope: np.ndarray = field(default_factory=lambda: np.empty(0))

    def __post_init__(self) -> None:
        for name in (
            "posterior",
            "sensitivity",
            "specificity",
            "score_given_positive",
            "score_given_negative",
            "bins",
            "bin_edges",
            "log_likelihood_trace",
            "fixed_readers",
            "sensitivity_slope",
            "specificity_slope",
        ):
            readonly(getattr(self, name))

    @property
    def n_readers(self) -> int:
        return int(self.sensitivity.shape[0])

    @property
    def n_bins(self) -> int:
        return int(self.score_given_positive.shape[0])


def fit_latent_class(
    reader_labels: np.ndarray,
    score: np.ndarray | None = None,
    *,
    anchor: np.ndarray | None = None,
    reader_accuracy: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    n_bins: int | None = None,
    score_model: str = "spline",
    score_prior: float = 0.5,
    max_iter: int = 2000,
    tol: float = 1e-10,
) -> LatentClassFit:
    """Fit the latent-class model of the readers (and one model's score) by EM.

    Parameters
    ----------
    reader_labels : array-like of shape (n_studies, n_readers)
        1.0 positive, 0.0 negative, NaN no label.
    score : array-like of shape (n_studies,), optional
        One model's finite scores; cut into ``n_bins`` quantile bins with a free distribution per class.
        ``None``: the readers alone (the binary Dawid–Skene model).
    anchor : array-like of shape (n_studies,), optional
        1.0 / 0.0 where the truth is known exactly (two-phase design), NaN elsewhere.
    reader_accuracy : array-like of shape (n_readers, 2), optional
        Known (sensitivity, specificity) per reader, held fixed; a row of NaN estimates that reader.
    sample_weight : array-like of shape (n_studies,), optional
        Non-negative weights (e.g. bootstrap counts).
    n_bins : int, optional
        Score bins; default :func:`default_n_bins` of the number of studies and ``score_model``.
    score_model : {'spline', 'bins', 'dependent', 'auto'}, default='spline'
        The model of the score given the truth and of the readers' dependence on it (see the module's
        docstring); ``'auto'``: ``'dependent'`` where the Bayesian information criterion prefers it to
        ``'spline'`` (:func:`select_score_model`), else ``'spline'`` (``fit.score_model`` says which).
    score_prior : float, default=0.5
        ``bins`` only: Dirichlet pseudo-count per bin and class (0: maximum likelihood).
    max_iter : int, default=2000
    tol : float, default=1e-10
        EM stops when the objective rises by less than ``tol`` per unit of weight.

    Returns
    -------
    fit : LatentClassFit

    Raises
    ------
    NotIdentifiedError
        Fewer than three readers with a label, no ``reader_accuracy`` and no ``anchor``: :data:`NOT_IDENTIFIED`.
    InvalidParameterError
        An input of the wrong shape or with a value other than those documented.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(400) < 0.3
    >>> readers = np.where(truth[:, None], rng.random((400, 3)) < 0.85, rng.random((400, 3)) > 0.9).astype(float)
    >>> fit = fit_latent_class(readers, truth + rng.normal(size=400))
    >>> round(float(truth.mean()), 2), round(fit.prevalence, 2), fit.converged
    (0.26, 0.27, True)
    >>> try:
    ...     fit_latent_class(readers[:, :2])
    ... except NotIdentifiedError as exc:
    ...     print(str(exc) == NOT_IDENTIFIED)
    True
    """
    data = ReaderData(reader_labels, score, anchor, reader_accuracy, sample_weight)
    if score_model == "auto":
        score_model = select_score_model(*data, n_bins, max_iter=max_iter, tol=tol)
    inputs = check_inputs(data, n_bins, score_prior, score_model=score_model)
    cells, st = fit_rows(inputs, inputs.weight[None, :], score_prior=score_prior, max_iter=max_iter, tol=tol)
    return fit_from_state(inputs, cells, st, 0)


def fit_from_state(inputs: Inputs, cells: _em.Cells, st: _em.EMState, row: int) -> LatentClassFit:
    """The :class:`LatentClassFit` of one row of a vectorised EM run (for :mod:`cxreval.latent`'s modules)."""
    has = (~np.isnan(inputs.labels)).any(axis=0)
    cw = _em.cell_weights(cells, np.broadcast_to(inputs.weight, (st.posterior.shape[0], inputs.weight.size)))
    se_m, sp_m = _em.marginal_accuracy(cells, cw, st)
    if st.group1 is not None and st.group0 is not None:
        se_g, sp_g = group_accuracy(inputs.groups, st.group1, st.group0, inputs.labels.shape[1])
        se_m, sp_m = np.where(np.isnan(se_g), se_m, se_g), np.where(np.isnan(sp_g), sp_m, sp_g)
    se = np.where(has, se_m[row], np.nan)
    sp = np.where(has, sp_m[row], np.nan)
    zero = np.zeros(inputs.labels.shape[1])
    se_slope = np.where(has, zero if st.se_slope is None else st.se_slope[row], np.nan)
    sp_slope = np.where(has, zero if st.sp_slope is None else st.sp_slope[row], np.nan)
    return LatentClassFit(
        posterior=study_posterior(inputs, cells, st)[row].copy(),
        prevalence=float(st.prevalence[row]),
        sensitivity=se,
        specificity=sp,
        score_given_positive=st.f1[row].copy(),
        score_given_negative=st.f0[row].copy(),
        bins=inputs.bins.copy(),
        bin_edges=inputs.edges.copy(),
        log_likelihood=float(st.objective[row]),
        log_likelihood_trace=st.trace[:, row].copy(),
        n_iter=int(st.n_iter),
        converged=bool(st.converged[row]),
        fixed_readers=inputs.fixed.copy(),
        score_model=inputs.model,
        sensitivity_slope=se_slope,
        specificity_slope=sp_slope,
    )
