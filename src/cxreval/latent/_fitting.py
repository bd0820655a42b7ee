"""Validation of the latent-class model's inputs and the vectorised fit behind it (private to
:mod:`cxreval.latent`; the model is documented in :mod:`cxreval.latent.model`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import InvalidParameterError
from . import _em

__all__ = ["NOT_IDENTIFIED", "NotIdentifiedError", "default_n_bins", "score_bins", "Inputs", "check_inputs",
           "fit_rows"]

#: The sentence raised when a finding has fewer than three readers and neither reader accuracies nor an anchor.
NOT_IDENTIFIED = ("With fewer than three readers of a finding the latent-class model is not identified: give each "
                  "reader's sensitivity and specificity (reader_accuracy) or a subset of studies labelled by an "
                  "anchor reference treated as exact (anchor).")


class NotIdentifiedError(InvalidParameterError):
    """The latent-class model is not identified from the data given (message: :data:`NOT_IDENTIFIED`)."""


def default_n_bins(n_studies: int) -> int:
    """The number of score bins used when ``n_bins=None``: ``clip(round(n_studies / 50), 5, 20)``.

    Chosen on the simulation of ``bench/suites/latent.py``: fewer bins dilute the AUC toward 0.5 (pairs in one
    bin are not ordered by the posterior), more bins leave few studies of the rarer class per bin.
    """
    return int(np.clip(round(n_studies / 50), 5, 20))


def score_bins(score: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Quantile bins of ``score``: ``(bins, edges)``, ``bins[i]`` in ``0..K-1`` (``K <= n_bins``).

    The edges are the ``k / n_bins`` quantiles (``k = 1..n_bins-1``) of the scores, deduplicated; a score equal
    to an edge goes to the bin above it, so tied scores always share a bin.
    """
    s = np.asarray(score, dtype=float)
    edges = np.unique(np.quantile(s, np.arange(1, n_bins) / n_bins)) if n_bins > 1 else np.empty(0)
    raw = np.searchsorted(edges, s, side="right")
    used, bins = np.unique(raw, return_inverse=True)
    return bins.reshape(-1).astype(np.intp), edges[used[1:] - 1] if used.size > 1 else np.empty(0)


# ------------------------------------------------------------------------------------------ validation
def _binary(a: object, name: str, shape: tuple[int, ...] | None, ndim: int) -> np.ndarray:
    try:
        x = np.array(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"fit_latent_class: '{name}' must be a float array of 1.0, 0.0 and NaN; "
                                    f"got {type(a).__name__}.") from exc
    if x.ndim != ndim or (shape is not None and x.shape != shape):
        want = f"shape {shape}" if shape is not None else f"{ndim}-D"
        raise InvalidParameterError(f"fit_latent_class: '{name}' must have {want}; got shape {x.shape}.")
    bad = ~(np.isnan(x) | (x == 0.0) | (x == 1.0))
    if bad.any():
        pos = tuple(int(v) for v in np.argwhere(bad)[0])
        where = pos[0] if len(pos) == 1 else pos
        raise InvalidParameterError(f"fit_latent_class: '{name}' must hold only 1.0 (positive), 0.0 (negative) and "
                                    f"NaN (no label); found {float(x[pos])!r} at {where}.")
    return x


@dataclass(frozen=True)
class Inputs:
    labels: np.ndarray
    bins: np.ndarray
    edges: np.ndarray
    n_bins: int
    anchor: np.ndarray
    fixed: np.ndarray
    fixed_se: np.ndarray
    fixed_sp: np.ndarray
    weight: np.ndarray


