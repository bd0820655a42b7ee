"""Heatmaps to boxes: centred-grid upsampling, min-max normalisation, thresholds, connected components.

The ChestX-ray8 protocol (Wang et al., 2017) turns an ``s x s`` class map into boxes: upsample it to the
image size, rescale its intensities to ``[0, 255]``, threshold (at 60 and at 180), and draw a box around
each connected component. The paper leaves the upsampling and connectivity open; cxreval offers:

* ``upsampling='bilinear'``: the centred grid (pixel ``j`` of ``n_out`` sits at ``x = (j + 0.5) n_in / n_out
  - 0.5`` in map coordinates), edge values held; this is scikit-image's ``resize(order=1, mode='edge')``.
* ``upsampling='nearest'``: pixel ``j`` takes the map cell that contains its centre,
  ``floor((j + 0.5) n_in / n_out)``; for an integer factor this is pixel replication.

The normalised map is ``255 * (up - min) / (max - min)`` in floating point, not rounded; a pixel is in the
region when it is ``> threshold`` (``>=`` with ``strict=False``). A constant map has no region.

Design
------
Upsampling is separable: the image is ``R M C^T`` with ``R`` of shape ``(H, h)`` and ``C`` of shape
``(W, w)`` (see :func:`interpolation_matrix`), each row holding two non-zero weights. cxreval evaluates
each product in the two-point difference form ``a + (b - a) t`` along each axis. Along an image row the
value between two neighbouring map centres is then ``A + D t_j`` with ``t_j`` increasing, which IEEE
rounding keeps monotone in ``t_j``; so is the normalisation. Each such *row segment* (32 pixels for a
32 -> 1024 map) is therefore either empty, full, or one run at one end, found exactly by testing its two end
pixels and a binary search over the few segments that cross the threshold. The runs are merged, linked to
the runs of the next row that touch them (8- or 4-connectivity), and the connected components of that
small graph (``scipy.sparse.csgraph``) give the boxes, ordered by their first pixel in raster order like
``scipy.ndimage.label`` + ``find_objects``. No Python loop runs over pixels, maps are processed in
batches, and the boxes equal those of thresholding and labelling the dense map that :func:`upsample`
returns. Nearest upsampling needs no runs at all: its components are the components of the thresholded
map itself, each cell stretched to its pixel block.

Examples
--------
>>> import numpy as np
>>> hm = np.zeros((4, 4)); hm[1, 1] = 1.0
>>> heatmap_boxes(hm, image_shape=(8, 8), upsampling="nearest", threshold=60).tolist()
[[2, 2, 4, 4]]
>>> heatmap_boxes(np.ones((4, 4)), image_shape=(8, 8)).shape   # a constant map has no region
(0, 4)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import ndimage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import get_executor

__all__ = [
    "UPSAMPLING",
    "CONNECTIVITY",
    "interpolation_matrix",
    "upsample",
    "normalize_heatmap",
    "threshold_mask",
    "mask_boxes",
    "check_heatmaps",
    "heatmap_boxes",
    "heatmaps_to_boxes",
    "heatmap_peaks",
    "HeatmapRuns",
    "heatmap_runs",
    "runs_to_boxes",
]

UPSAMPLING: tuple[str, ...] = ("bilinear", "nearest")
CONNECTIVITY: tuple[int, ...] = (8, 4)
_BATCH = 16
_CHUNK = 4 * _BATCH  # maps per executor task


@dataclass(frozen=True)
class _Axis:
    """One axis of the separable upsampling: ``out[j] = in[i0] + (in[i1] - in[i0]) * t`` (bilinear)."""

    i0: np.ndarray
    i1: np.ndarray
    t: np.ndarray
    seg_lo: np.ndarray     # first output index of each segment (pixels sharing i0)
    seg_hi: np.ndarray     # one past the last
    seg_i0: np.ndarray
    seg_i1: np.ndarray


@lru_cache(maxsize=64)
def _axis(n_in: int, n_out: int, method: str) -> _Axis:
    j = np.arange(n_out)
    if method == "bilinear":
        x = (j + 0.5) * n_in / n_out - 0.5
        i0 = np.clip(np.floor(x).astype(np.int64), 0, n_in - 1)
        i1 = np.clip(i0 + 1, 0, n_in - 1)
        t = np.clip(x - i0, 0.0, 1.0)
    else:
        i0 = np.minimum(((2 * j + 1) * n_in) // (2 * n_out), n_in - 1).astype(np.int64)
        i1 = i0.copy()
        t = np.zeros(n_out)
    starts = np.flatnonzero(np.r_[True, i0[1:] != i0[:-1]])
    stops = np.r_[starts[1:], n_out]
    ax = _Axis(i0, i1, t, starts, stops, i0[starts], i1[starts])
    for a in (ax.i0, ax.i1, ax.t, ax.seg_lo, ax.seg_hi, ax.seg_i0, ax.seg_i1):
        a.setflags(write=False)
    return ax


def interpolation_matrix(n_in: int, n_out: int, *, method: str = "bilinear") -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of one axis of the separable upsampling.

    ``upsample(M) == R @ M @ C.T`` up to rounding, with ``R = interpolation_matrix(h, H)`` and
    ``C = interpolation_matrix(w, W)``; every row has at most two non-zero weights summing to 1.
    """
    check_choice(method, UPSAMPLING, name="method", func="interpolation_matrix")
    ax = _axis(int(n_in), int(n_out), method)
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.arange(n_out), ax.i0), 1.0 - ax.t)
    np.add.at(m, (np.arange(n_out), ax.i1), ax.t)
    return m


