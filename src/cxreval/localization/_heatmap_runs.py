"""Bilinear heatmaps to boxes without the dense map: exact row runs, linked into connected components.

Along an image row the bilinearly upsampled value between two neighbouring map centres is ``A + D t_j``
with ``t_j`` increasing, which IEEE rounding keeps monotone in ``t_j``; so is the normalisation. Each such
*row segment* (32 pixels for a 32 -> 1024 map) is therefore either empty, full, or one run at one end,
found exactly by testing its two end pixels and a binary search over the few segments that cross the
threshold (:func:`heatmap_runs`). The exact minimum and maximum of every map, which the normalisation
needs, come from the corners of its blocks (:func:`block_extremes`). The runs are merged, linked to the
runs of the next row that touch them (8- or 4-connectivity), and the connected components of that small
graph (:func:`component_roots`, a vectorised union-find) give the boxes (:func:`runs_to_boxes`), ordered by their first pixel in
raster order like ``scipy.ndimage.label`` + ``find_objects``. No Python loop runs over pixels and maps
are processed in batches of :data:`RUN_BATCH`.

Examples
--------
>>> hm = np.zeros((4, 4)); hm[1, 1] = 1.0
>>> runs = heatmap_runs(hm[None], (8, 8), thresholds=(60.0,))[0]
>>> runs_to_boxes(runs)[0].tolist()
[[1, 1, 5, 5]]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import InvalidParameterError, SchemaError
from ._upsampling import CONNECTIVITY, GridAxis, check_heatmaps, check_image_shape, check_threshold, grid_axis

__all__ = [
    "RUN_BATCH",
    "HeatmapRuns",
    "BlockExtremes",
    "block_extremes",
    "heatmap_runs",
    "batch_runs",
    "runs_to_boxes",
]

RUN_BATCH = 16
"""Maps processed together by :func:`batch_runs` (bounds the temporary arrays)."""


@dataclass(frozen=True)
class HeatmapRuns:
    """Horizontal runs of the thresholded maps of a batch, for one threshold.

    Attributes
    ----------
    map_index, row, start, stop : ndarray of int64
        One entry per maximal run: pixels ``start .. stop - 1`` of image row ``row`` of map ``map_index``,
        sorted by map, row and start.
    n_maps : int
    image_shape : (int, int)
    """

    map_index: np.ndarray
    row: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    n_maps: int
    image_shape: tuple[int, int]

    def n_pixels(self) -> np.ndarray:
        """Number of region pixels per map."""
        return np.bincount(self.map_index, weights=self.stop - self.start, minlength=self.n_maps).astype(
            np.int64
        )


_EPS = np.finfo(float).eps


def _seg_values(v: np.ndarray, cax: GridAxis) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``A``, ``D`` and the values at both end pixels of every column segment of the rows ``v``."""
    A = v[..., cax.seg_i0]
    D = v[..., cax.seg_i1] - A
    return A, D, A + D * cax.t[cax.seg_lo], A + D * cax.t[cax.seg_hi - 1]


def _v_at(maps: np.ndarray, m: np.ndarray, r: np.ndarray, c: np.ndarray, rax: GridAxis) -> np.ndarray:
    """Row-interpolated values ``V[m, r, c]`` (the same float operations as :func:`upsample_rows`)."""
    a = maps[m, rax.i0[r], c]
    return a + (maps[m, rax.i1[r], c] - a) * rax.t[r]


def _block_rows(m_i: np.ndarray, b_i: np.ndarray, s_i: np.ndarray, rax: GridAxis) -> tuple[np.ndarray, ...]:
    """Expand blocks ``(map, band, segment)`` to one entry per image row of the band."""
    blo, bhi = rax.seg_lo, rax.seg_hi
    nrow = (bhi - blo)[b_i]
    tot = int(nrow.sum())
    rr = np.repeat(blo[b_i] - np.cumsum(nrow) + nrow, nrow) + np.arange(tot)
    return np.repeat(m_i, nrow), rr, np.repeat(s_i, nrow)


