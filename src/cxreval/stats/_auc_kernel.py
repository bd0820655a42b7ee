"""Count-weighted AUC kernel (private to :mod:`cxreval.stats`; shared by classification and latent).

:class:`AUCIndex` holds the positions fixed by one sort of the scores. Its sparse ``(segments, groups)`` count
matrix turns ``(patients, replicates)`` bootstrap counts into every replicate's AUC with one sparse-dense product
(int16 where no row can overflow), a cumulative sum along the segments and a dot product, in exact integer
arithmetic (int32/int64, Python integers past ``2**62``). :func:`auc_block` runs every replicate of one block (a
model × finding, or a model's micro average, with every reference) for an executor, from :class:`BlockInputs` in
memory or memory-mapped from ``.npy`` files (:func:`spill_inputs`); :func:`cumsum_rows_inplace` is a blocked
cumulative sum down rows; :func:`weighted_auc_float` is the floating-point path for non-integer weights;
:func:`soft_auc_rows` the pair-weighted AUC of a soft reference (labels that are probabilities). The
formula and the public AUC functions are documented in :mod:`cxreval.classification`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ..spill import load_spilled, spill_arrays

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "AUCIndex",
    "BlockInputs",
    "AUCBlock",
    "auc_block",
    "binary_labels",
    "block_indices",
    "cumsum_rows_inplace",
    "finite_scores",
    "positive_weights",
    "soft_auc_rows",
    "soft_block_labels",
    "spill_inputs",
    "weighted_auc_float",
]

_I32 = int(np.iinfo(np.int32).max)
_I16 = int(np.iinfo(np.int16).max)


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
        raise InvalidParameterError(
            f"{where}: 'y_true' must hold only 0 and 1; found {_py(y[i])!r} at position {i}."
        )
    return yf.astype(bool)


def finite_scores(y_score: object, n: int, where: str) -> np.ndarray:
    """``y_score`` as a float array of shape ``(n,)``; an error naming ``where`` and the first non-finite value."""
    s = np.asarray(y_score, dtype=float)
    if s.shape != (n,):
        raise InvalidParameterError(
            f"{where}: 'y_score' must have shape ({n},) like 'y_true'; got {s.shape}."
        )
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

    __slots__ = ("neg", "pos", "lo", "hi", "_seg", "_mats", "_typed")

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
        self._mats: dict[tuple[int, int], tuple[np.ndarray | None, sparse.csr_array, int]] = {}
        self._typed: dict[tuple[str, str], tuple[sparse.csr_array, sparse.csr_array]] = {}

    def __getstate__(self) -> dict[str, object]:
        # the matrix cache is keyed by id(group), which does not survive pickling: ship the (group, matrix)
        # pairs and re-key them on arrival (pickled with the group array, identity is kept within one payload)
        return {
            "neg": self.neg,
            "pos": self.pos,
            "lo": self.lo,
            "hi": self.hi,
            "seg": self._seg,
            "mats": list(self._mats.values()),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.neg, self.pos, self.lo, self.hi = state["neg"], state["pos"], state["lo"], state["hi"]
        self._seg = state["seg"]
        self._mats = {(id(g), m.shape[1]): (g, m, r) for g, m, r in state["mats"]}
        self._typed = {}

    def auc(self, w: np.ndarray) -> np.ndarray:
        """AUC for each row of integer weights ``w`` (shape ``(B, n_studies)``); NaN if a class is empty."""
        return self.auc_t(np.ascontiguousarray(np.asarray(w).T))

    def _segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Segment starts over the sorted negatives (breaks at every ``lo``/``hi``) and, for each positive,
        the number of whole segments below ``lo`` and ``hi``."""
        seg = self._seg
        if seg is None:
            nn = self.neg.size
            bp = np.concatenate([self.lo, self.hi])  # each ascending: the positives are sorted by score
            bp.sort(kind="stable")
            bp = bp[np.concatenate([[True], bp[1:] != bp[:-1]])] if bp.size else bp
            starts = np.concatenate([[0], bp[(bp > 0) & (bp < nn)]]).astype(np.intp)
            bounds = np.concatenate([starts, [nn]])
            seg = (starts, np.searchsorted(bounds, self.lo), np.searchsorted(bounds, self.hi))
            self._seg = seg
        return seg

    def _matrix(self, group: np.ndarray | None, n_groups: int) -> tuple[sparse.csr_array, int]:
        """Sparse ``(2 n_seg + 2, n_groups)`` count matrix of the kernel (``group=None``: one group per study) and
        its largest row sum.

        Row 0 is empty; row ``1 + k`` counts the negatives of segment ``k`` per group (patient); row
        ``n_seg + 1 + k`` counts the positives that read the cumulative negative weight below break ``k``
        (once for ``lo``, once for ``hi``). Cached per ``group`` object.
        """
        from scipy import sparse

        key = (id(group), n_groups)
        hit = self._mats.get(key)
        if hit is not None and hit[0] is group:
            return hit[1], hit[2]
        starts, lo_s, hi_s = self._segments()
        ns = starts.size
        gn = self.neg if group is None else group[self.neg]
        gp = self.pos if group is None else group[self.pos]
        # every entry of value 1: a negative in the row of its segment, a positive once in the row of its lo and
        # once in that of its hi (twice in one row when no negative ties it). Sorted by (row, group) and merged,
        # a row reads the counts of its groups once each and in ascending order (about a fifth faster on NIH).
        n_rows = 2 * ns + 2
        seg_of_neg = np.repeat(np.arange(1, ns + 1), np.diff(np.append(starts, self.neg.size)))
        ktype = np.int32 if n_rows * max(n_groups, 1) < _I32 else np.int64
        gn, gp = gn.astype(ktype, copy=False), gp.astype(ktype, copy=False)
        cell = np.concatenate(
            [
                seg_of_neg.astype(ktype) * n_groups + gn,
                (lo_s + (ns + 1)).astype(ktype) * n_groups + gp,
                (hi_s + (ns + 1)).astype(ktype) * n_groups + gp,
            ]
        )
        cell.sort()
        first = np.empty(cell.size, dtype=bool)
        first[:1] = True
        np.not_equal(cell[1:], cell[:-1], out=first[1:])
        at = np.flatnonzero(first)
        uniq = cell[at]
        rows = uniq // n_groups
        data = np.diff(np.append(at, cell.size)).astype(np.int32)
        row_sum = np.bincount(cell // n_groups, minlength=n_rows)
        idx_t = np.int32 if max(n_groups, cell.size) < _I32 else np.int64
        indptr = np.zeros(n_rows + 1, dtype=idx_t)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
        mat = sparse.csr_array(
            (data, (uniq - rows * n_groups).astype(idx_t), indptr), shape=(n_rows, n_groups)
        )
        mat.has_canonical_format = True
        row_max = int(row_sum.max(initial=0))
        self._mats[key] = (group, mat, row_max)
        return mat, row_max

    def positive_weight(self, ct: np.ndarray, group: np.ndarray | None) -> np.ndarray:
        """Total weight of the positives in each column of ``ct`` (int64, shape ``(B,)``)."""
        gp = self.pos if group is None else group[self.pos]
        if ct.shape[1] <= 8 or int(ct.max(initial=0)) * max(gp.size, 1) >= 2**53:  # narrow, or past float64
            return ct[gp].sum(axis=0, dtype=np.int64)
        w = np.bincount(gp, minlength=ct.shape[0]).astype(np.float64)
        return np.rint(w @ ct.astype(np.float64)).astype(np.int64)

    def auc_t(self, wt: np.ndarray) -> np.ndarray:
        """AUC for each *column* of integer weights ``wt`` (shape ``(n_studies, B)``, C-contiguous)."""
        return self.auc_grouped(wt, None)

    def auc_grouped(
        self,
        ct: np.ndarray,
        group: np.ndarray | None,
        *,
        wpos: np.ndarray | None = None,
        ct_max: int | None = None,
    ) -> np.ndarray:
        """AUC for each column of integer group weights ``ct`` (shape ``(n_groups, B)``); study ``i`` weighs
        ``ct[group[i]]`` (``group=None``: ``ct`` is per study).

        One sparse product (:meth:`_matrix` ``@ ct``) gives, for every replicate, the negatives' weight in each
        segment between consecutive positive scores and the positives' weight reading each break; the segment
        weights are accumulated along the segments (:func:`cumsum_rows_inplace`: whole-row additions down the
        product, no transpose) and dotted with the positives' weights: ``num = sum_k cs[k] q[k] = 2 x (pairs
        ordered + ties / 2)``. Every sum is an exact integer: the product in int16 where no row can exceed
        ``2**15 - 1`` (half the memory traffic of int32), else int32/int64; the cumulative sums in int32 where the
        total weight stays below ``2**31``, else int64; the dot product in int32 while ``2 W_pos W_neg`` (which
        bounds every product and partial sum) is below ``2**31``, in float64 below ``2**53``, else int64, else
        Python integers beyond ``2**62``. Only the final division rounds.

        Parameters
        ----------
        ct : ndarray of shape (n_groups, B)
            Non-negative integer weights (int16, int32 or int64).
        group : ndarray of int, optional
        wpos : ndarray of shape (B,), optional
            The positives' total weight per column when known (:meth:`positive_weight`; computed otherwise).
        ct_max : int, optional
            An upper bound of ``ct`` when known (computed otherwise).
        """
        from scipy import sparse

        n_rep = ct.shape[1]
        if self.neg.size == 0 or self.pos.size == 0:
            return np.full(n_rep, np.nan)
        ns = self._segments()[0].size
        mat, row_max = self._matrix(group, ct.shape[0])
        top_ct = max(int(ct.max(initial=0)) if ct_max is None else int(ct_max), 1)
        if wpos is None:
            wpos = self.positive_weight(ct, group)
        if row_max * top_ct <= _I16 and ct.dtype == np.int16:
            prod = np.int16
        elif row_max * top_ct <= _I32 and ct.dtype in (np.int16, np.int32):
            prod = np.int32
        else:
            prod = np.int64
        if ct.dtype != prod:
            ct = ct.astype(prod)
        key = ("mat", np.dtype(prod).str)
        m = self._typed.get(key)
        if m is None or m[0] is not mat:  # (scipy's astype would sort and merge the entries: not needed here)
            m = (
                mat,
                mat
                if prod == np.int32
                else sparse.csr_array((mat.data.astype(prod), mat.indices, mat.indptr), shape=mat.shape),
            )
            self._typed[key] = m
        out = m[1] @ ct  # (2 ns + 2, B)
        acc = np.int32 if top_ct * self.neg.size < _I32 else np.int64
        cs = out[: ns + 1].astype(acc)  # (ns + 1, B); row 0 of out is zero
        cumsum_rows_inplace(cs)  # cs[k] = negatives' weight below break k, for every replicate
        q = out[ns + 1 :]
        wneg = cs[ns]
        den = 2.0 * wpos.astype(float) * wneg.astype(float)  # 2 W_pos W_neg; num <= den
        top = float(den.max(initial=0.0))
        if top <= _I32 and acc == np.int32:  # ... below 2**31: exact in int32, no conversion to float
            num = np.einsum("ij,ij->j", cs, q)  # q int16 or int32: an int32 result
        elif top < 2.0**53:  # every product and partial sum an integer below 2**53: exact in float64
            num = np.einsum("ij,ij->j", cs, q, dtype=np.float64)
        elif top < 2.0**62:
            num = np.einsum("ij,ij->j", cs, q, dtype=np.int64)
        else:  # astronomically large weights: exact in Python integers
            num = np.array(
                [sum(int(a) * int(b) for a, b in zip(cs[:, j], q[:, j])) for j in range(n_rep)], dtype=object
            )
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


# ------------------------------------------------------------------------------------------ blocks
@dataclass(frozen=True)
class BlockInputs:
    """Everything a block task of :func:`auc_block` reads: arrays in memory, or the paths of ``.npy`` files
    (written once by :func:`spill_inputs`, memory-mapped by each task: every worker must see the folder).

    Attributes
    ----------
    scores : ndarray or str
        ``S`` of shape (model, finding, study), float; NaN where a study is unlabelled for a finding.
    labels : ndarray or str
        ``Y`` of shape (finding, reference, study): 1, 0 or NaN (excluded).
    study_patient : ndarray or str, optional
        Each study's patient column of the plan; ``None`` without a plan (point estimates only).
    shards : ndarray or str, optional
        The plan's counts cut into shards (:meth:`~cxreval.bootstrap.ResamplingPlan.count_shards`).
    wpos : ndarray or str, optional
        Total positive weight per (finding, reference, replicate), int64, zero-padded like ``shards``
        (:func:`positive_weights`).
    n_resamples : int
    n_patients : int
    ct_max : int
        The largest count of the plan.
    """

    scores: np.ndarray | str
    labels: np.ndarray | str
    study_patient: np.ndarray | str | None = None
    shards: np.ndarray | str | None = None
    wpos: np.ndarray | str | None = None
    n_resamples: int = 0
    n_patients: int = 0
    ct_max: int = 1

    def load(self) -> BlockInputs:
        """The same inputs with every path memory-mapped (read-only)."""
        arr = load_spilled
        return BlockInputs(
            arr(self.scores),  # type: ignore[arg-type]
            arr(self.labels),  # type: ignore[arg-type]
            arr(self.study_patient),
            arr(self.shards),
            arr(self.wpos),
            self.n_resamples,
            self.n_patients,
            self.ct_max,
        )


def spill_inputs(inputs: BlockInputs, folder: str | Path) -> BlockInputs:
    """Write the arrays of ``inputs`` as ``.npy`` files into ``folder`` and return inputs naming them (what a
    process or Dask task carries instead of the arrays: a few paths; :func:`cxreval.spill.spill_arrays`)."""
    paths = spill_arrays(
        {name: getattr(inputs, name) for name in ("scores", "labels", "study_patient", "shards", "wpos")},
        folder,
    )
    return BlockInputs(
        paths["scores"],  # type: ignore[arg-type]
        paths["labels"],  # type: ignore[arg-type]
        paths["study_patient"],
        paths["shards"],
        paths["wpos"],
        inputs.n_resamples,
        inputs.n_patients,
        inputs.ct_max,
    )


def positive_weights(labels: np.ndarray, study_patient: np.ndarray, shards: np.ndarray) -> np.ndarray:
    """Total weight of the positives of every (finding, reference) in every replicate: int64 of shape
    ``(finding, reference, n_shards * shard)`` (exact: float64 sums of integers below ``2**53``)."""
    n_f, n_r, _ = labels.shape
    n_sh, n_pat, size = shards.shape
    pc = np.zeros((n_f * n_r, n_pat))
    for q in range(n_f * n_r):
        pc[q] = np.bincount(study_patient[labels[q // n_r, q % n_r] == 1], minlength=n_pat)
    out = np.empty((n_f * n_r, n_sh * size), dtype=np.int64)
    for t in range(n_sh):
        out[:, t * size : (t + 1) * size] = np.rint(pc @ shards[t].astype(np.float64))
    return out.reshape(n_f, n_r, n_sh * size)


def block_indices(inputs: BlockInputs, model: int, finding: int) -> list[tuple[AUCIndex, np.ndarray | None]]:
    """The index of every reference of one block and its study → patient map: per finding ``(model, finding)``
    (one sort of the model's scores), or with ``finding == n_findings`` the micro average (every (finding,
    study) pair of the model pooled, pair ``q = j * n_studies + s``; one sort)."""
    S, Y, sp = inputs.scores, inputs.labels, inputs.study_patient
    n_f = Y.shape[0]  # type: ignore[union-attr]
    if finding < n_f:
        s = np.array(S[model, finding], dtype=float)  # type: ignore[index]
        ys = [np.asarray(Y[finding, k]) for k in range(Y.shape[1])]  # type: ignore[index,union-attr]
        group = None if sp is None else np.asarray(sp)
    else:
        s = np.array(S[model], dtype=float).ravel()
        ys = [np.asarray(Y[:, k, :]).ravel() for k in range(Y.shape[1])]  # type: ignore[index,union-attr]
        group = None if sp is None else np.tile(np.asarray(sp), n_f)
    # the order within tied scores changes no segment (breaks fall between distinct scores), so the fast unstable
    # sort gives the same matrices; NaN scores (unlabelled studies) sort last and are masked out
    order = np.argsort(s)
    out = []
    for y in ys:
        ok = np.isfinite(y)
        sub_order = order[ok[order]]
        yo = y[sub_order] == 1
        out.append((AUCIndex.from_sorted(sub_order[~yo], sub_order[yo], s), group))
    return out


class AUCBlock(NamedTuple):
    """What :func:`auc_block` returns: the block ``(model, finding)``, its point AUCs and their replicates."""

    block: tuple[int, int]
    point: np.ndarray
    replicates: np.ndarray


def auc_block(inputs: BlockInputs, block: tuple[int, int]) -> AUCBlock:
    """Point AUC and every replicate of one block ``(model, finding)`` for every reference (``finding ==
    n_findings``: the micro average): ``(block, point (R,), dist (R, n_resamples))``.

    The block's indices are built, run over every shard of the plan and dropped: memory is the plan plus one
    block. Module level, so that a process or Dask executor can pickle it (bound with :func:`functools.partial`
    to inputs that name ``.npy`` files, :func:`spill_inputs`).
    """
    inp = inputs.load()
    assert (
        not isinstance(inp.labels, str) and not isinstance(inp.shards, str) and not isinstance(inp.wpos, str)
    )
    model, finding = block
    n_f = inp.labels.shape[0]
    B = inp.n_resamples
    pairs = block_indices(inp, model, finding)
    point = np.empty(len(pairs))
    dist = np.full((len(pairs), B), np.nan)
    n_items = inp.labels.shape[2] * (1 if finding < n_f else n_f)
    for k, (idx, group) in enumerate(pairs):
        soft = soft_block_labels(inp, model, finding, k)
        if soft is not None:
            point[k], dist[k] = _soft_block(inp, soft, group, B)
            continue
        ones = np.ones(
            (n_items if group is None else inp.n_patients, 1), dtype=np.int32
        )  # point: weight 1 each
        point[k] = idx.auc_grouped(ones, group)[0]
        if not B or inp.shards is None:
            continue
        wp = inp.wpos[:, k].sum(axis=0) if finding == n_f else inp.wpos[finding, k]  # type: ignore[index]
        shards = inp.shards
        size = shards.shape[2]
        for t in range(shards.shape[0]):
            lo, hi = t * size, min(B, (t + 1) * size)
            res = idx.auc_grouped(
                shards[t], group, wpos=np.asarray(wp[t * size : (t + 1) * size]), ct_max=inp.ct_max
            )
            dist[k, lo:hi] = res[: hi - lo]
    return AUCBlock((int(model), int(finding)), point, dist)


def soft_block_labels(
    inp: BlockInputs, model: int, finding: int, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Reference ``k`` of block ``(model, finding)`` when its labels are probabilities (any value strictly
    between 0 and 1; :mod:`cxreval.stats._soft_labels`): ``(items kept, scores, probabilities)``;
    ``None`` for 0/1 labels (for which the two paths agree exactly)."""
    Y = inp.labels
    n_f = Y.shape[0]  # type: ignore[union-attr]
    y = (
        np.asarray(Y[finding, k])  # type: ignore[index]
        if finding < n_f
        else np.asarray(Y[:, k, :]).ravel()  # type: ignore[index]
    )
    ok = np.isfinite(y)
    if not ((y[ok] > 0) & (y[ok] < 1)).any():
        return None
    s = np.array(
        inp.scores[model, finding] if finding < n_f else inp.scores[model],  # type: ignore[index]
        dtype=float,
    ).ravel()
    items = np.flatnonzero(ok)
    return items, s[items], y[items]


def soft_auc_rows(score: np.ndarray, p: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The pair-weighted AUC for every row of probabilities ``p`` and weights ``weights`` (each ``(B, n)``):
    ``sum_{i != j} c_i c_j p_i (1 - p_j) ([s_i > s_j] + [s_i = s_j] / 2) / sum_{i != j} c_i c_j p_i (1 - p_j)``
    (the statistic of :func:`cxreval.latent.latent_auc_score`, which calls it; copies of one item are never paired). One sort,
    cumulative sums over the groups of tied scores; NaN where no pair has weight."""
    order = np.argsort(score, kind="stable")
    ss = score[order]
    c = weights[:, order]
    a = c * p[:, order]  # positive weight of each item
    b = c - a  # negative weight
    starts = np.flatnonzero(np.concatenate([[True], ss[1:] != ss[:-1]]))
    a_g = np.add.reduceat(a, starts, axis=1)
    b_g = np.add.reduceat(b, starts, axis=1)
    below = np.cumsum(b_g, axis=1) - b_g
    diagonal = (c * a - a * a).sum(
        axis=1
    )  # sum_i c_i^2 p_i (1 - p_i): an item's copies paired with each other
    num = (a_g * (below + 0.5 * b_g)).sum(axis=1) - 0.5 * diagonal
    den = a.sum(axis=1) * b.sum(axis=1) - diagonal
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[~(den > 0)] = np.nan
    return out


def _soft_block(
    inp: BlockInputs,
    soft: tuple[np.ndarray, np.ndarray, np.ndarray],
    group: np.ndarray | None,
    n_resamples: int,
) -> tuple[float, np.ndarray]:
    """Point and replicates of :func:`soft_auc_rows` (an item's weight in a replicate is its patient's count)."""
    items, s, p = soft
    point = float(soft_auc_rows(s, p[None, :], np.ones((1, items.size)))[0])
    dist = np.full(n_resamples, np.nan)
    if not n_resamples or inp.shards is None:
        return point, dist
    assert not isinstance(inp.shards, str)
    g = items if group is None else np.asarray(group)[items]
    size = inp.shards.shape[2]
    for t in range(inp.shards.shape[0]):
        lo, hi = t * size, min(n_resamples, (t + 1) * size)
        if lo >= hi:
            break
        w = np.asarray(inp.shards[t])[g, : hi - lo].T.astype(float)  # (replicates, items)
        dist[lo:hi] = soft_auc_rows(s, np.broadcast_to(p, w.shape), w)
    return point, dist