def check_heatmaps(heatmaps: object, *, name: str = "heatmap", batch: bool = False) -> np.ndarray:
    """Validate one map (2-D) or a batch of maps (3-D) of finite values; return a float array.

    Raises
    ------
    SchemaError
        If the array does not have 2 (or, with ``batch``, 3) dimensions, is empty, or holds NaN or inf.
    """
    try:
        a = np.asarray(heatmaps, dtype=float)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"'{name}' must be a numeric array.") from exc
    want = 3 if batch else 2
    if a.ndim != want:
        raise SchemaError(f"'{name}' must be a {want}-D array ({'maps, ' if batch else ''}rows, columns); "
                          f"got shape {a.shape}.")
    if a.size == 0:
        raise SchemaError(f"'{name}' is empty; got shape {a.shape}.")
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(v) for v in np.argwhere(bad)[0])
        raise SchemaError(f"'{name}' must be finite; found {float(a[idx])!r} at index {idx} "
                          f"({int(bad.sum())} non-finite value(s)).")
    return a


def _check_shape(image_shape: object) -> tuple[int, int]:
    try:
        h, w = (int(v) for v in image_shape)  # type: ignore[attr-defined]
        ok = h >= 1 and w >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidParameterError(f"The 'image_shape' parameter must be (height, width) of positive ints. "
                                    f"Got {image_shape!r} instead.")
    return h, w


def _check_threshold(thr: object) -> float:
    if isinstance(thr, bool) or not isinstance(thr, (int, float, np.integer, np.floating)) or not (
            0 <= float(thr) <= 255):
        raise InvalidParameterError(f"A heatmap threshold must be a number in [0, 255] (the normalised "
                                    f"intensity scale). Got {thr!r} instead.")
    return float(thr)


def _rows(maps: np.ndarray, ax: _Axis) -> np.ndarray:
    """First axis of the separable upsampling for a batch ``(n, h, w) -> (n, H, w)``."""
    a = maps[:, ax.i0, :]
    return a + (maps[:, ax.i1, :] - a) * ax.t[None, :, None]