@dataclass(frozen=True)
class BlockExtremes:
    """Per block (band of rows between two map rows x column segment) corner extremes, and each map's
    exact pixel minimum and maximum (see :func:`block_extremes`)."""

    rax: GridAxis
    cax: GridAxis
    bmin: np.ndarray  # (n, nb, ns) min / max of each block's four corner pixels
    bmax: np.ndarray
    mn: np.ndarray  # (n,) exact min / max over all pixels
    mx: np.ndarray
    err: np.ndarray  # (n,) bound on the float error of a pixel value
    top_rows: tuple  # rows (map, row, value) of the blocks that may hold the maximum


def block_extremes(maps: np.ndarray, H: int, W: int) -> BlockExtremes:
    """Corner values of every block and the exact pixel min and max of each map.

    A block is a band of rows between two map rows times a column segment. In exact arithmetic a
    bilinear patch takes its extremes at its corners; the float pixel values differ from the exact
    ones by at most ``err``. So only blocks whose corners come within ``2 err`` of a map's extreme can
    hold a pixel beyond the corners' extreme, and only their rows are evaluated (at the two end pixels
    of the segment, where the monotone rows take their extremes). Blocks whose four map values are
    equal are flat: every pixel equals the corner value exactly.
    """
    n, h, w = maps.shape
    rax, cax = grid_axis(h, H, "bilinear"), grid_axis(w, W, "bilinear")
    blo, bhi = rax.seg_lo, rax.seg_hi
    amax = np.abs(maps).max(axis=(1, 2))
    err = 16 * _EPS * amax + np.finfo(float).tiny
    crow = np.stack([blo, bhi - 1], axis=1).ravel()  # (2 nb,)
    a = maps[:, rax.i0[crow], :]
    vc = a + (maps[:, rax.i1[crow], :] - a) * rax.t[crow][None, :, None]
    _, _, c_lo, c_hi = _seg_values(vc, cax)  # (n, 2nb, ns)
    # the four corners of each block: both end pixels of its segment on its first and last row (elementwise
    # minimum and maximum: a reduction over two short axes costs ten times as much)
    top_lo, top_hi, bot_lo, bot_hi = c_lo[:, 0::2], c_hi[:, 0::2], c_lo[:, 1::2], c_hi[:, 1::2]
    bmin = np.minimum(np.minimum(top_lo, top_hi), np.minimum(bot_lo, bot_hi))
    bmax = np.maximum(np.maximum(top_lo, top_hi), np.maximum(bot_lo, bot_hi))
    cmin, cmax = bmin.min(axis=(1, 2)), bmax.max(axis=(1, 2))
    r0, r1 = rax.seg_i0, rax.seg_i1
    c0, c1 = cax.seg_i0, cax.seg_i1
    q00 = maps[:, r0][:, :, c0]
    flat = (q00 == maps[:, r0][:, :, c1]) & (q00 == maps[:, r1][:, :, c0]) & (q00 == maps[:, r1][:, :, c1])
    mn, mx = cmin.copy(), cmax.copy()
    lowc = (bmin <= (cmin + 2 * err)[:, None, None]) & ~flat
    highc = (bmax >= (cmax - 2 * err)[:, None, None]) & ~flat
    top: tuple = (np.zeros(0, np.int64),) * 2 + (np.zeros(0),)
    for which, cand in (("min", lowc), ("max", highc)):
        m_i, b_i, s_i = np.nonzero(cand)
        if not m_i.size:
            continue
        mm, rr, ss = _block_rows(m_i, b_i, s_i, rax)
        A = _v_at(maps, mm, rr, cax.seg_i0[ss], rax)
        D = _v_at(maps, mm, rr, cax.seg_i1[ss], rax) - A
        u1, u2 = A + D * cax.t[cax.seg_lo[ss]], A + D * cax.t[cax.seg_hi[ss] - 1]
        if which == "min":
            np.minimum.at(mn, mm, np.minimum(u1, u2))
        else:
            v = np.maximum(u1, u2)
            np.maximum.at(mx, mm, v)
            top = (mm, rr, v)
    return BlockExtremes(rax, cax, bmin, bmax, mn, mx, err, top)


