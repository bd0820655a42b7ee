"""EM of the latent-class model on cells of identical studies, vectorised over weight rows (private).

A *cell* is a set of studies with the same reader labels, the same score bin and the same anchor state; the
likelihood depends on a study only through its cell, so EM runs on the ``(B, n_cells)`` cell weights instead
of the ``(B, n_studies)`` study weights (``B`` rows: the data, or bootstrap replicates fitted at once).
Everything here trusts its inputs (checked by :func:`cxreval.latent.model.fit_latent_class`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Cells", "EMState", "make_cells", "cell_weights", "run_em", "cell_log_odds"]

#: Sensitivities, specificities and the prevalence are kept in ``[EPS, 1 - EPS]`` (so that ``log`` stays finite
#: for exact readers; a posterior then rounds to exactly 0 or 1 in float64).
EPS = 1e-9


@dataclass(frozen=True)
class Cells:
    """The distinct (reader labels, score bin, anchor) combinations of the studies.

    Attributes
    ----------
    positive, negative : ndarray of float, shape (n_cells, n_readers)
        1.0 where the cell's reader label is positive (negative), else 0.0.
    bin : ndarray of int, shape (n_cells,)
        The score bin of the cell (0 when there is no score).
    anchor : ndarray of int, shape (n_cells,)
        -1 (truth unknown), 0 or 1 (truth known exactly).
    inverse : ndarray of int, shape (n_studies,)
        The cell of each study.
    n_bins : int
    """

    positive: np.ndarray
    negative: np.ndarray
    bin: np.ndarray
    anchor: np.ndarray
    inverse: np.ndarray
    n_bins: int

    @property
    def n_cells(self) -> int:
        return int(self.bin.shape[0])


@dataclass(frozen=True)
class EMState:
    """Parameters, posteriors and bookkeeping of an EM run with ``B`` weight rows.

    ``prevalence`` (B,), ``sensitivity`` and ``specificity`` (B, n_readers), ``f1``/``f0`` (B, n_bins) the score
    bin probabilities given the truth, ``posterior`` (B, n_cells), ``objective`` (B,) the final penalised
    log-likelihood, ``trace`` (n_iter + 1, B) its value before each M-step, ``n_iter``, ``converged`` (B,).
    """

    prevalence: np.ndarray
    sensitivity: np.ndarray
    specificity: np.ndarray
    f1: np.ndarray
    f0: np.ndarray
    posterior: np.ndarray
    objective: np.ndarray
    trace: np.ndarray
    n_iter: int
    converged: np.ndarray


def make_cells(labels: np.ndarray, bins: np.ndarray, anchor: np.ndarray, n_bins: int) -> Cells:
    """Group studies by (reader labels, bin, anchor). ``labels`` (n, R) 1/0/NaN, ``bins`` (n,) int,
    ``anchor`` (n,) 1/0/NaN."""
    code = np.where(np.isnan(labels), 0, np.where(labels > 0.5, 2, 1)).astype(np.int8)
    acode = np.where(np.isnan(anchor), 0, np.where(anchor > 0.5, 2, 1)).astype(np.int64)
    key = np.column_stack([code.astype(np.int64), bins.astype(np.int64), acode])
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    r = labels.shape[1]
    return Cells(positive=(uniq[:, :r] == 2).astype(float), negative=(uniq[:, :r] == 1).astype(float),
                 bin=uniq[:, r].astype(np.intp), anchor=uniq[:, r + 1].astype(np.intp) - 1,
                 inverse=inverse.reshape(-1).astype(np.intp), n_bins=int(n_bins))


def cell_weights(cells: Cells, weights: np.ndarray) -> np.ndarray:
    """Study weights (B, n) summed into cell weights (B, n_cells)."""
    b = weights.shape[0]
    c = cells.n_cells
    idx = (cells.inverse[None, :] + c * np.arange(b)[:, None]).ravel()
    return np.bincount(idx, weights=weights.ravel(), minlength=b * c).reshape(b, c)


def cell_log_odds(cells: Cells, prevalence: np.ndarray, se: np.ndarray, sp: np.ndarray,
                  f1: np.ndarray, f0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log P(cell data, T=1)`` and ``log P(cell data, T=0)``, each (B, n_cells)."""
    l1 = (np.log(prevalence)[:, None] + np.log(se) @ cells.positive.T + np.log1p(-se) @ cells.negative.T
          + np.log(f1)[:, cells.bin])
    l0 = (np.log1p(-prevalence)[:, None] + np.log1p(-sp) @ cells.positive.T + np.log(sp) @ cells.negative.T
          + np.log(f0)[:, cells.bin])
    return l1, l0


