"""Centred-grid upsampling of heatmaps, min-max normalisation, dense thresholding and labelling.

The geometry of the ChestX-ray8 box protocol (see :mod:`cxreval.localization`):

* ``upsampling='bilinear'``: the centred grid (pixel ``j`` of ``n_out`` sits at ``x = (j + 0.5) n_in / n_out
  - 0.5`` in map coordinates), edge values held; this is scikit-image's ``resize(order=1, mode='edge')``.
* ``upsampling='nearest'``: pixel ``j`` takes the map cell that contains its centre,
  ``floor((j + 0.5) n_in / n_out)``; for an integer factor this is pixel replication.

Upsampling is separable: :func:`interpolation_matrix` gives one axis as a matrix, :func:`grid_axis` as
the two map indices and the weight of each output pixel, evaluated in the two-point difference form
``a + (b - a) t``. :func:`upsample`, :func:`threshold_mask` and :func:`mask_boxes` are the dense path
(one map at a time); cxreval's box generation (:mod:`._heatmap_runs`) never builds the dense map.

Examples
--------
>>> upsample(np.array([[0.0, 1.0]]), (1, 4)).tolist()
[[0.0, 0.25, 0.75, 1.0]]
>>> interpolation_matrix(2, 4).tolist()
[[1.0, 0.0], [0.75, 0.25], [0.25, 0.75], [0.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice, float_array, is_number
from ..exceptions import InvalidParameterError, SchemaError

__all__ = [
    "UPSAMPLING",
    "check_finite",
    "CONNECTIVITY",
    "GridAxis",
    "grid_axis",
    "interpolation_matrix",
    "check_heatmaps",
    "check_image_shape",
    "check_threshold",
    "upsample_rows",
    "upsample",
    "normalize_heatmap",
    "threshold_mask",
    "mask_boxes",
]

UPSAMPLING: tuple[str, ...] = ("bilinear", "nearest")
CONNECTIVITY: tuple[int, ...] = (8, 4)


@dataclass(frozen=True)
class GridAxis:
    """One axis of the separable upsampling: ``out[j] = in[i0] + (in[i1] - in[i0]) * t`` (bilinear).

    ``seg_lo`` / ``seg_hi`` delimit the *segments* of output pixels that share ``i0`` (and ``i1``);
    ``seg_i0`` / ``seg_i1`` are their map indices. Arrays are read-only (the object is cached).
    """

    i0: np.ndarray
    i1: np.ndarray
    t: np.ndarray
    seg_lo: np.ndarray  # first output index of each segment (pixels sharing i0)
    seg_hi: np.ndarray  # one past the last
    seg_i0: np.ndarray
    seg_i1: np.ndarray


@lru_cache(maxsize=64)
def grid_axis(n_in: int, n_out: int, method: str) -> GridAxis:
    """The centred-grid axis ``n_in -> n_out`` for ``method`` ('bilinear' or 'nearest'), cached."""
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
    ax = GridAxis(i0, i1, t, starts, stops, i0[starts], i1[starts])
    for a in (ax.i0, ax.i1, ax.t, ax.seg_lo, ax.seg_hi, ax.seg_i0, ax.seg_i1):
        a.setflags(write=False)
    return ax


def interpolation_matrix(n_in: int, n_out: int, *, method: str = "bilinear") -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of one axis of the separable upsampling.

    ``upsample(M) == R @ M @ C.T`` up to rounding, with ``R = interpolation_matrix(h, H)`` and
    ``C = interpolation_matrix(w, W)``; every row has at most two non-zero weights summing to 1.
    """
    check_choice(method, UPSAMPLING, name="method", func="interpolation_matrix")
    ax = grid_axis(int(n_in), int(n_out), method)
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.arange(n_out), ax.i0), 1.0 - ax.t)
    np.add.at(m, (np.arange(n_out), ax.i1), ax.t)
    return m


def check_heatmaps(heatmaps: ArrayLike, *, name: str = "heatmap", batch: bool = False) -> np.ndarray:
    """Validate one map (2-D) or a batch of maps (3-D) of finite values; return a float array.

    Raises
    ------
    SchemaError
        If the array does not have 2 (or, with ``batch``, 3) dimensions, is empty, or holds NaN or inf.
    """
    a = float_array(heatmaps, SchemaError(f"'{name}' must be a numeric array."))
    want = 3 if batch else 2
    if a.ndim != want:
        raise SchemaError(
            f"'{name}' must be a {want}-D array ({'maps, ' if batch else ''}rows, columns); "
            f"got shape {a.shape}."
        )
    if a.size == 0:
        raise SchemaError(f"'{name}' is empty; got shape {a.shape}.")
    check_finite(a, name)
    return a