def _bilinear_runs(
    maps: np.ndarray,
    H: int,
    W: int,
    thresholds: list[float],
    strict: bool,
    offset: int = 0,
    extremes: BlockExtremes | None = None,
) -> list[tuple]:
    """Runs of a batch, one tuple ``(map, row, start, stop)`` of arrays per threshold (unsorted, unmerged).
    ``offset``: the position of the batch's first map in the caller's input (for error messages); ``extremes``:
    the batch's :func:`block_extremes`, when the caller has them.

    Blocks whose four corner pixels lie clearly on one side of the threshold are decided at once (see
    :func:`block_extremes`); only the rows of the remaining blocks are searched, segment by segment, with the
    exact float formula.
    """
    n = maps.shape[0]
    pr = block_extremes(maps, H, W) if extremes is None else extremes
    rax, cax, bmin, bmax, mn, mx, err = pr.rax, pr.cax, pr.bmin, pr.bmax, pr.mn, pr.mx, pr.err
    nb, ns = rax.seg_lo.size, cax.seg_lo.size
    blo, bhi = rax.seg_lo, rax.seg_hi
    rng_ = mx - mn
    if not np.isfinite(rng_).all():
        i = int(np.flatnonzero(~np.isfinite(rng_))[0])
        raise SchemaError(
            f"heatmap {offset + i}: its value range {mn[i]!r}..{mx[i]!r} overflows float64 "
            "(max - min is not finite); rescale the map."
        )
    const = rng_ == 0
    safe = np.where(const, 1.0, rng_)
    out = []
    for thr in thresholds:
        ustar = mn + thr * safe / 255  # boundary in map units
        marg = (2 * err + 64 * _EPS * (np.abs(ustar) + np.abs(mn) + safe))[:, None, None]
        above = bmin > ustar[:, None, None] + marg
        below = bmax < ustar[:, None, None] - marg
        above &= ~const[:, None, None]
        below |= const[:, None, None]
        runs = []
        # uniform blocks above the threshold, joined along each band: every row of the band
        pad = np.zeros((n, nb, ns + 2), dtype=np.int8)
        pad[:, :, 1:-1] = above
        dif = np.diff(pad, axis=2)
        m_i, b_i, s_i = np.nonzero(dif == 1)
        s_e = np.nonzero(dif == -1)[2] - 1
        nrow = (bhi - blo)[b_i]
        tot = int(nrow.sum())
        rr = np.repeat(blo[b_i] - np.cumsum(nrow) + nrow, nrow) + np.arange(tot)
        runs.append(
            (np.repeat(m_i, nrow), rr, np.repeat(cax.seg_lo[s_i], nrow), np.repeat(cax.seg_hi[s_e], nrow))
        )
        # mixed blocks: search every row of the band
        m_i, b_i, s_i = np.nonzero(~above & ~below)
        if m_i.size:
            mm, rr, ss = _block_rows(m_i, b_i, s_i, rax)
            A = _v_at(maps, mm, rr, cax.seg_i0[ss], rax)
            D = _v_at(maps, mm, rr, cax.seg_i1[ss], rax) - A
            lo, hi = cax.seg_lo[ss], cax.seg_hi[ss] - 1
            mnp, rp = mn[mm], safe[mm]

            def is_above(
                j: np.ndarray,
                A: np.ndarray = A,
                D: np.ndarray = D,
                mnp: np.ndarray = mnp,  # noqa: B008
                rp: np.ndarray = rp,
                thr: float = thr,
            ) -> np.ndarray:
                val = 255 * (A + D * cax.t[j] - mnp) / rp
                return (val > thr) if strict else (val >= thr)

            a_lo, a_hi = is_above(lo) & ~const[mm], is_above(hi) & ~const[mm]
            full = a_lo & a_hi
            runs.append((mm[full], rr[full], lo[full], hi[full] + 1))
            part = a_lo != a_hi
            if part.any():
                A, D, mnp, rp = A[part], D[part], mnp[part], rp[part]
                inc = a_hi[part]  # increasing: region is a suffix
                lo_p, hi_p = lo[part], hi[part]
                t_true = np.where(inc, hi_p, lo_p)
                t_false = np.where(inc, lo_p, hi_p)
                while True:
                    act = np.abs(t_true - t_false) > 1
                    if not act.any():
                        break
                    mid = (t_true + t_false) // 2
                    ab = is_above(mid, A, D, mnp, rp)
                    t_true = np.where(act & ab, mid, t_true)
                    t_false = np.where(act & ~ab, mid, t_false)
                runs.append(
                    (mm[part], rr[part], np.where(inc, t_true, lo_p), np.where(inc, hi_p + 1, t_true + 1))
                )
        out.append(tuple(np.concatenate([r[q] for r in runs]).astype(np.int64) for q in range(4)))
    return out


