"""The cells of the latent-class EM (private to :mod:`cxreval.latent`): studies with the same reader labels,
score bin and anchor state, and the sums and reads between cells, score bins and the reader bins of
score-dependent readers (:mod:`cxreval.latent._em` runs EM on them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Cells",
    "make_cells",
    "cell_weights",
    "bin_sums",
    "to_cells",
    "bin_z",
    "reader_sums",
    "reader_at_cells",
]


@dataclass(frozen=True)
class Cells:
    """The distinct (reader labels, score bin, anchor) combinations of the studies, sorted by bin.

    Attributes
    ----------
    positive, negative : ndarray of float, shape (n_cells, n_readers)
        1.0 where the cell's reader label is positive (negative), else 0.0.
    bin : ndarray of int, shape (n_cells,)
        The score bin of the cell (0 when there is no score); non-decreasing.
    anchor : ndarray of int, shape (n_cells,)
        -1 (truth unknown), 0 or 1 (truth known exactly).
    inverse : ndarray of int, shape (n_studies,)
        The cell of each study.
    n_bins : int
    per_bin : ndarray of int, shape (n_bins,)
        The number of cells in each bin.
    bin_basis : ndarray of shape (n_bins, d) or None
        The spline basis at each bin (``spline`` model only); everything that depends on the score depends on
        it through the bin, so the M-step sums the cells of a bin first and works on ``n_bins`` rows.
    group_onehot : ndarray of shape (n_cells, n_categories) or None
        Declared groups of dependent readers, each one multi-category reader: 1.0 at the cell's joint label
        pattern of each group (a row of zeros for a group without any label in the cell); the group members'
        ``positive`` / ``negative`` columns are zero.
    group_of : ndarray of int, shape (n_categories,) or None
        The group of each category column.
    reader_bin, reader_z : ndarray or None
        Score-dependent readers on coarser bins than the score model's (the joint model, whose score bins are
        the studies): each cell's reader bin and each reader bin's standardised score; None: the score bins.
        ``reader_design`` (a sparse (n_cells, n_reader_bins x 2 n_readers) matrix and its transpose) then
        sums the cells' reader terms per reader bin, and reads a reader bin's terms at each cell, as sparse
        matrix products.
    """

    positive: np.ndarray
    negative: np.ndarray
    bin: np.ndarray
    anchor: np.ndarray
    inverse: np.ndarray
    n_bins: int
    bin_basis: np.ndarray | None = None
    group_onehot: np.ndarray | None = None
    group_of: np.ndarray | None = None
    reader_bin: np.ndarray | None = None
    reader_z: np.ndarray | None = None
    per_bin: np.ndarray = field(init=False, repr=False)
    reader_design: tuple[Any, Any] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "per_bin", np.bincount(self.bin, minlength=self.n_bins))
        design = None
        if self.reader_bin is not None and self.reader_z is not None:
            from scipy.sparse import csr_matrix

            pn = np.concatenate([self.positive, self.negative], axis=1)
            cell, j = np.nonzero(pn)
            design = csr_matrix(
                (pn[cell, j], (cell, self.reader_bin[cell] * pn.shape[1] + j)),
                shape=(self.n_cells, self.reader_z.size * pn.shape[1]),
            )
            design = (design, design.T.tocsr())
        object.__setattr__(self, "reader_design", design)

    @property
    def n_cells(self) -> int:
        return int(self.bin.shape[0])


def make_cells(
    labels: np.ndarray,
    bins: np.ndarray,
    anchor: np.ndarray,
    n_bins: int,
    bin_basis: np.ndarray | None = None,
    groups: tuple[tuple[int, ...], ...] = (),
    reader_bins: np.ndarray | None = None,
    reader_z: np.ndarray | None = None,
) -> Cells:
    """Group studies by (score bin, reader labels, anchor), the cells in that order. ``labels`` (n, R) 1/0/NaN,
    ``bins`` (n,) int, ``anchor`` (n,) 1/0/NaN; ``bin_basis`` (n_bins, d), the spline basis of each bin;
    ``groups``: the column indices of each declared group of dependent readers (one joint pattern each);
    ``reader_bins`` (n,) and ``reader_z``: the reader bins of score-dependent readers (constant within a bin)."""
    code = np.where(np.isnan(labels), 0, np.where(labels > 0.5, 2, 1)).astype(np.int8)
    acode = np.where(np.isnan(anchor), 0, np.where(anchor > 0.5, 2, 1)).astype(np.int64)
    key = np.column_stack([bins.astype(np.int64), code.astype(np.int64), acode])
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    r = labels.shape[1]
    pos = (uniq[:, 1 : r + 1] == 2).astype(float)
    neg = (uniq[:, 1 : r + 1] == 1).astype(float)
    onehot = group_of = None
    if groups:
        blocks, owner = [], []
        for g, members in enumerate(groups):
            # the joint pattern in base 3 (0 no label, 1 negative, 2 positive); pattern 0 (no label) has no column
            pattern = (uniq[:, [1 + j for j in members]] * 3 ** np.arange(len(members))).sum(axis=1)
            n_cat = 3 ** len(members)
            block = np.zeros((uniq.shape[0], n_cat - 1))
            has = pattern > 0
            block[np.flatnonzero(has), pattern[has] - 1] = 1.0
            blocks.append(block)
            owner.append(np.full(n_cat - 1, g))
            pos[:, list(members)] = 0.0
            neg[:, list(members)] = 0.0
        onehot, group_of = np.concatenate(blocks, axis=1), np.concatenate(owner)
    return Cells(
        positive=pos,
        negative=neg,
        bin=uniq[:, 0].astype(np.intp),
        anchor=uniq[:, r + 1].astype(np.intp) - 1,
        inverse=inverse.reshape(-1).astype(np.intp),
        n_bins=int(n_bins),
        bin_basis=bin_basis,
        group_onehot=onehot,
        group_of=group_of,
        reader_bin=None
        if reader_bins is None
        else reader_bins[_first_of(inverse.reshape(-1), uniq.shape[0])],
        reader_z=reader_z,
    )


def _first_of(inverse: np.ndarray, n_cells: int) -> np.ndarray:
    """The first study of each cell."""
    first = np.full(n_cells, -1, dtype=np.intp)
    first[inverse[::-1]] = np.arange(inverse.size)[::-1]
    return first


def cell_weights(cells: Cells, weights: np.ndarray) -> np.ndarray:
    """Study weights (B, n) summed into cell weights (B, n_cells)."""
    b = weights.shape[0]
    c = cells.n_cells
    idx = (cells.inverse[None, :] + c * np.arange(b)[:, None]).ravel()
    return np.bincount(idx, weights=weights.ravel(), minlength=b * c).reshape(b, c)


def bin_sums(cells: Cells, x: np.ndarray) -> np.ndarray:
    """``x`` (B, n_cells, ...) summed over the cells of each bin: (B, n_bins, ...)."""
    counts = cells.per_bin
    full = counts > 0
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[full]
    sums = np.add.reduceat(x, starts, axis=1)
    if full.all():
        return sums
    out = np.zeros((x.shape[0], cells.n_bins, *x.shape[2:]))
    out[:, full] = sums
    return out


def to_cells(cells: Cells, x: np.ndarray) -> np.ndarray:
    """A value per bin (B, n_bins, ...) at each cell (B, n_cells, ...)."""
    return np.repeat(x, cells.per_bin, axis=1)


def bin_z(cells: Cells) -> np.ndarray:
    """The standardised normal score of each bin of score-dependent readers (the spline basis' linear column,
    or the reader bins' own)."""
    if cells.reader_z is not None:
        return cells.reader_z
    assert cells.bin_basis is not None
    return cells.bin_basis[:, 1]


def reader_sums(cells: Cells, x: np.ndarray) -> np.ndarray:
    """``x`` (B, n_cells) times each cell's positive and negative indicators, summed per reader bin:
    (B, n_reader_bins, 2 n_readers)."""
    if cells.reader_design is not None:
        return (cells.reader_design[1] @ x.T).T.reshape(x.shape[0], -1, 2 * cells.positive.shape[1])
    pn = np.concatenate([cells.positive, cells.negative], axis=1)
    return bin_sums(cells, np.einsum("bc,cj->bcj", x, pn))


def reader_at_cells(cells: Cells, terms: np.ndarray) -> np.ndarray:
    """Per reader-bin terms (B, n_reader_bins, 2 n_readers) of the positive and negative labels, summed over
    each cell's labels: (B, n_cells)."""
    if cells.reader_design is not None:
        return np.ascontiguousarray((cells.reader_design[0] @ terms.reshape(terms.shape[0], -1).T).T)
    pn = np.concatenate([cells.positive, cells.negative], axis=1)
    return np.einsum("bcj,cj->bc", to_cells(cells, terms), pn)