def check_finite(a: np.ndarray, name: str) -> None:
    """Refuse an array holding NaN or inf, naming the first such value's index and how many there are."""
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(v) for v in np.argwhere(bad)[0])
        raise SchemaError(
            f"'{name}' must be finite; found {float(a[idx])!r} at index {idx} "
            f"({int(bad.sum())} non-finite value(s))."
        )


def check_image_shape(image_shape: Sequence[int]) -> tuple[int, int]:
    """``(height, width)`` as positive ints, or :class:`InvalidParameterError`."""
    try:
        h, w = (int(v) for v in image_shape)
        ok = h >= 1 and w >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidParameterError(
            f"The 'image_shape' parameter must be (height, width) of positive ints. "
            f"Got {image_shape!r} instead."
        )
    return h, w


def check_threshold(thr: float) -> float:
    """A threshold on the normalised ``[0, 255]`` scale as float, or :class:`InvalidParameterError`."""
    if not is_number(thr) or not (0 <= float(thr) <= 255):
        raise InvalidParameterError(
            f"A heatmap threshold must be a number in [0, 255] (the normalised "
            f"intensity scale). Got {thr!r} instead."
        )
    return float(thr)


def upsample_rows(maps: np.ndarray, ax: GridAxis) -> np.ndarray:
    """First axis of the separable upsampling for a batch ``(n, h, w) -> (n, H, w)``."""
    a = maps[:, ax.i0, :]
    return a + (maps[:, ax.i1, :] - a) * ax.t[None, :, None]


def upsample(
    heatmap: ArrayLike, image_shape: tuple[int, int] = (1024, 1024), *, upsampling: str = "bilinear"
) -> np.ndarray:
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
    H, W = check_image_shape(image_shape)
    rax, cax = grid_axis(hm.shape[0], H, upsampling), grid_axis(hm.shape[1], W, upsampling)
    if upsampling == "nearest":
        return hm[rax.i0][:, cax.i0]
    v = upsample_rows(hm[None], rax)[0]
    a = v[:, cax.i0]
    return a + (v[:, cax.i1] - a) * cax.t[None, :]


def normalize_heatmap(up: ArrayLike) -> np.ndarray:
    """Min-max rescaling to ``[0, 255]`` as float: ``255 * (up - min) / (max - min)``; zeros if constant."""
    a = np.asarray(up, dtype=float)
    mn, mx = a.min(), a.max()
    if mx == mn:
        return np.zeros_like(a)
    return 255 * (a - mn) / (mx - mn)


def threshold_mask(
    heatmap: ArrayLike,
    image_shape: tuple[int, int] = (1024, 1024),
    *,
    upsampling: str = "bilinear",
    threshold: float = 60.0,
    strict: bool = True,
) -> np.ndarray:
    """Dense boolean region of one map: normalised upsampled map ``> threshold`` (or ``>=``)."""
    thr = check_threshold(threshold)
    up = upsample(heatmap, image_shape, upsampling=upsampling)
    if up.max() == up.min():
        return np.zeros(up.shape, dtype=bool)
    norm = normalize_heatmap(up)
    return norm > thr if strict else norm >= thr


def mask_boxes(mask: ArrayLike, *, connectivity: int = 8) -> np.ndarray:
    """Boxes ``(x_min, y_min, x_max, y_max)`` of the connected components of a dense 2-D mask.

    The dense path (``scipy.ndimage.label`` + ``find_objects``), in label (raster) order; cxreval's
    fast path gives the same boxes without building the mask.
    """
    from scipy import ndimage

    if connectivity not in CONNECTIVITY:
        raise InvalidParameterError(
            f"The 'connectivity' parameter must be 8 or 4. Got {connectivity!r} instead."
        )
    st = np.ones((3, 3)) if connectivity == 8 else None
    lab, _ = ndimage.label(np.asarray(mask, dtype=bool), structure=st)
    sl = ndimage.find_objects(lab)
    return np.array([(s[1].start, s[0].start, s[1].stop, s[0].stop) for s in sl], dtype=np.int64).reshape(
        -1, 4
    )