def _merge(mi: np.ndarray, ri: np.ndarray, st: np.ndarray, sp: np.ndarray) -> tuple[np.ndarray, ...]:
    if mi.size == 0:
        return mi, ri, st, sp
    new = np.ones(mi.size, dtype=bool)
    new[1:] = (mi[1:] != mi[:-1]) | (ri[1:] != ri[:-1]) | (st[1:] != sp[:-1])
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, mi.size - 1]
    return mi[first], ri[first], st[first], sp[last]


def heatmap_runs(
    heatmaps: ArrayLike,
    image_shape: tuple[int, int] = (1024, 1024),
    *,
    thresholds: tuple[float, ...] = (60.0, 180.0),
    strict: bool = True,
) -> list[HeatmapRuns]:
    """Runs of the thresholded, bilinearly upsampled, normalised maps of a batch (one per threshold).

    Parameters
    ----------
    heatmaps : array-like of shape (n, h, w)
    image_shape : (height, width), default=(1024, 1024)
    thresholds : tuple of float in [0, 255], default=(60, 180)
    strict : bool, default=True
        ``>`` when true, ``>=`` otherwise.

    Returns
    -------
    runs : list of HeatmapRuns
        One per threshold, in the order given.
    """
    maps = check_heatmaps(heatmaps, batch=True)
    H, W = check_image_shape(image_shape)
    thr = [check_threshold(t) for t in thresholds]
    return batch_runs(maps, H, W, thr, strict)


def batch_runs(
    maps: np.ndarray,
    H: int,
    W: int,
    thr: list[float],
    strict: bool,
    offset: int = 0,
    *,
    on_extremes: Callable[[int, np.ndarray, BlockExtremes], None] | None = None,
) -> list[HeatmapRuns]:
    """:func:`heatmap_runs` on validated arguments (``offset`` as in :func:`_bilinear_runs`). ``on_extremes(b0, batch,
    extremes)`` is called with each batch's :func:`block_extremes` (for a caller that needs them too, e.g. the
    maps' peaks, without computing them twice)."""
    parts: list[list[tuple]] = [[] for _ in thr]
    for b0 in range(0, maps.shape[0], RUN_BATCH):
        batch = maps[b0 : b0 + RUN_BATCH]
        pr = block_extremes(batch, H, W)
        if on_extremes is not None:
            on_extremes(b0, batch, pr)
        for k, r in enumerate(_bilinear_runs(batch, H, W, thr, strict, offset + b0, pr)):
            parts[k].append((r[0] + b0, *r[1:]))
    out = []
    for p in parts:
        cat = [np.concatenate([q[j] for q in p]) for j in range(4)]
        order = np.argsort((cat[0] * H + cat[1]) * (W + 1) + cat[2], kind="stable")
        mi, ri, st, sp = _merge(*(c[order] for c in cat))
        for a in (mi, ri, st, sp):
            a.setflags(write=False)
        out.append(HeatmapRuns(mi, ri, st, sp, int(maps.shape[0]), (H, W)))
    return out


