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
The geometry lives in :mod:`._upsampling`, the run-length box generation in :mod:`._heatmap_runs`; this
module runs them over batches of maps (optionally on an executor). In short:
Upsampling is separable: the image is ``R M C^T`` with ``R`` of shape ``(H, h)`` and ``C`` of shape
``(W, w)`` (see :func:`interpolation_matrix`), each row holding two non-zero weights. cxreval evaluates
each product in the two-point difference form ``a + (b - a) t`` along each axis. Along an image row the
value between two neighbouring map centres is then ``A + D t_j`` with ``t_j`` increasing, which IEEE
rounding keeps monotone in ``t_j``; so is the normalisation. Each such *row segment* (32 pixels for a
32 -> 1024 map) is therefore either empty, full, or one run at one end, found exactly by testing its two end
pixels and a binary search over the few segments that cross the threshold. The runs are merged, linked to
the runs of the next row that touch them (8- or 4-connectivity), and the connected components of that
small graph (a vectorised union-find) give the boxes, ordered by their first pixel in raster order like
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
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import ExecutorLike, get_executor
from ..executor._local import OnItem
from ..progress import Progress, as_progress
from ..results import TableResult
from ._heatmap_runs import (
    RUN_BATCH,
    BlockExtremes,
    HeatmapRuns,
    batch_runs,
    block_extremes,
    heatmap_runs,
    runs_to_boxes,
)
from ._upsampling import (
    CONNECTIVITY,
    UPSAMPLING,
    check_heatmaps,
    check_image_shape,
    check_threshold,
    grid_axis,
    interpolation_matrix,
    mask_boxes,
    normalize_heatmap,
    threshold_mask,
    upsample,
)

if TYPE_CHECKING:
    import pandas as pd

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
    "HeatmapBoxesResult",
    "HEATMAP_BOX_COLUMNS",
    "heatmap_peaks",
    "HeatmapRuns",
    "heatmap_runs",
    "runs_to_boxes",
]


_CHUNK = 4 * RUN_BATCH  # maps per executor task

HEATMAP_BOX_COLUMNS: tuple[str, ...] = ("map", "threshold", "box", "x_min", "y_min", "x_max", "y_max")
"""Columns of :attr:`HeatmapBoxesResult.table`: the map's position in the batch, the threshold, the box's
position among that map's boxes at that threshold, and its half-open pixel corners."""


@dataclass(frozen=True)
class HeatmapBoxesResult(TableResult):
    """The boxes of a batch of heat maps at every threshold (:func:`heatmaps_to_boxes`).

    Attributes
    ----------
    boxes : tuple (per threshold) of tuple (per map) of ndarray of shape (k, 4), int64
        ``boxes[t][i]``: the boxes of map ``i`` at ``thresholds[t]``, ``(x_min, y_min, x_max, y_max)``,
        half-open, in the raster order of each component's first pixel (a constant map gives none).
    thresholds : tuple of float
        The thresholds, in the order of ``boxes``.
    image_shape : (int, int)
        ``(height, width)`` the maps were upsampled to.
    n_maps : int
        Maps in the batch.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"heatmap_boxes": "heatmap_boxes.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = HEATMAP_BOX_COLUMNS

    boxes: tuple[tuple[np.ndarray, ...], ...]
    thresholds: tuple[float, ...]
    image_shape: tuple[int, int]
    n_maps: int

    @property
    def table(self) -> pd.DataFrame:
        """Every box as a row (:data:`HEATMAP_BOX_COLUMNS`), by threshold, then map, then box."""
        import pandas as pd

        parts = [(ti, i, b) for ti, per in enumerate(self.boxes) for i, b in enumerate(per) if len(b)]
        if not parts:
            return pd.DataFrame(
                {c: pd.Series(dtype=float if c == "threshold" else np.int64) for c in HEATMAP_BOX_COLUMNS}
            )
        xy = np.concatenate([b for _, _, b in parts]).astype(np.int64)
        n = [len(b) for _, _, b in parts]
        return pd.DataFrame(
            {
                "map": np.repeat([i for _, i, _ in parts], n).astype(np.int64),
                "threshold": np.repeat([float(self.thresholds[ti]) for ti, _, _ in parts], n),
                "box": np.concatenate([np.arange(k) for k in n]).astype(np.int64),
                "x_min": xy[:, 0],
                "y_min": xy[:, 1],
                "x_max": xy[:, 2],
                "y_max": xy[:, 3],
            }
        )

    def counts(self) -> pd.DataFrame:
        """Boxes per map at each threshold: ``map, threshold, n_boxes`` (zeros included)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"map": i, "threshold": float(t), "n_boxes": len(b)}
                for t, per in zip(self.thresholds, self.boxes)
                for i, b in enumerate(per)
            ],
            columns=["map", "threshold", "n_boxes"],
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "n_maps": int(self.n_maps),
            "thresholds": [float(t) for t in self.thresholds],
            "image_shape": list(self.image_shape),
            "n_boxes": {
                f"{t:g}": int(sum(len(b) for b in per)) for t, per in zip(self.thresholds, self.boxes)
            },
        }

    def summary(self, title: str = "Heat-map boxes") -> str:
        """Maps, thresholds and boxes per threshold, as Markdown."""
        n = {f"{t:g}": int(sum(len(b) for b in per)) for t, per in zip(self.thresholds, self.boxes)}
        return (
            f"# {title}\n\n{self.n_maps} map(s) upsampled to {self.image_shape[0]} x {self.image_shape[1]}; "
            + "; ".join(f"threshold {t}: {k} box(es)" for t, k in n.items())
            + "\n"
        )

    def _figure(self) -> Any:
        """The number of boxes per map, one bar group per threshold."""
        from .._plots import bars

        c = self.counts().assign(threshold=lambda d: d["threshold"].map("{:g}".format))
        return bars(
            c,
            x="map",
            y="n_boxes",
            color="threshold",
            title="Boxes per heat map and threshold",
            y_title="boxes",
        )