def check_inputs(reader_labels: object, score: object, anchor: object, reader_accuracy: object,
                  sample_weight: object, n_bins: int | None, score_prior: float) -> Inputs:
    y = _binary(reader_labels, "reader_labels", None, 2)
    n, r = y.shape
    if n == 0 or r == 0:
        raise InvalidParameterError(f"fit_latent_class: 'reader_labels' needs at least one study and one reader; "
                                    f"got shape {y.shape}.")
    if score is None:
        bins, edges, k = np.zeros(n, dtype=np.intp), np.empty(0), 1
    else:
        s = np.asarray(score, dtype=float)
        if s.shape != (n,):
            raise InvalidParameterError(f"fit_latent_class: 'score' must have shape ({n},) like the rows of "
                                        f"'reader_labels'; got {s.shape}.")
        if not np.isfinite(s).all():
            i = int(np.flatnonzero(~np.isfinite(s))[0])
            raise InvalidParameterError(f"fit_latent_class: 'score' must be finite; found {float(s[i])!r} at {i}.")
        if n_bins is None:
            n_bins = default_n_bins(n)
        if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
            raise InvalidParameterError(f"The 'n_bins' parameter of fit_latent_class must be an int >= 1 or None. "
                                        f"Got {n_bins!r} instead.")
        bins, edges = score_bins(s, int(n_bins))
        k = int(bins.max()) + 1
    a = np.full(n, np.nan) if anchor is None else _binary(anchor, "anchor", (n,), 1)
    fixed = np.zeros(r, dtype=bool)
    fse = np.full(r, 0.5)
    fsp = np.full(r, 0.5)
    if reader_accuracy is not None:
        acc = np.array(reader_accuracy, dtype=float)
        if acc.shape != (r, 2):
            raise InvalidParameterError(f"fit_latent_class: 'reader_accuracy' must have shape ({r}, 2) "
                                        f"(sensitivity, specificity per reader); got {acc.shape}.")
        given = ~np.isnan(acc)
        if (given[:, 0] != given[:, 1]).any():
            i = int(np.flatnonzero(given[:, 0] != given[:, 1])[0])
            raise InvalidParameterError(f"fit_latent_class: 'reader_accuracy' row {i} gives only one of "
                                        "sensitivity and specificity; give both or neither (NaN).")
        if ((acc[given] < 0) | (acc[given] > 1)).any():
            raise InvalidParameterError("fit_latent_class: 'reader_accuracy' values must be in [0, 1] (or NaN "
                                        "for a reader to estimate).")
        fixed = given[:, 0]
        fse = np.clip(np.where(fixed, acc[:, 0], 0.5), _em.EPS, 1 - _em.EPS)
        fsp = np.clip(np.where(fixed, acc[:, 1], 0.5), _em.EPS, 1 - _em.EPS)
    if sample_weight is None:
        w = np.ones(n)
    else:
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise InvalidParameterError(f"fit_latent_class: 'sample_weight' must be finite, non-negative, not all "
                                        f"zero, of shape ({n},); got shape {w.shape}.")
    if not (isinstance(score_prior, (int, float, np.floating)) and np.isfinite(score_prior) and score_prior >= 0):
        raise InvalidParameterError(f"The 'score_prior' parameter of fit_latent_class must be a float >= 0. "
                                    f"Got {score_prior!r} instead.")
    n_readers = int((~np.isnan(y)).any(axis=0).sum())
    if n_readers < 3 and not fixed.any() and np.isnan(a).all():
        raise NotIdentifiedError(NOT_IDENTIFIED)
    return Inputs(y, bins, edges, k, a, fixed, fse, fsp, w)


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
    return _em.EMState(np.where(flip, 1 - state.prevalence, state.prevalence),
                       np.where(f, 1 - state.specificity, state.sensitivity),
                       np.where(f, 1 - state.sensitivity, state.specificity),
                       np.where(f, state.f0, state.f1), np.where(f, state.f1, state.f0),
                       np.where(f, 1 - state.posterior, state.posterior), state.objective, state.trace,
                       state.n_iter, state.converged)


def fit_rows(inputs: Inputs, weights: np.ndarray, *, score_prior: float, max_iter: int, tol: float,
              init_params: tuple[np.ndarray, ...] | None = None) -> tuple[_em.Cells, _em.EMState]:
    """EM for every row of ``weights`` (B, n_studies) at once (the data, or bootstrap replicates)."""
    cells = _em.make_cells(inputs.labels, inputs.bins, inputs.anchor, inputs.n_bins)
    cw = _em.cell_weights(cells, weights)
    init = np.broadcast_to(initial_posterior(cells), cw.shape)
    state = _em.run_em(cells, cw, init, prior=float(score_prior), fixed=inputs.fixed, fixed_se=inputs.fixed_se,
                       fixed_sp=inputs.fixed_sp, max_iter=max_iter, tol=tol, init_params=init_params)
    free = not inputs.fixed.any() and bool(np.isnan(inputs.anchor).all())
    return cells, orient(state, free)


