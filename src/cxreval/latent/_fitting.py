"""Validation of the latent-class model's inputs and the vectorised fit behind it (private to
:mod:`cxreval.latent`; the model is documented in :mod:`cxreval.latent._model`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError
from ..stats._normal_scores import normal_scores
from . import _em

__all__ = [
    "NOT_IDENTIFIED",
    "NotIdentifiedError",
    "ReaderData",
    "SCORE_MODELS",
    "default_n_bins",
    "ScoreBins",
    "score_bins",
    "spline_basis",
    "Inputs",
    "check_inputs",
    "fit_rows",
    "study_posterior",
    "independent_readers",
    "group_accuracy",
    "beta_prior_counts",
    "state_parameters",
    "select_score_model",
]

#: The sentence raised when a finding has fewer than three readers and neither reader accuracies nor an anchor.
NOT_IDENTIFIED = (
    "With fewer than three readers of a finding the latent-class model is not identified: give each "
    "reader's sensitivity and specificity (reader_accuracy=), plausible ranges of them (reader_prior=) or a "
    "subset of studies labelled by an anchor reference treated as exact (anchor=)."
)


class NotIdentifiedError(InvalidParameterError):
    """The latent-class model is not identified from the data given (message: :data:`NOT_IDENTIFIED`)."""


#: The models of the score given the truth (:mod:`cxreval.latent._model`).
SCORE_MODELS = ("spline", "bins", "dependent", "auto")


def default_n_bins(n_studies: int, *, score_model: str = "spline") -> int:
    """The number of score bins used when ``n_bins=None``.

    ``bins``: ``clip(round(n_studies / 50), 5, 20)`` free categories. ``spline``: ``clip(n_studies // 10, 10, 100)``
    bins only group the scores for the fit (the spline is evaluated at each study's own score for its posterior).
    Chosen on the simulation of ``bench/suites/latent.py``.
    """
    if score_model == "bins":
        return int(np.clip(round(n_studies / 50), 5, 20))
    if score_model in (
        "dependent",
        "auto",
    ):  # each bin splits into up to 2^R reader patterns, fitted per reader
        return int(np.clip(n_studies // 20, 10, 50))
    return int(np.clip(n_studies // 10, 10, 100))


class ScoreBins(NamedTuple):
    """What :func:`score_bins` returns: each score's bin and the bins' edges."""

    bins: np.ndarray
    edges: np.ndarray


def score_bins(score: np.ndarray, n_bins: int) -> ScoreBins:
    """Quantile bins of ``score``: ``(bins, edges)``, ``bins[i]`` in ``0..K-1`` (``K <= n_bins``).

    The edges are the ``k / n_bins`` quantiles (``k = 1..n_bins-1``) of the scores, deduplicated; a score equal
    to an edge goes to the bin above it, so tied scores always share a bin.
    """
    s = np.asarray(score, dtype=float)
    edges = np.unique(np.quantile(s, np.arange(1, n_bins) / n_bins)) if n_bins > 1 else np.empty(0)
    raw = np.searchsorted(edges, s, side="right")
    used, bins = np.unique(raw, return_inverse=True)
    return ScoreBins(bins.reshape(-1).astype(np.intp), edges[used[1:] - 1] if used.size > 1 else np.empty(0))


def spline_basis(z: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Natural cubic spline basis with ``knots`` (boundary knots first and last; linear beyond them):
    ``1, z, d_k(z) - d_{K-1}(z)`` for ``k = 1..K-2``, ``d_k(z) = ((z - ξ_k)₊³ - (z - ξ_K)₊³) / (ξ_K - ξ_k)``
    (Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, eq. 5.4-5.5)."""
    k = knots.size
    cols = [np.ones_like(z), z]
    if k >= 3:
        last = knots[-1]

        def d(j: int) -> np.ndarray:
            return (np.maximum(z - knots[j], 0.0) ** 3 - np.maximum(z - last, 0.0) ** 3) / (last - knots[j])

        dk = d(k - 2)
        cols += [d(j) - dk for j in range(k - 2)]
    return np.column_stack(cols)


# ------------------------------------------------------------------------------------------ validation
def _binary(a: object, name: str, shape: tuple[int, ...] | None, ndim: int) -> np.ndarray:
    try:
        x = np.array(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"fit_latent_class: '{name}' must be a float array of 1.0, 0.0 and NaN; got {type(a).__name__}."
        ) from exc
    if x.ndim != ndim or (shape is not None and x.shape != shape):
        want = f"shape {shape}" if shape is not None else f"{ndim}-D"
        raise InvalidParameterError(f"fit_latent_class: '{name}' must have {want}; got shape {x.shape}.")
    bad = ~(np.isnan(x) | (x == 0.0) | (x == 1.0))
    if bad.any():
        pos = tuple(int(v) for v in np.argwhere(bad)[0])
        where = pos[0] if len(pos) == 1 else pos
        raise InvalidParameterError(
            f"fit_latent_class: '{name}' must hold only 1.0 (positive), 0.0 (negative) and "
            f"NaN (no label); found {float(x[pos])!r} at {where}."
        )
    return x


@dataclass(frozen=True)
class Inputs:
    """Checked inputs: reader ``labels`` (n, R), score ``bins`` (n,) and their ``edges``, ``n_bins``, ``anchor``
    (n,), the ``fixed`` readers with their ``fixed_se`` / ``fixed_sp``, ``weight`` (n,), the score ``model``
    (``'spline'``, ``'bins'``, or ``'none'`` without a score), the spline basis of each study and bin and the
    declared ``groups`` of dependent readers (column indices; each group one multi-category reader) and, for the
    joint model, the coarser bins of score-dependent readers (``reader_bins`` (n,), ``reader_z``)."""

    labels: np.ndarray
    bins: np.ndarray
    edges: np.ndarray
    n_bins: int
    anchor: np.ndarray
    fixed: np.ndarray
    fixed_se: np.ndarray
    fixed_sp: np.ndarray
    weight: np.ndarray
    model: str
    study_basis: np.ndarray | None
    bin_basis: np.ndarray | None
    groups: tuple[tuple[int, ...], ...] = ()
    reader_bins: np.ndarray | None = None
    reader_z: np.ndarray | None = None
    accuracy_prior: np.ndarray | None = None  # (R, 4) Beta pseudo-counts, :func:`beta_prior_counts`

    @property
    def free(self) -> bool:
        """Nothing (anchor, fixed reader, prior on an accuracy) pins which class is the positive one."""
        return not self.fixed.any() and self.accuracy_prior is None and bool(np.isnan(self.anchor).all())


def _spline_design(s: np.ndarray, bins: np.ndarray, k: int, n_knots: int) -> tuple[np.ndarray, np.ndarray]:
    z = normal_scores(s)
    knots = np.unique(np.quantile(z, np.linspace(0.05, 0.95, n_knots)))
    study = spline_basis(z, knots)
    z_bin = np.bincount(bins, weights=z, minlength=k) / np.maximum(np.bincount(bins, minlength=k), 1)
    binb = spline_basis(z_bin, knots)
    sd = study[:, 1:].std(axis=0)
    sd[sd == 0] = 1.0
    study[:, 1:] /= sd
    binb[:, 1:] /= sd
    return study, binb


class ReaderData(NamedTuple):
    """The data arguments of :func:`~cxreval.latent.fit_latent_class`, as given (checked by :func:`check_inputs`)."""

    reader_labels: object
    score: object
    anchor: object
    reader_accuracy: object
    sample_weight: object


def check_inputs(
    data: ReaderData,
    n_bins: int | None,
    score_prior: float,
    *,
    score_model: str = "spline",
    n_knots: int = 4,
    func: str = "fit_latent_class",
    groups: tuple[tuple[int, ...], ...] = (),
    accuracy_prior: np.ndarray | None = None,
) -> Inputs:
    """Check and lay out the inputs of :func:`~cxreval.latent.fit_latent_class` (the errors name ``func``);
    ``accuracy_prior`` (R, 4): Beta prior pseudo-counts of each reader's accuracies (:func:`beta_prior_counts`;
    zeros for a reader without a prior)."""
    reader_labels, score, anchor, reader_accuracy, sample_weight = data
    y = _binary(reader_labels, "reader_labels", None, 2)
    n, r = y.shape
    if n == 0 or r == 0:
        raise InvalidParameterError(
            f"{func}: 'reader_labels' needs at least one study and one reader; got shape {y.shape}."
        )
    if score_model not in SCORE_MODELS:
        raise InvalidParameterError(
            f"The 'score_model' parameter of {func} must be one of {list(SCORE_MODELS)}. "
            f"Got {score_model!r} instead."
        )
    study_basis = bin_basis = None
    if score is None:
        bins, edges, k, model = np.zeros(n, dtype=np.intp), np.empty(0), 1, "none"
    else:
        s = np.asarray(score, dtype=float)
        if s.shape != (n,):
            raise InvalidParameterError(
                f"{func}: 'score' must have shape ({n},) like the rows of 'reader_labels'; got {s.shape}."
            )
        if not np.isfinite(s).all():
            i = int(np.flatnonzero(~np.isfinite(s))[0])
            raise InvalidParameterError(f"{func}: 'score' must be finite; found {float(s[i])!r} at {i}.")
        if n_bins is None:
            n_bins = default_n_bins(n, score_model=score_model)
        if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
            raise InvalidParameterError(
                f"The 'n_bins' parameter of {func} must be an int >= 1 or None. Got {n_bins!r} instead."
            )
        bins, edges = score_bins(s, int(n_bins))
        k = int(bins.max()) + 1
        model = score_model
        if model == "auto":
            raise InvalidParameterError(
                f"{func}: score_model='auto' is resolved by select_score_model before the "
                "inputs are laid out."
            )
        if model in ("spline", "dependent"):
            study_basis, bin_basis = _spline_design(s, bins, k, n_knots)
    a = np.full(n, np.nan) if anchor is None else _binary(anchor, "anchor", (n,), 1)
    fixed = np.zeros(r, dtype=bool)
    fse = np.full(r, 0.5)
    fsp = np.full(r, 0.5)
    if reader_accuracy is not None:
        acc = np.array(reader_accuracy, dtype=float)
        if acc.shape != (r, 2):
            raise InvalidParameterError(
                f"{func}: 'reader_accuracy' must have shape ({r}, 2) "
                f"(sensitivity, specificity per reader); got {acc.shape}."
            )
        given = ~np.isnan(acc)
        if (given[:, 0] != given[:, 1]).any():
            i = int(np.flatnonzero(given[:, 0] != given[:, 1])[0])
            raise InvalidParameterError(
                f"{func}: 'reader_accuracy' row {i} gives only one of "
                "sensitivity and specificity; give both or neither (NaN)."
            )
        if ((acc[given] < 0) | (acc[given] > 1)).any():
            raise InvalidParameterError(
                f"{func}: 'reader_accuracy' values must be in [0, 1] (or NaN for a reader to estimate)."
            )
        fixed = given[:, 0]
        fse = np.clip(np.where(fixed, acc[:, 0], 0.5), _em.EPS, 1 - _em.EPS)
        fsp = np.clip(np.where(fixed, acc[:, 1], 0.5), _em.EPS, 1 - _em.EPS)
    if sample_weight is None:
        w = np.ones(n)
    else:
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise InvalidParameterError(
                f"{func}: 'sample_weight' must be finite, non-negative, not all "
                f"zero, of shape ({n},); got shape {w.shape}."
            )
    if not (
        isinstance(score_prior, (int, float, np.floating)) and np.isfinite(score_prior) and score_prior >= 0
    ):
        raise InvalidParameterError(
            f"The 'score_prior' parameter of {func} must be a float >= 0. Got {score_prior!r} instead."
        )
    if accuracy_prior is not None:
        accuracy_prior = np.asarray(accuracy_prior, dtype=float)
        if accuracy_prior.shape != (r, 4) or not (accuracy_prior >= 0).all():
            raise InvalidParameterError(
                f"{func}: 'accuracy_prior' must be non-negative pseudo-counts of shape ({r}, 4); got "
                f"{accuracy_prior.shape}."
            )
        if not accuracy_prior.any():
            accuracy_prior = None
    informed = accuracy_prior is not None
    if independent_readers(y, groups) < 3 and not fixed.any() and not informed and np.isnan(a).all():
        raise NotIdentifiedError(NOT_IDENTIFIED)
    return Inputs(
        y,
        bins,
        edges,
        k,
        a,
        fixed,
        fse,
        fsp,
        w,
        model,
        study_basis,
        bin_basis,
        groups,
        accuracy_prior=accuracy_prior,
    )


def beta_prior_counts(low: float, high: float) -> tuple[float, float]:
    """``(a - 1, b - 1)`` of the Beta prior of an accuracy whose plausible range is ``[low, high]``, read as its
    mean +- 1.96 standard deviations (moments matched, as Dendukuri & Joseph 2001 elicit theirs): the
    pseudo-counts of positive and negative responses that the EM adds to the reader's data (its mode, MAP). A
    range within (0, 1) always gives ``a, b > 1.4``: a mode inside (0, 1).

    Raises
    ------
    ValueError
        The range is not within (0, 1) with ``low < high``.
    """
    if not (0 < low < high < 1):
        raise ValueError(f"the range [{low!r}, {high!r}] is not within (0, 1) with low < high")
    m, sd = (low + high) / 2, (high - low) / (2 * 1.959963984540054)
    k = m * (1 - m) / sd**2 - 1
    return m * k - 1, (1 - m) * k - 1


def independent_readers(labels: np.ndarray, groups: tuple[tuple[int, ...], ...]) -> int:
    """The readers with a label that are conditionally independent of each other given the truth: each
    ungrouped reader, and each declared group of dependent readers counted once."""
    has = (~np.isnan(labels)).any(axis=0)
    grouped = {j for g in groups for j in g}
    alone = sum(1 for j in range(labels.shape[1]) if has[j] and j not in grouped)
    return alone + sum(1 for g in groups if has[list(g)].any())


# ------------------------------------------------------------------------------------------ fitting
def initial_posterior(cells: _em.Cells) -> np.ndarray:
    """Soft majority vote per cell (0.5 without labels), the anchor's truth where known."""
    n_lab = cells.positive.sum(axis=1) + cells.negative.sum(axis=1)
    p = np.where(n_lab > 0, cells.positive.sum(axis=1) / np.maximum(n_lab, 1), 0.5)
    known = cells.anchor >= 0
    p[known] = cells.anchor[known]
    return p


def orient(state: _em.EMState, free: bool) -> _em.EMState:
    """Swap the classes of rows where the readers agree with the truth less often than not (label switching);
    only when nothing (anchor, fixed reader) pins the classes."""
    if not free:
        return state
    flip = (state.sensitivity + state.specificity).mean(axis=1) < 1.0
    if not flip.any():
        return state
    f = flip[:, None]
    beta = None if state.beta is None else np.where(f, -state.beta, state.beta)
    a, b = state.se_slope, state.sp_slope
    se_slope = None if a is None or b is None else np.where(f, -b, a)
    sp_slope = None if a is None or b is None else np.where(f, -a, b)
    g1, g0 = state.group1, state.group0
    if g1 is not None and g0 is not None:
        g1, g0 = np.where(f, g0, g1), np.where(f, g1, g0)
    return _em.EMState(
        np.where(f, 1 - state.specificity, state.sensitivity),
        np.where(f, 1 - state.sensitivity, state.specificity),
        np.where(flip, 1 - state.prevalence, state.prevalence),
        np.where(f, state.f0, state.f1),
        np.where(f, state.f1, state.f0),
        beta,
        np.where(f, 1 - state.posterior, state.posterior),
        state.objective,
        state.trace,
        state.n_iter,
        state.converged,
        se_slope,
        sp_slope,
        g1,
        g0,
    )


def fit_rows(
    inputs: Inputs,
    weights: np.ndarray,
    *,
    score_prior: float,
    max_iter: int,
    tol: float,
    ridge: float = 1e-3,
    init: dict[str, np.ndarray] | None = None,
    correlation: float = 0.0,
) -> tuple[_em.Cells, _em.EMState]:
    """EM for every row of ``weights`` (B, n_studies) at once (the data, or bootstrap replicates);
    ``correlation``: an assumed within-class correlation of the readers (:func:`cxreval.latent._em.run_em`)."""
    cells = _em.make_cells(
        inputs.labels,
        inputs.bins,
        inputs.anchor,
        inputs.n_bins,
        inputs.bin_basis,
        inputs.groups,
        inputs.reader_bins,
        inputs.reader_z,
    )
    cw = _em.cell_weights(cells, weights)
    start = np.broadcast_to(initial_posterior(cells), cw.shape)
    state = _em.run_em(
        cells,
        cw,
        start,
        prior=float(score_prior),
        ridge=ridge,
        fixed=inputs.fixed,
        fixed_se=inputs.fixed_se,
        fixed_sp=inputs.fixed_sp,
        max_iter=max_iter,
        tol=tol,
        spline=inputs.model in ("spline", "dependent"),
        init=init,
        dependent=inputs.model == "dependent",
        correlation=correlation,
        accuracy_prior=inputs.accuracy_prior,
    )
    return cells, orient(state, inputs.free)


def study_posterior(inputs: Inputs, cells: _em.Cells, state: _em.EMState) -> np.ndarray:
    """Each study's posterior (B, n): the cell's, except under the spline, evaluated at the study's own score."""
    if state.beta is None or inputs.study_basis is None:
        return state.posterior[:, cells.inverse]
    r1, r0 = _em.reader_log_ratio(cells, state.sensitivity, state.specificity, state.se_slope, state.sp_slope)
    from scipy.special import expit

    p = expit(state.beta @ inputs.study_basis.T + (r1 - r0)[:, cells.inverse])
    known = ~np.isnan(inputs.anchor)
    p[:, known] = inputs.anchor[known]
    return p


def group_accuracy(
    groups: tuple[tuple[int, ...], ...], group1: np.ndarray, group0: np.ndarray, n_readers: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each grouped reader's sensitivity and specificity (B, n_readers) implied by its group's joint label
    patterns (NaN for the readers outside the groups)."""
    b = group1.shape[0]
    se = np.full((b, n_readers), np.nan)
    sp = se.copy()
    start = 0
    for members in groups:
        n_cat = 3 ** len(members) - 1
        digits = (np.arange(1, n_cat + 1)[:, None] // 3 ** np.arange(len(members))) % 3  # (n_cat, g)
        g1, g0 = group1[:, start : start + n_cat], group0[:, start : start + n_cat]
        for k, j in enumerate(members):
            pos, lab = (digits[:, k] == 2).astype(float), (digits[:, k] > 0).astype(float)
            se[:, j] = (g1 @ pos) / (g1 @ lab)
            sp[:, j] = (g0 @ (lab - pos)) / (g0 @ lab)
        start += n_cat
    return se, sp


def state_parameters(state: _em.EMState, row: int) -> dict[str, np.ndarray]:
    """One row's parameters, as ``init`` of :func:`fit_rows` (a warm start of bootstrap replicates)."""
    out = {"se": state.sensitivity[row], "sp": state.specificity[row]}
    if state.se_slope is not None and state.sp_slope is not None:
        out.update(se_slope=state.se_slope[row], sp_slope=state.sp_slope[row])
    if state.group1 is not None and state.group0 is not None:
        out.update(group1=state.group1[row], group0=state.group0[row])
    if state.beta is not None:
        out["beta"] = state.beta[row]
    else:
        out.update(pi=state.prevalence[row], f1=state.f1[row], f0=state.f0[row])
    return out


def select_score_model(
    reader_labels: object,
    score: object,
    anchor: object,
    reader_accuracy: object,
    sample_weight: object,
    n_bins: int | None,
    *,
    max_iter: int,
    tol: float,
    func: str = "fit_latent_class",
) -> str:
    """``'dependent'`` where the score-dependent readers model beats ``'spline'`` by the Bayesian information
    criterion, else ``'spline'`` (what ``score_model='auto'`` fits).

    Both are fitted on the same score bins (``'dependent'``'s); ``'dependent'`` has two more parameters per
    estimated reader (the slopes), so it is chosen when twice its gain in log-likelihood exceeds
    ``2 R log(n)`` (``R`` estimated readers, ``n`` the total weight of the studies).
    """
    if score is None:
        return "spline"
    fits = {}
    data = ReaderData(reader_labels, score, anchor, reader_accuracy, sample_weight)
    for model in ("spline", "dependent"):
        inputs = check_inputs(data, n_bins, 0.5, score_model=model, func=func)
        if n_bins is None:
            n_bins = default_n_bins(inputs.labels.shape[0], score_model="dependent")
            inputs = check_inputs(data, n_bins, 0.5, score_model=model, func=func)
        _, st = fit_rows(inputs, inputs.weight[None, :], score_prior=0.5, max_iter=max_iter, tol=tol)
        fits[model] = (float(st.objective[0]), inputs)
    inputs = fits["spline"][1]
    n_free = int(((~np.isnan(inputs.labels)).any(axis=0) & ~inputs.fixed).sum())
    gain = 2.0 * (fits["dependent"][0] - fits["spline"][0])
    return "dependent" if gain > 2 * n_free * np.log(max(float(inputs.weight.sum()), 2.0)) else "spline"