def _nearest_boxes(
    maps: np.ndarray,
    H: int,
    W: int,
    thresholds: list[float],
    strict: bool,
    connectivity: int,
    offset: int = 0,
) -> list[list[np.ndarray]]:
    """Nearest upsampling repeats each cell over a block of pixels, so the region's components are those of the
    thresholded cells: their runs, linked as the pixel runs are (:func:`runs_to_boxes`), give the boxes in
    cells, mapped to the blocks' pixel edges (raster order is kept, the blocks' edges being increasing)."""
    n, h, w = maps.shape
    rax, cax = grid_axis(h, H, "nearest"), grid_axis(w, W, "nearest")
    cm = maps[:, rax.seg_i0][:, :, cax.seg_i0]  # the cells that appear, in order
    hh, ww = cm.shape[1:]
    mn, mx = cm.min(axis=(1, 2)), cm.max(axis=(1, 2))
    const = mx == mn
    rng_ = np.where(const, 1.0, mx - mn)
    if not np.isfinite(rng_).all():
        i = int(np.flatnonzero(~np.isfinite(rng_))[0])
        raise SchemaError(
            f"heatmap {offset + i}: its value range overflows float64 (max - min is not finite); rescale it."
        )
    norm = 255 * (cm - mn[:, None, None]) / rng_[:, None, None]
    out = []
    for thr in thresholds:
        m = (norm > thr) if strict else (norm >= thr)
        m &= ~const[:, None, None]
        pad = np.zeros((n, hh, ww + 2), dtype=np.int8)
        pad[:, :, 1:-1] = m
        edge = np.diff(pad, axis=2)
        k, r, c0 = np.nonzero(edge == 1)  # runs of cells, by map, row and start
        c1 = np.nonzero(edge == -1)[2]
        cells = HeatmapRuns(
            k.astype(np.int64), r.astype(np.int64), c0.astype(np.int64), c1.astype(np.int64), n, (hh, ww)
        )
        boxes = []
        for b in runs_to_boxes(cells, connectivity=connectivity):
            boxes.append(
                np.stack(
                    [
                        cax.seg_lo[b[:, 0]],
                        rax.seg_lo[b[:, 1]],
                        cax.seg_hi[b[:, 2] - 1],
                        rax.seg_hi[b[:, 3] - 1],
                    ],
                    axis=1,
                )
                .astype(np.int64)
                .reshape(-1, 4)
            )
        out.append(boxes)
    return out


