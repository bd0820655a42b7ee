"""Count-weighted AUC kernel of :mod:`cxreval.classification` (private).

:class:`AUCIndex` holds the positions fixed by one sort of the scores. Its sparse ``(segments, groups)`` count
matrix turns ``(patients, replicates)`` bootstrap counts into every replicate's AUC with one sparse-dense product,
a blocked in-place cumulative sum (:func:`cumsum_rows_inplace`) and a dot product, in exact integer arithmetic
(int32 where it cannot overflow, else int64, else Python integers). :func:`auc_shard` runs it on one shard of
replicates for an executor; :func:`weighted_auc_float` is the floating-point path for non-integer weights. The
formula and the public functions are documented in :mod:`cxreval.classification`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from .exceptions import InvalidParameterError, SchemaError

__all__ = ["AUCIndex", "auc_shard", "binary_labels", "cumsum_rows_inplace", "finite_scores", "weighted_auc_float"]

_I32 = int(np.iinfo(np.int32).max)


def _py(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v


def binary_labels(y_true: object, where: str) -> np.ndarray:
    """``y_true`` as a boolean array; :class:`~cxreval.exceptions.InvalidParameterError` naming ``where`` unless
    1-D and all 0/1."""
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise InvalidParameterError(f"{where}: 'y_true' must be 1-D; got shape {y.shape}.")
    yf = y.astype(float) if y.dtype != object else pd.to_numeric(pd.Series(y), errors="coerce").to_numpy()
    bad = ~np.isin(yf, (0.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(f"{where}: 'y_true' must hold only 0 and 1; found {_py(y[i])!r} at position {i}.")
    return yf.astype(bool)


def finite_scores(y_score: object, n: int, where: str) -> np.ndarray:
    """``y_score`` as a float array of shape ``(n,)``; an error naming ``where`` and the first non-finite value."""
    s = np.asarray(y_score, dtype=float)
    if s.shape != (n,):
        raise InvalidParameterError(f"{where}: 'y_score' must have shape ({n},) like 'y_true'; got {s.shape}.")
    bad = ~np.isfinite(s)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(f"{where}: 'y_score' must be finite; found {float(s[i])!r} at position {i}.")
    return s


def cumsum_rows_inplace(x: np.ndarray) -> None:
    """``x[k] += x[:k].sum(axis=0)`` for every row ``k``, in place (inclusive cumulative sum down the rows).

    ``np.cumsum(axis=0)`` walks each column with a stride of a whole row; this scans blocks of about
    ``sqrt(r)`` rows with whole-row vector additions instead (about ``2 sqrt(r)`` calls, each over contiguous
    rows), several times faster on the ``(segments, replicates)`` arrays of the AUC kernel. Integer sums are exact.
    """
    r, c = x.shape
    if r <= 1:
        return
    step = max(2, int(np.sqrt(r)))
    full = (r // step) * step
    if full:
        v = x[:full].reshape(-1, step, c)
        for k in range(1, step):
            v[:, k] += v[:, k - 1]
        for b in range(1, v.shape[0]):
            v[b] += v[b - 1, -1]
    for k in range(max(full, 1), r):
        x[k] += x[k - 1]


class AUCIndex:
    """Positions fixed by one sort: sorted negatives, and for each positive the count of negatives
    strictly below it (``lo``) and below-or-tied (``hi``)."""

    __slots__ = ("neg", "pos", "lo", "hi", "_seg", "_mats")

    def __init__(self, y: np.ndarray, s: np.ndarray, order: np.ndarray | None = None) -> None:
        if order is None:
            order = np.argsort(s, kind="stable")
        yo = y[order]
        self._set(order[~yo], order[yo], s)

    @classmethod
    def from_sorted(cls, neg: np.ndarray, pos: np.ndarray, s: np.ndarray) -> AUCIndex:
        """From negatives and positives already in ascending (stable) order of ``s``."""
        idx = cls.__new__(cls)
        idx._set(neg, pos, s)
        return idx

    def _set(self, neg: np.ndarray, pos: np.ndarray, s: np.ndarray) -> None:
        self.neg, self.pos = neg, pos
        neg_s = s[neg]
        pos_s = s[pos]
        self.lo = np.searchsorted(neg_s, pos_s, side="left")
        self.hi = np.searchsorted(neg_s, pos_s, side="right")
        self._seg: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._mats: dict[tuple[int, int], tuple[np.ndarray | None, sparse.csr_array]] = {}

    def __getstate__(self) -> dict[str, object]:
        # the matrix cache is keyed by id(group), which does not survive pickling: ship the (group, matrix)
        # pairs and re-key them on arrival (pickled with the group array, identity is kept within one payload)
        return {"neg": self.neg, "pos": self.pos, "lo": self.lo, "hi": self.hi, "seg": self._seg,
                "mats": list(self._mats.values())}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.neg, self.pos, self.lo, self.hi = state["neg"], state["pos"], state["lo"], state["hi"]
        self._seg = state["seg"]
        self._mats = {(id(g), m.shape[1]): (g, m) for g, m in state["mats"]}  # type: ignore[attr-defined]

    def auc(self, w: np.ndarray) -> np.ndarray:
        """AUC for each row of integer weights ``w`` (shape ``(B, n_studies)``); NaN if a class is empty."""
        return self.auc_t(np.ascontiguousarray(np.asarray(w).T))

    def _segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Segment starts over the sorted negatives (breaks at every ``lo``/``hi``) and, for each positive,
        the number of whole segments below ``lo`` and ``hi``."""
        seg = self._seg
        if seg is None:
            nn = self.neg.size
            bp = np.unique(np.concatenate([self.lo, self.hi]))
            starts = np.concatenate([[0], bp[(bp > 0) & (bp < nn)]]).astype(np.intp)
            bounds = np.concatenate([starts, [nn]])
            seg = (starts, np.searchsorted(bounds, self.lo), np.searchsorted(bounds, self.hi))
            self._seg = seg
        return seg

    def _matrix(self, group: np.ndarray | None, n_groups: int) -> sparse.csr_array:
        """Sparse ``(2 n_seg + 3, n_groups)`` count matrix of the kernel (``group=None``: one group per study).

        Row 0 is empty; row ``1 + k`` counts the negatives of segment ``k`` per group (patient); row
        ``n_seg + 1 + k`` counts the positives that read the cumulative negative weight below break ``k``
        (once for ``lo``, once for ``hi``); the last row counts all positives. Cached per ``group`` object.
        """
        key = (id(group), n_groups)
        hit = self._mats.get(key)
        if hit is not None and hit[0] is group:
            return hit[1]
        starts, lo_s, hi_s = self._segments()
        ns = starts.size
        g = (lambda ix: ix) if group is None else (lambda ix: group[ix])
        gp = g(self.pos)
        rows = np.concatenate([np.repeat(np.arange(1, ns + 1), np.diff(np.append(starts, self.neg.size))),
                               ns + 1 + lo_s, ns + 1 + hi_s, np.full(gp.size, 2 * ns + 2)])
        cols = np.concatenate([g(self.neg), gp, gp, gp])
        mat = sparse.coo_array((np.ones(rows.size, dtype=np.int32), (rows, cols)),
                               shape=(2 * ns + 3, n_groups)).tocsr()
        self._mats[key] = (group, mat)
        return mat

    def auc_t(self, wt: np.ndarray) -> np.ndarray:
        """AUC for each *column* of integer weights ``wt`` (shape ``(n_studies, B)``, C-contiguous)."""
        return self.auc_grouped(wt, None)

    def auc_grouped(self, ct: np.ndarray, group: np.ndarray | None) -> np.ndarray:
        """AUC for each column of integer group weights ``ct`` (shape ``(n_groups, B)``); study ``i`` weighs
        ``ct[group[i]]`` (``group=None``: ``ct`` is per study).

        One sparse product (:meth:`_matrix` ``@ ct``) gives, for every replicate, the negatives' weight in each
        segment between consecutive positive scores, the positives' weight reading each break, and the total
        positive weight; the segment weights are accumulated down the rows (:func:`cumsum_rows_inplace`) and
        dotted with the positives' weights: ``num = sum_k cs[k] q[k] = 2 x (pairs ordered + ties / 2)``. Every sum
        is an exact integer: int32 where ``2 max(ct) n_studies < 2**31`` (the dot product too where
        ``2 W_pos W_neg < 2**31`` in every replicate), else int64 (Python integers beyond ``2**62``); only the
        final division rounds.
        """
        n_rep = ct.shape[1]
        if self.neg.size == 0 or self.pos.size == 0:
            return np.full(n_rep, np.nan)
        ns = self._segments()[0].size
        mat = self._matrix(group, ct.shape[0])
        bound = 2 * max(int(ct.max(initial=0)), 1) * (self.neg.size + self.pos.size)
        acc = np.int32 if bound < _I32 else np.int64
        if ct.dtype != acc:
            ct = ct.astype(acc)
        if mat.dtype != acc:
            mat = mat.astype(acc)
        out = mat @ ct  # (2 ns + 3, B)
        cs = out[: ns + 1]  # row 0 is zero: cs[k] = negatives' weight below break k
        cumsum_rows_inplace(cs[1:])
        q = out[ns + 1: 2 * ns + 2]
        den = 2.0 * out[2 * ns + 2].astype(float) * cs[ns].astype(float)  # 2 W_pos W_neg; num <= den
        top = float(den.max(initial=0.0))
        if acc is np.int32 and top < _I32:
            num = np.multiply(cs, q, out=q).sum(axis=0, dtype=np.int32)
        elif top < 2.0**62:
            num = np.multiply(cs, q, dtype=np.int64).sum(axis=0)
        else:  # astronomically large weights: exact in Python integers
            num = np.array([sum(int(a) * int(b) for a, b in zip(cs[:, j], q[:, j])) for j in range(n_rep)],
                           dtype=object)
        with np.errstate(invalid="ignore", divide="ignore"):
            res = num.astype(float) / den
        res[den == 0] = np.nan
        return res


