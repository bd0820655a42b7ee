"""The model's empirical ROC curve in counts, and its operating point matched to a reader's, for many bootstrap
replicates at once.

Everything is in *count units*: a replicate's curve is the weighted true- and false-positive counts of the model at
every threshold (integers, exact in float64), and a reader's point is its weighted true- and false-positive counts on
the same cases. Comparing counts rather than rates makes "on the curve" and "below the curve" exact for readers.

The curve of one replicate has vertices ``v = 0 .. G``: vertex 0 is ``(0, 0)`` (threshold ``+inf``) and vertex
``g >= 1`` calls positive every case whose score is at least the ``g``-th largest distinct score. ``fp`` and ``tp`` are
non-decreasing along ``v``; a distinct score that no drawn case holds in a replicate repeats the previous vertex,
which changes nothing below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MATCHINGS", "SortedScores", "sort_scores", "curve_counts", "match_points"]

MATCHINGS: tuple[str, ...] = ("step", "interpolated")
"""How the model's sensitivity is read at a specificity between two of its thresholds (see ``match_points``)."""

_TOL = 1e-6
"""Counts closer than this (a millionth of a case) are equal: exact for readers (integer counts), and it absorbs
the rounding of a panel's mean operating point."""


@dataclass(frozen=True)
class SortedScores:
    """The scores sorted once (descending): ``order`` sorts the cases, ``group_end[g]`` is the last sorted position
    holding the ``g + 1``-th largest distinct score, ``thresholds`` those distinct scores (descending)."""

    order: np.ndarray
    group_end: np.ndarray
    thresholds: np.ndarray


def sort_scores(scores: np.ndarray) -> SortedScores:
    """Sort the model's scores (descending, stable) and find the ends of the groups of tied scores."""
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    ends = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
    return SortedScores(order, ends, s[ends])


def curve_counts(
    sorted_weights: np.ndarray, sorted_truth: np.ndarray, group_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted false- and true-positive counts of the model at every vertex, for every row of ``sorted_weights``.

    Parameters
    ----------
    sorted_weights : ndarray of shape (b, n_cases)
        Case weights (bootstrap counts; zero for a case left out), the cases in ``SortedScores.order``.
    sorted_truth : ndarray of shape (n_cases,)
        0/1, in the same order.
    group_end : ndarray of int
        ``SortedScores.group_end``.

    Returns
    -------
    fp, tp : ndarray of shape (b, n_thresholds + 1)
        Column 0 is the ``(0, 0)`` vertex.
    """
    b = sorted_weights.shape[0]
    tp = np.empty((b, len(group_end) + 1))
    fp = np.empty_like(tp)
    tp[:, 0] = fp[:, 0] = 0.0
    tp[:, 1:] = np.cumsum(sorted_weights * sorted_truth, axis=1)[:, group_end]
    fp[:, 1:] = np.cumsum(sorted_weights, axis=1)[:, group_end]
    fp[:, 1:] -= tp[:, 1:]
    return fp, tp


def _row_search(curve: np.ndarray, targets: np.ndarray, side: str) -> np.ndarray:
    """``np.searchsorted(curve[i], targets[i], side)`` for every row ``i`` at once (rows non-decreasing, targets
    within ``[0, curve[i, -1] + 1]``): the rows laid end to end with an offset each, one search."""
    b, v = curve.shape
    span = float(np.nanmax(curve[:, -1], initial=0.0)) + 2.0
    off = (np.arange(b, dtype=float) * span)[:, None]
    flat = (curve + off).ravel()
    idx = np.searchsorted(flat, (targets + off).ravel(), side=side).reshape(targets.shape)  # type: ignore[call-overload]
    return np.asarray(idx - (np.arange(b) * v)[:, None], dtype=np.intp)


def match_points(
    fp: np.ndarray, tp: np.ndarray, x: np.ndarray, y: np.ndarray, *, matching: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model's operating point matched to each reader's, in counts.

    Parameters
    ----------
    fp, tp : ndarray of shape (b, n_vertices)
        The model's curve per replicate (:func:`curve_counts`), on the reader's cases.
    x, y : ndarray of shape (b, m)
        Each reader's false- and true-positive counts per replicate (finite, within the curve's totals).
    matching : {'step', 'interpolated'}
        ``'step'``: the model's true positives at the reader's false positives are those of its lowest threshold
        whose false positives do not exceed the reader's (its specificity is the smallest that is at least the
        reader's), ``max{tp_v : fp_v <= x}``; ``'interpolated'``: the linear interpolation between that vertex and the
        next (the curve as the polyline through its vertices, the upper end of a vertical segment). Likewise for the
        false positives at the reader's true positives: ``min{fp_v : tp_v >= y}``, or interpolated.

    Returns
    -------
    tp_at_x : ndarray of shape (b, m)
        The model's true positives at the reader's false positives.
    fp_at_y : ndarray of shape (b, m)
        The model's false positives at the reader's true positives.
    below : ndarray of bool, shape (b, m)
        ``tp_at_x > y`` (strictly, decided on exact counts): the reader's point lies below the curve.
    """
    rows = np.arange(fp.shape[0])[:, None]
    last = fp.shape[1] - 1
    # last vertex with fp <= x: the lowest threshold whose specificity is at least the reader's
    k = np.clip(_row_search(fp, x + _TOL, "right") - 1, 0, last)
    k1 = np.minimum(k + 1, last)
    fp_k, tp_k, fp_k1, tp_k1 = fp[rows, k], tp[rows, k], fp[rows, k1], tp[rows, k1]
    # first vertex with tp >= y: the highest threshold whose sensitivity is at least the reader's
    j = np.clip(_row_search(tp, y - _TOL, "left"), 0, last)
    j0 = np.maximum(j - 1, 0)
    fp_j, tp_j, fp_j0, tp_j0 = fp[rows, j], tp[rows, j], fp[rows, j0], tp[rows, j0]
    if matching == "step":
        return tp_k, fp_j, tp_k - y > _TOL
    # interpolated: between vertex k and k + 1 when the reader's fp falls strictly between them
    inside = x - fp_k > _TOL
    d_fp = np.where(inside, fp_k1 - fp_k, 1.0)
    num = (tp_k - y) * d_fp + np.where(inside, (x - fp_k) * (tp_k1 - tp_k), 0.0)  # exact for integer counts
    tp_at = tp_k + np.where(inside, (x - fp_k) * (tp_k1 - tp_k) / d_fp, 0.0)
    inside_y = tp_j - y > _TOL
    d_tp = np.where(inside_y, tp_j - tp_j0, 1.0)
    fp_at = np.where(inside_y, fp_j0 + (y - tp_j0) * (fp_j - fp_j0) / d_tp, fp_j)
    return tp_at, fp_at, num > _TOL * d_fp