def heatmaps_to_boxes(
    heatmaps: ArrayLike,
    *,
    image_shape: tuple[int, int] = (1024, 1024),
    upsampling: str = "bilinear",
    thresholds: tuple[float, ...] = (60.0, 180.0),
    strict: bool = True,
    connectivity: int = 8,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> HeatmapBoxesResult:
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
    progress : Progress, optional
        A task counting the maps whose boxes are in (:class:`cxreval.progress.Progress`), advanced chunk by chunk.

    Returns
    -------
    res : HeatmapBoxesResult
        ``res.boxes[t][i]``: the boxes of map ``i`` at ``thresholds[t]``, an ndarray of shape (k, 4), int64,
        ``(x_min, y_min, x_max, y_max)``, half-open, in the raster order of each component's first pixel (a
        constant map gives no box); ``res.table`` lists them one row per box.

    Raises
    ------
    SchemaError
        If ``heatmaps`` is not 3-D or holds NaN or inf.
    """
    prog = as_progress(progress, func="heatmaps_to_boxes")
    task = prog.add("heatmaps -> boxes (maps)")
    res = batch_boxes(
        heatmaps,
        image_shape=image_shape,
        upsampling=upsampling,
        thresholds=thresholds,
        strict=strict,
        connectivity=connectivity,
        executor=executor,
        on_item=lambda x: prog.advance(task, len(x[1])),
    )
    prog.done(task)
    return res


def batch_boxes(
    heatmaps: ArrayLike,
    *,
    image_shape: tuple[int, int],
    upsampling: str,
    thresholds: tuple[float, ...],
    strict: bool,
    connectivity: int,
    executor: ExecutorLike,
    on_item: OnItem | None,
) -> HeatmapBoxesResult:
    """:func:`heatmaps_to_boxes`, calling ``on_item`` with each chunk ``(offset, maps)`` once its boxes are in (as
    :meth:`cxreval.executor.Executor.map` does; without an executor, once with the whole batch)."""
    check_choice(upsampling, UPSAMPLING, name="upsampling", func="heatmaps_to_boxes")
    if connectivity not in CONNECTIVITY:
        raise InvalidParameterError(
            f"The 'connectivity' parameter must be 8 or 4. Got {connectivity!r} instead."
        )
    ex = None if executor is None else get_executor(executor)
    maps = check_heatmaps(heatmaps, batch=True)
    H, W = check_image_shape(image_shape)
    thr = [check_threshold(t) for t in thresholds]
    params = (H, W, thr, strict, connectivity, upsampling)
    if ex is None:
        per_threshold = _boxes_chunk(params, (0, maps))
        if on_item is not None:
            on_item((0, maps))
    else:
        items = [(b0, maps[b0 : b0 + _CHUNK]) for b0 in range(0, maps.shape[0], _CHUNK)]
        parts = ex.map(functools.partial(_boxes_chunk, params), items, on_item=on_item)
        per_threshold = [[b for part in parts for b in part[t]] for t in range(len(thr))]
    return HeatmapBoxesResult(
        tuple(tuple(per) for per in per_threshold), tuple(float(t) for t in thr), (H, W), int(maps.shape[0])
    )


def _boxes_chunk(params: tuple, item: tuple[int, np.ndarray]) -> list[list[np.ndarray]]:
    """Boxes of one chunk ``(offset, maps)`` of validated maps, per threshold (module level: executors pickle it)."""
    H, W, thr, strict, connectivity, upsampling = params
    offset, maps = item
    if upsampling == "nearest":
        return _nearest_boxes(maps, H, W, thr, strict, connectivity, offset)
    runs = batch_runs(maps, H, W, thr, strict, offset)
    return [runs_to_boxes(r, connectivity=connectivity) for r in runs]


def heatmap_boxes(
    heatmap: ArrayLike,
    *,
    image_shape: tuple[int, int] = (1024, 1024),
    upsampling: str = "bilinear",
    threshold: float = 60.0,
    strict: bool = True,
    connectivity: int = 8,
) -> np.ndarray:
    """Boxes of one map at one threshold; see :func:`heatmaps_to_boxes`.

    Returns
    -------
    boxes : ndarray of shape (k, 4), int64
    """
    hm = check_heatmaps(heatmap)
    return heatmaps_to_boxes(
        hm[None],
        image_shape=image_shape,
        upsampling=upsampling,
        thresholds=(threshold,),
        strict=strict,
        connectivity=connectivity,
    ).boxes[0][0]


def heatmap_peaks(
    heatmaps: ArrayLike, image_shape: tuple[int, int] = (1024, 1024), *, upsampling: str = "bilinear"
) -> np.ndarray:
    """Pixel ``(row, column)`` of each map's upsampled maximum (first in raster order, as ``np.argmax``).

    Returns
    -------
    peaks : ndarray of shape (n, 2), int64
    """
    check_choice(upsampling, UPSAMPLING, name="upsampling", func="heatmap_peaks")
    maps = check_heatmaps(heatmaps, batch=True)
    H, W = check_image_shape(image_shape)
    n, h, w = maps.shape
    rax, cax = grid_axis(h, H, upsampling), grid_axis(w, W, upsampling)
    out = np.zeros((n, 2), dtype=np.int64)
    if upsampling == "nearest":
        for k in range(n):
            r0, c0 = np.unravel_index(np.argmax(maps[k]), (h, w))
            out[k] = (np.searchsorted(rax.i0, r0), np.searchsorted(cax.i0, c0))
        return out
    for b0 in range(0, n, RUN_BATCH):
        chunk = maps[b0 : b0 + RUN_BATCH]
        out[b0 : b0 + len(chunk)] = extremes_peaks(chunk, block_extremes(chunk, H, W))
    return out


def extremes_peaks(chunk: np.ndarray, pr: BlockExtremes) -> np.ndarray:
    """The bilinear peaks (:func:`heatmap_peaks`) of a batch of validated maps, from its :func:`block_extremes`."""
    rax, cax = pr.rax, pr.cax
    out = np.zeros((chunk.shape[0], 2), dtype=np.int64)
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
        if best is None:  # flat blocks: every pixel of the block equals its corners
            r = int(rax.seg_lo[hit].min())
            a = chunk[k, rax.i0[r], :] + (chunk[k, rax.i1[r], :] - chunk[k, rax.i0[r], :]) * rax.t[r]
            a0 = a[cax.i0]
            best = (r, int(np.argmax(a0 + (a[cax.i1] - a0) * cax.t)))
        out[k] = best
    return out