def weighted_auc_float(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """AUC for each row of non-negative float weights ``w`` (shape ``(B, n)``), by floating-point cumulative sums;
    NaN where a class has zero total weight."""
    order = np.argsort(s, kind="stable")
    idx = AUCIndex(y, s, order)
    wn = w[:, idx.neg]
    c = np.concatenate([np.zeros((w.shape[0], 1)), np.cumsum(wn, axis=1)], axis=1)
    wp = w[:, idx.pos]
    num = np.einsum("ij,ij->i", wp, c[:, idx.lo] + c[:, idx.hi])
    den = 2.0 * wp.sum(axis=1) * c[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[den == 0] = np.nan
    return out


def auc_shard(indices: list[AUCIndex], study_patient: np.ndarray | list[np.ndarray], item: tuple[slice, np.ndarray]
              ) -> tuple[slice, np.ndarray]:
    """AUC of every (model, finding, reference) index on one shard of replicates ``(sl, counts[sl])``.

    ``study_patient`` maps each index's items to patients: one array for all indices, or one per index (a pooled,
    micro-average index holds the pairs of several findings). Module level, so that a process or Dask executor
    can pickle it (bound with :func:`functools.partial`).
    """
    sl, counts = item
    ct = np.ascontiguousarray(counts.T, dtype=np.int32)  # (n_patients, shard)
    out = np.empty((len(indices), counts.shape[0]))
    groups = study_patient if isinstance(study_patient, list) else [study_patient] * len(indices)
    for q, idx in enumerate(indices):
        out[q] = idx.auc_grouped(ct, groups[q])
    return sl, out