def upsample(heatmap: object, image_shape: tuple[int, int] = (1024, 1024), *,
             upsampling: str = "bilinear") -> np.ndarray:
    """Upsample one map to ``image_shape`` on the centred grid (dense, float).

    Parameters
    ----------
    heatmap : array-like of shape (h, w)
    image_shape : (height, width), default=(1024, 1024)
    upsampling : {'bilinear', 'nearest'}, default='bilinear'

    Returns
    -------
    up : ndarray of shape image_shape
    """
    check_choice(upsampling, UPSAMPLING, name="upsampling", func="upsample")
    hm = check_heatmaps(heatmap)
    H, W = _check_shape(image_shape)
    rax, cax = _axis(hm.shape[0], H, upsampling), _axis(hm.shape[1], W, upsampling)
    if upsampling == "nearest":
        return hm[rax.i0][:, cax.i0]
    v = _rows(hm[None], rax)[0]
    a = v[:, cax.i0]
    return a + (v[:, cax.i1] - a) * cax.t[None, :]


def normalize_heatmap(up: object) -> np.ndarray:
    """Min-max rescaling to ``[0, 255]`` as float: ``255 * (up - min) / (max - min)``; zeros if constant."""
    a = np.asarray(up, dtype=float)
    mn, mx = a.min(), a.max()
    if mx == mn:
        return np.zeros_like(a)
    return 255 * (a - mn) / (mx - mn)


def threshold_mask(heatmap: object, image_shape: tuple[int, int] = (1024, 1024), *,
                   upsampling: str = "bilinear", threshold: float = 60.0, strict: bool = True) -> np.ndarray:
    """Dense boolean region of one map: normalised upsampled map ``> threshold`` (or ``>=``)."""
    thr = _check_threshold(threshold)
    up = upsample(heatmap, image_shape, upsampling=upsampling)
    if up.max() == up.min():
        return np.zeros(up.shape, dtype=bool)
    norm = normalize_heatmap(up)
    return norm > thr if strict else norm >= thr


def mask_boxes(mask: object, *, connectivity: int = 8) -> np.ndarray:
    """Boxes ``(x_min, y_min, x_max, y_max)`` of the connected components of a dense 2-D mask.

    The dense path (``scipy.ndimage.label`` + ``find_objects``), in label (raster) order; cxreval's
    fast path gives the same boxes without building the mask.
    """
    if connectivity not in CONNECTIVITY:
        raise InvalidParameterError(f"The 'connectivity' parameter must be 8 or 4. Got {connectivity!r} instead.")
    st = np.ones((3, 3)) if connectivity == 8 else None
    lab, _ = ndimage.label(np.asarray(mask, dtype=bool), structure=st)
    sl = ndimage.find_objects(lab)
    return np.array([(s[1].start, s[0].start, s[1].stop, s[0].stop) for s in sl], dtype=np.int64).reshape(-1, 4)


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
        return np.bincount(self.map_index, weights=self.stop - self.start, minlength=self.n_maps).astype(np.int64)


_EPS = np.finfo(float).eps