def component_roots(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The connected components of the undirected graph on ``n`` nodes with edges ``(a[i], b[i])``: the root of each
    node's component (a member of it; two nodes share a root exactly when they are connected).

    Vectorised union-find (hook and compress): every edge whose ends have different roots hooks the larger root
    under the smaller (``np.minimum.at``, so parents only decrease and no cycle forms), then pointer jumping
    makes every node point at its root; repeated until no edge joins two roots. NumPy only (no
    ``scipy.sparse.csgraph``, whose import costs more than a small graph's components)."""
    parent = np.arange(n)
    while True:
        ra, rb = parent[a], parent[b]
        join = ra != rb
        if not join.any():
            return parent
        np.minimum.at(parent, np.maximum(ra, rb)[join], np.minimum(ra, rb)[join])
        while True:
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent = up


def _run_components(runs: HeatmapRuns, connectivity: int) -> tuple[np.ndarray, int]:
    """Component id of each run, numbered by first run (raster order, map by map)."""
    nr = runs.row.size
    if nr == 0:
        return np.zeros(0, dtype=np.int64), 0
    H, W = runs.image_shape
    M = W + 2
    g = runs.map_index * (H + 2) + runs.row
    key_s = g * M + runs.start
    key_e = g * M + runs.stop
    nxt = (g + 1) * M
    if connectivity == 8:  # touching incl. diagonals: start_b <= stop_a and stop_b >= start_a
        lo = np.searchsorted(key_e, nxt + runs.start, side="left")
        hi = np.searchsorted(key_s, nxt + runs.stop, side="right")
    else:  # sharing an edge: start_b < stop_a and stop_b > start_a
        lo = np.searchsorted(key_e, nxt + runs.start, side="right")
        hi = np.searchsorted(key_s, nxt + runs.stop, side="left")
    cnt = np.clip(hi - lo, 0, None)
    tot = int(cnt.sum())
    a = np.repeat(np.arange(nr), cnt)
    off = np.arange(tot) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    b = np.repeat(lo, cnt) + off
    roots, lab = np.unique(component_roots(nr, a, b), return_inverse=True)
    ncomp = len(roots)
    _, first = np.unique(lab, return_index=True)
    rank = np.empty(ncomp, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(ncomp)
    return rank[lab], ncomp


def runs_to_boxes(runs: HeatmapRuns, *, connectivity: int = 8, method: str = "reduce") -> list[np.ndarray]:
    """Boxes of the connected components of each map's runs.

    Parameters
    ----------
    runs : HeatmapRuns
    connectivity : {8, 4}, default=8
    method : {'reduce', 'pixels'}, default='reduce'
        How a component's box is read from its runs: ``'reduce'`` takes minima and maxima of the run
        extents per component (as ``find_objects`` does per label); ``'pixels'`` sorts the component's
        end pixels and reads the first and last (as ``regionprops``' ``bbox`` does from coordinates).
        Both give the same boxes; the second exists as a check.

    Returns
    -------
    boxes : list of ndarray of shape (k, 4), int64
        Per map, ``(x_min, y_min, x_max, y_max)`` in the raster order of each component's first pixel.
    """
    if connectivity not in CONNECTIVITY:
        raise InvalidParameterError(
            f"The 'connectivity' parameter must be 8 or 4. Got {connectivity!r} instead."
        )
    comp, nc = _run_components(runs, connectivity)
    if method == "reduce":
        big = np.iinfo(np.int64).max
        x0 = np.full(nc, big)
        y0 = np.full(nc, big)
        x1 = np.full(nc, -1)
        y1 = np.full(nc, -1)
        np.minimum.at(x0, comp, runs.start)
        np.minimum.at(y0, comp, runs.row)
        np.maximum.at(x1, comp, runs.stop)
        np.maximum.at(y1, comp, runs.row + 1)
    elif method == "pixels":
        # coordinates of each run's first and last pixel, grouped by component
        cc = np.r_[comp, comp]
        xs = np.r_[runs.start, runs.stop - 1]
        ys = np.r_[runs.row, runs.row]
        order_x = np.lexsort((xs, cc))
        order_y = np.lexsort((ys, cc))
        bounds = np.searchsorted(cc[order_x], np.arange(nc + 1))
        x0, x1 = xs[order_x][bounds[:-1]], xs[order_x][bounds[1:] - 1] + 1
        bounds_y = np.searchsorted(cc[order_y], np.arange(nc + 1))
        y0, y1 = ys[order_y][bounds_y[:-1]], ys[order_y][bounds_y[1:] - 1] + 1
    else:
        raise InvalidParameterError(
            f"The 'method' parameter must be 'reduce' or 'pixels'. Got {method!r} instead."
        )
    boxes = np.stack([x0, y0, x1, y1], axis=1).astype(np.int64) if nc else np.zeros((0, 4), np.int64)
    cmap = np.zeros(nc, dtype=np.int64)
    cmap[comp] = runs.map_index
    cuts = np.searchsorted(cmap, np.arange(runs.n_maps + 1))
    return [boxes[cuts[k] : cuts[k + 1]] for k in range(runs.n_maps)]