def _e_step(cells: Cells, w: np.ndarray, params: tuple[np.ndarray, ...], prior: float
            ) -> tuple[np.ndarray, np.ndarray]:
    pi, se, sp, f1, f0 = params
    l1, l0 = cell_log_odds(cells, pi, se, sp, f1, f0)
    post = 1.0 / (1.0 + np.exp(np.clip(l0 - l1, -745.0, 745.0)))
    m = np.maximum(l1, l0)
    ll = m + np.log(np.exp(l1 - m) + np.exp(l0 - m))
    known = cells.anchor >= 0
    if known.any():
        post[:, known] = cells.anchor[known].astype(float)
        ll[:, known] = np.where(cells.anchor[known] == 1, l1[:, known], l0[:, known])
    obj = (w * ll).sum(axis=1)
    if prior > 0:
        obj = obj + prior * (np.log(f1).sum(axis=1) + np.log(f0).sum(axis=1))
    return post, obj


def _m_step(cells: Cells, w: np.ndarray, post: np.ndarray, prior: float, fixed: np.ndarray,
            fixed_se: np.ndarray, fixed_sp: np.ndarray, previous: tuple[np.ndarray, ...] | None
            ) -> tuple[np.ndarray, ...]:
    q = w * post
    r = w - q
    tot = w.sum(axis=1)
    pi = np.clip(q.sum(axis=1) / np.where(tot > 0, tot, 1.0), EPS, 1 - EPS)
    lab = cells.positive + cells.negative
    q_lab = q @ lab
    r_lab = r @ lab
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (q @ cells.positive) / q_lab
        sp = (r @ cells.negative) / r_lab
    if previous is not None:
        se = np.where(q_lab > 0, se, previous[1])
        sp = np.where(r_lab > 0, sp, previous[2])
    se = np.clip(np.nan_to_num(se, nan=0.5), EPS, 1 - EPS)
    sp = np.clip(np.nan_to_num(sp, nan=0.5), EPS, 1 - EPS)
    se[:, fixed] = fixed_se[fixed]
    sp[:, fixed] = fixed_sp[fixed]
    k = cells.n_bins
    b = w.shape[0]
    idx = (cells.bin[None, :] + k * np.arange(b)[:, None]).ravel()
    q_bin = np.bincount(idx, weights=q.ravel(), minlength=b * k).reshape(b, k) + prior
    r_bin = np.bincount(idx, weights=r.ravel(), minlength=b * k).reshape(b, k) + prior
    f1 = np.clip(q_bin / np.maximum(q_bin.sum(axis=1, keepdims=True), 1e-300), 1e-300, None)
    f0 = np.clip(r_bin / np.maximum(r_bin.sum(axis=1, keepdims=True), 1e-300), 1e-300, None)
    return pi, se, sp, f1, f0


def run_em(cells: Cells, w: np.ndarray, init_posterior: np.ndarray, *, prior: float, fixed: np.ndarray,
           fixed_se: np.ndarray, fixed_sp: np.ndarray, max_iter: int, tol: float,
           init_params: tuple[np.ndarray, ...] | None = None) -> EMState:
    """EM from initial posteriors ``init_posterior`` (B, n_cells), or from ``init_params`` (pi, se, sp, f1, f0)
    broadcast to ``B`` rows.

    Stops when every row's objective rose by less than ``tol`` per unit of weight in one iteration (or after
    ``max_iter`` iterations); a row that has converged keeps its parameters while the others continue.
    """
    b = w.shape[0]
    tot = np.maximum(w.sum(axis=1), 1e-300)
    if init_params is None:
        params = _m_step(cells, w, init_posterior, prior, fixed, fixed_se, fixed_sp, None)
    else:
        params = tuple(np.broadcast_to(p, (b,) + p.shape[1:]).copy() for p in init_params)
    post, obj = _e_step(cells, w, params, prior)
    trace = [obj.copy()]
    done = np.zeros(b, dtype=bool)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        active = ~done
        wa = w[active]
        new = _m_step(cells, wa, post[active], prior, fixed, fixed_se, fixed_sp,
                      tuple(p[active] for p in params))
        post_a, obj_a = _e_step(cells, wa, new, prior)
        gain = (obj_a - obj[active]) / tot[active]
        for p, n in zip(params, new):
            p[active] = n
        post[active] = post_a
        obj[active] = obj_a
        trace.append(obj.copy())
        done[np.flatnonzero(active)[np.abs(gain) < tol]] = True
        if done.all():
            break
    pi, se, sp, f1, f0 = params
    return EMState(pi, se, sp, f1, f0, post, obj, np.array(trace), n_iter, done)