def _seg_values(v: np.ndarray, cax: _Axis) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``A``, ``D`` and the values at both end pixels of every column segment of the rows ``v``."""
    A = v[..., cax.seg_i0]
    D = v[..., cax.seg_i1] - A
    return A, D, A + D * cax.t[cax.seg_lo], A + D * cax.t[cax.seg_hi - 1]


def _v_at(maps: np.ndarray, m: np.ndarray, r: np.ndarray, c: np.ndarray, rax: _Axis) -> np.ndarray:
    """Row-interpolated values ``V[m, r, c]`` (the same float operations as :func:`_rows`)."""
    a = maps[m, rax.i0[r], c]
    return a + (maps[m, rax.i1[r], c] - a) * rax.t[r]


def _block_rows(m_i: np.ndarray, b_i: np.ndarray, s_i: np.ndarray, rax: _Axis) -> tuple[np.ndarray, ...]:
    """Expand blocks ``(map, band, segment)`` to one entry per image row of the band."""
    blo, bhi = rax.seg_lo, rax.seg_hi
    nrow = (bhi - blo)[b_i]
    tot = int(nrow.sum())
    rr = np.repeat(blo[b_i] - np.cumsum(nrow) + nrow, nrow) + np.arange(tot)
    return np.repeat(m_i, nrow), rr, np.repeat(s_i, nrow)


@dataclass(frozen=True)
class _Prep:
    rax: _Axis
    cax: _Axis
    bmin: np.ndarray      # (n, nb, ns) min / max of each block's four corner pixels
    bmax: np.ndarray
    mn: np.ndarray        # (n,) exact min / max over all pixels
    mx: np.ndarray
    err: np.ndarray       # (n,) bound on the float error of a pixel value
    top_rows: tuple       # rows (map, row, value) of the blocks that may hold the maximum


def _prep(maps: np.ndarray, H: int, W: int) -> _Prep:
    """Corner values of every block and the exact pixel min and max of each map.

    A block is a band of rows between two map rows times a column segment. In exact arithmetic a
    bilinear patch takes its extremes at its corners; the float pixel values differ from the exact
    ones by at most ``err``. So only blocks whose corners come within ``2 err`` of a map's extreme can
    hold a pixel beyond the corners' extreme, and only their rows are evaluated (at the two end pixels
    of the segment, where the monotone rows take their extremes). Blocks whose four map values are
    equal are flat: every pixel equals the corner value exactly.
    """
    n, h, w = maps.shape
    rax, cax = _axis(h, H, "bilinear"), _axis(w, W, "bilinear")
    nb, ns = rax.seg_lo.size, cax.seg_lo.size
    blo, bhi = rax.seg_lo, rax.seg_hi
    amax = np.abs(maps).max(axis=(1, 2))
    err = 16 * _EPS * amax + np.finfo(float).tiny
    crow = np.stack([blo, bhi - 1], axis=1).ravel()                    # (2 nb,)
    a = maps[:, rax.i0[crow], :]
    vc = a + (maps[:, rax.i1[crow], :] - a) * rax.t[crow][None, :, None]
    _, _, c_lo, c_hi = _seg_values(vc, cax)                           # (n, 2nb, ns)
    corners = np.stack([c_lo, c_hi], axis=-1).reshape(n, nb, 2, ns, 2)
    bmin = corners.min(axis=(2, 4))
    bmax = corners.max(axis=(2, 4))
    cmin, cmax = bmin.min(axis=(1, 2)), bmax.max(axis=(1, 2))
    r0, r1 = rax.seg_i0, rax.seg_i1
    c0, c1 = cax.seg_i0, cax.seg_i1
    q00 = maps[:, r0][:, :, c0]
    flat = ((q00 == maps[:, r0][:, :, c1]) & (q00 == maps[:, r1][:, :, c0]) & (q00 == maps[:, r1][:, :, c1]))
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
    return _Prep(rax, cax, bmin, bmax, mn, mx, err, top)


def _bilinear_runs(maps: np.ndarray, H: int, W: int, thresholds: list[float], strict: bool,
                   offset: int = 0) -> list[tuple]:
    """Runs of a batch, one tuple ``(map, row, start, stop)`` of arrays per threshold (unsorted, unmerged).
    ``offset``: the position of the batch's first map in the caller's input (for error messages).

    Blocks whose four corner pixels lie clearly on one side of the threshold are decided at once (see
    :func:`_prep`); only the rows of the remaining blocks are searched, segment by segment, with the
    exact float formula.
    """
    n = maps.shape[0]
    pr = _prep(maps, H, W)
    rax, cax, bmin, bmax, mn, mx, err = pr.rax, pr.cax, pr.bmin, pr.bmax, pr.mn, pr.mx, pr.err
    nb, ns = rax.seg_lo.size, cax.seg_lo.size
    blo, bhi = rax.seg_lo, rax.seg_hi
    rng_ = mx - mn
    if not np.isfinite(rng_).all():
        i = int(np.flatnonzero(~np.isfinite(rng_))[0])
        raise SchemaError(f"heatmap {offset + i}: its value range {mn[i]!r}..{mx[i]!r} overflows float64 "
                          "(max - min is not finite); rescale the map.")
    const = rng_ == 0
    safe = np.where(const, 1.0, rng_)
    out = []
    for thr in thresholds:
        ustar = mn + thr * safe / 255                                   # boundary in map units
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
        runs.append((np.repeat(m_i, nrow), rr, np.repeat(cax.seg_lo[s_i], nrow), np.repeat(cax.seg_hi[s_e], nrow)))
        # mixed blocks: search every row of the band
        m_i, b_i, s_i = np.nonzero(~above & ~below)
        if m_i.size:
            mm, rr, ss = _block_rows(m_i, b_i, s_i, rax)
            A = _v_at(maps, mm, rr, cax.seg_i0[ss], rax)
            D = _v_at(maps, mm, rr, cax.seg_i1[ss], rax) - A
            lo, hi = cax.seg_lo[ss], cax.seg_hi[ss] - 1
            mnp, rp = mn[mm], safe[mm]

            def is_above(j: np.ndarray, A=A, D=D, mnp=mnp, rp=rp, thr=thr) -> np.ndarray:  # noqa: B008
                val = 255 * (A + D * cax.t[j] - mnp) / rp
                return (val > thr) if strict else (val >= thr)

            a_lo, a_hi = is_above(lo) & ~const[mm], is_above(hi) & ~const[mm]
            full = a_lo & a_hi
            runs.append((mm[full], rr[full], lo[full], hi[full] + 1))
            part = a_lo != a_hi
            if part.any():
                A, D, mnp, rp = A[part], D[part], mnp[part], rp[part]
                inc = a_hi[part]                                       # increasing: region is a suffix
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
                runs.append((mm[part], rr[part], np.where(inc, t_true, lo_p), np.where(inc, hi_p + 1, t_true + 1)))
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


def heatmap_runs(heatmaps: object, image_shape: tuple[int, int] = (1024, 1024), *,
                 thresholds: tuple[float, ...] = (60.0, 180.0), strict: bool = True) -> list[HeatmapRuns]:
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
    H, W = _check_shape(image_shape)
    thr = [_check_threshold(t) for t in thresholds]
    return _heatmap_runs(maps, H, W, thr, strict)


def _heatmap_runs(maps: np.ndarray, H: int, W: int, thr: list[float], strict: bool,
                  offset: int = 0) -> list[HeatmapRuns]:
    """:func:`heatmap_runs` on validated arguments (``offset`` as in :func:`_bilinear_runs`)."""
    parts: list[list[tuple]] = [[] for _ in thr]
    for b0 in range(0, maps.shape[0], _BATCH):
        for k, r in enumerate(_bilinear_runs(maps[b0:b0 + _BATCH], H, W, thr, strict, offset + b0)):
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
    if connectivity == 8:       # touching incl. diagonals: start_b <= stop_a and stop_b >= start_a
        lo = np.searchsorted(key_e, nxt + runs.start, side="left")
        hi = np.searchsorted(key_s, nxt + runs.stop, side="right")
    else:                       # sharing an edge: start_b < stop_a and stop_b > start_a
        lo = np.searchsorted(key_e, nxt + runs.start, side="right")
        hi = np.searchsorted(key_s, nxt + runs.stop, side="left")
    cnt = np.clip(hi - lo, 0, None)
    tot = int(cnt.sum())
    a = np.repeat(np.arange(nr), cnt)
    off = np.arange(tot) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    b = np.repeat(lo, cnt) + off
    graph = coo_matrix((np.ones(tot, dtype=np.int8), (a, b)), shape=(nr, nr)).tocsr()
    ncomp, lab = connected_components(graph, directed=False)
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
        raise InvalidParameterError(f"The 'connectivity' parameter must be 8 or 4. Got {connectivity!r} instead.")
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
        raise InvalidParameterError(f"The 'method' parameter must be 'reduce' or 'pixels'. Got {method!r} instead.")
    boxes = np.stack([x0, y0, x1, y1], axis=1).astype(np.int64) if nc else np.zeros((0, 4), np.int64)
    cmap = np.zeros(nc, dtype=np.int64)
    cmap[comp] = runs.map_index
    cuts = np.searchsorted(cmap, np.arange(runs.n_maps + 1))
    return [boxes[cuts[k]:cuts[k + 1]] for k in range(runs.n_maps)]


def _nearest_boxes(maps: np.ndarray, H: int, W: int, thresholds: list[float], strict: bool,
                   connectivity: int, offset: int = 0) -> list[list[np.ndarray]]:
    n, h, w = maps.shape
    rax, cax = _axis(h, H, "nearest"), _axis(w, W, "nearest")
    cm = maps[:, rax.seg_i0][:, :, cax.seg_i0]                  # the cells that appear, in order
    hh, ww = cm.shape[1:]
    mn, mx = cm.min(axis=(1, 2)), cm.max(axis=(1, 2))
    const = mx == mn
    rng_ = np.where(const, 1.0, mx - mn)
    if not np.isfinite(rng_).all():
        i = int(np.flatnonzero(~np.isfinite(rng_))[0])
        raise SchemaError(f"heatmap {offset + i}: its value range overflows float64 (max - min is not finite); "
                          "rescale it.")
    norm = 255 * (cm - mn[:, None, None]) / rng_[:, None, None]
    st = np.ones((3, 3)) if connectivity == 8 else None
    out = []
    for thr in thresholds:
        m = (norm > thr) if strict else (norm >= thr)
        m &= ~const[:, None, None]
        stacked = np.zeros((n, hh + 1, ww), dtype=bool)          # a blank row keeps maps apart
        stacked[:, :hh] = m
        lab, _ = ndimage.label(stacked.reshape(n * (hh + 1), ww), structure=st)
        sl = ndimage.find_objects(lab)
        per: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]
        for s in sl:
            k, r0 = divmod(s[0].start, hh + 1)
            r1 = s[0].stop - k * (hh + 1)
            per[k].append((int(cax.seg_lo[s[1].start]), int(rax.seg_lo[r0]),
                           int(cax.seg_hi[s[1].stop - 1]), int(rax.seg_hi[r1 - 1])))
        out.append([np.array(p, dtype=np.int64).reshape(-1, 4) for p in per])
    return out


def heatmaps_to_boxes(heatmaps: object, *, image_shape: tuple[int, int] = (1024, 1024),
                      upsampling: str = "bilinear", thresholds: tuple[float, ...] = (60.0, 180.0),
                      strict: bool = True, connectivity: int = 8, executor: object = None
                      ) -> list[list[np.ndarray]]:
    """Boxes of every map of a batch at every threshold (the protocol's box generation, vectorised).

    Parameters
    ----------
    heatmaps : array-like of shape (n, h, w)
        Finite maps; each is upsampled to ``image_shape``.
    image_shape : (height, width), default=(1024, 1024)
    upsampling : {'bilinear', 'nearest'}, default='bilinear'
    thresholds : tuple of float in [0, 255], default=(60, 180)
    strict : bool, default=True
        Region is ``> threshold`` when true, ``>= threshold`` otherwise.
    connectivity : {8, 4}, default=8
    executor : None, str or Executor, optional
        Default ``None``: the whole batch in this process. Otherwise the maps are cut into chunks of
        ``4 x 16`` maps run by :func:`cxreval.executor.get_executor(executor) <cxreval.executor.get_executor>`
        (``'serial'``, ``'process:N'``, ``'dask[:ADDRESS]'`` or an object with ``map``); every map's boxes
        depend on that map only, so the result is identical.

    Returns
    -------
    boxes : list (per threshold) of list (per map) of ndarray of shape (k, 4), int64
        ``(x_min, y_min, x_max, y_max)``, half-open, in the raster order of each component's first
        pixel. A constant map gives no box.

    Raises
    ------
    SchemaError
        If ``heatmaps`` is not 3-D or holds NaN or inf.
    """
    check_choice(upsampling, UPSAMPLING, name="upsampling", func="heatmaps_to_boxes")
    if connectivity not in CONNECTIVITY:
        raise InvalidParameterError(f"The 'connectivity' parameter must be 8 or 4. Got {connectivity!r} instead.")
    ex = None if executor is None else get_executor(executor)
    maps = check_heatmaps(heatmaps, batch=True)
    H, W = _check_shape(image_shape)
    thr = [_check_threshold(t) for t in thresholds]
    params = (H, W, thr, strict, connectivity, upsampling)
    if ex is None:
        return _boxes_chunk(params, (0, maps))
    items = [(b0, maps[b0:b0 + _CHUNK]) for b0 in range(0, maps.shape[0], _CHUNK)]
    parts = ex.map(functools.partial(_boxes_chunk, params), items)
    return [[b for part in parts for b in part[t]] for t in range(len(thr))]


def _boxes_chunk(params: tuple, item: tuple[int, np.ndarray]) -> list[list[np.ndarray]]:
    """Boxes of one chunk ``(offset, maps)`` of validated maps, per threshold (module level: executors pickle it)."""
    H, W, thr, strict, connectivity, upsampling = params
    offset, maps = item
    if upsampling == "nearest":
        return _nearest_boxes(maps, H, W, thr, strict, connectivity, offset)
    runs = _heatmap_runs(maps, H, W, thr, strict, offset)
    return [runs_to_boxes(r, connectivity=connectivity) for r in runs]


def heatmap_boxes(heatmap: object, *, image_shape: tuple[int, int] = (1024, 1024), upsampling: str = "bilinear",
                  threshold: float = 60.0, strict: bool = True, connectivity: int = 8) -> np.ndarray:
    """Boxes of one map at one threshold; see :func:`heatmaps_to_boxes`.

    Returns
    -------
    boxes : ndarray of shape (k, 4), int64
    """
    hm = check_heatmaps(heatmap)
    return heatmaps_to_boxes(hm[None], image_shape=image_shape, upsampling=upsampling, thresholds=(threshold,),
                             strict=strict, connectivity=connectivity)[0][0]


def heatmap_peaks(heatmaps: object, image_shape: tuple[int, int] = (1024, 1024), *,
                  upsampling: str = "bilinear") -> np.ndarray:
    """Pixel ``(row, column)`` of each map's upsampled maximum (first in raster order, as ``np.argmax``).

    Returns
    -------
    peaks : ndarray of shape (n, 2), int64
    """
    check_choice(upsampling, UPSAMPLING, name="upsampling", func="heatmap_peaks")
    maps = check_heatmaps(heatmaps, batch=True)
    H, W = _check_shape(image_shape)
    n, h, w = maps.shape
    rax, cax = _axis(h, H, upsampling), _axis(w, W, upsampling)
    out = np.zeros((n, 2), dtype=np.int64)
    if upsampling == "nearest":
        for k in range(n):
            r0, c0 = np.unravel_index(np.argmax(maps[k]), (h, w))
            out[k] = (np.searchsorted(rax.i0, r0), np.searchsorted(cax.i0, c0))
        return out
    for b0 in range(0, n, _BATCH):
        chunk = maps[b0:b0 + _BATCH]
        pr = _prep(chunk, H, W)
        mm, rr, v = pr.top_rows
        for k in range(chunk.shape[0]):
            # rows of the corner pixels are candidates too: take the first row that reaches the maximum
            sel = (mm == k) & (v == pr.mx[k])
            rows = list(rr[sel])
            hit = np.nonzero(pr.bmax[k] == pr.mx[k])[0]
            rows += list(rax.seg_lo[hit]) + list(rax.seg_hi[hit] - 1)
            best = None
            for r in sorted(set(int(x) for x in rows)):
                a = chunk[k, rax.i0[r], :] + (chunk[k, rax.i1[r], :] - chunk[k, rax.i0[r], :]) * rax.t[r]
                a0 = a[cax.i0]
                row = a0 + (a[cax.i1] - a0) * cax.t
                if row.max() == pr.mx[k]:
                    best = (r, int(np.argmax(row)))
                    break
            if best is None:        # flat blocks: every pixel of the block equals its corners
                r = int(rax.seg_lo[hit].min())
                a = chunk[k, rax.i0[r], :] + (chunk[k, rax.i1[r], :] - chunk[k, rax.i0[r], :]) * rax.t[r]
                a0 = a[cax.i0]
                best = (r, int(np.argmax(a0 + (a[cax.i1] - a0) * cax.t)))
            out[b0 + k] = best
    return out
