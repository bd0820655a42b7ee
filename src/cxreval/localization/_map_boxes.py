"""Heat maps to predicted boxes at each threshold of a protocol: maps in memory batched by shape, maps in files
read in chunks of :data:`FILE_CHUNK` by the tasks themselves (:func:`file_chunk_boxes`)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..executor import Executor, get_executor
from ..progress import Progress
from ._heatmap_files import HeatmapFiles, read_maps
from ._heatmaps import batch_boxes, heatmaps_to_boxes
from ._protocol import LocalizationProtocol

__all__ = ["FILE_CHUNK", "file_chunk_boxes"]

FILE_CHUNK = 1024  # maps per task when the maps are read from files
_BOX_OPTIONS = ("image_shape", "upsampling", "thresholds", "strict", "connectivity")
"""The keyword names of :func:`batch_boxes` for the items of ``params``, in order."""


def _predicted_boxes(
    maps: dict[tuple[str, str], np.ndarray],
    files: HeatmapFiles | None,
    entry: dict[tuple[str, str], int],
    order: list[tuple[str, str]],
    protocol: LocalizationProtocol,
    ex: Executor | None,
    progress: Progress,
) -> dict[float, dict[tuple[str, str], np.ndarray]]:
    """Boxes of the maps ``order`` at each threshold: in memory batched by map shape, from files in chunks;
    a ``progress`` task counts the maps."""
    pred: dict[float, dict[tuple[str, str], np.ndarray]] = {t: {} for t in protocol.thresholds}
    task = progress.add("heatmaps -> boxes", total=len(order))
    params = (
        protocol.image_shape,
        protocol.upsampling,
        protocol.thresholds,
        protocol.strict_threshold,
        protocol.connectivity,
    )
    if files is not None:
        idx = np.array([entry[k] for k in order], dtype=np.int64)
        items = [files.take(idx[b0 : b0 + FILE_CHUNK]) for b0 in range(0, idx.size, FILE_CHUNK)]
        func = functools.partial(file_chunk_boxes, params)
        parts = (ex if ex is not None else get_executor(None)).map(
            func, items, on_item=lambda x: progress.advance(task, len(x.keys))
        )
        for ti, t in enumerate(protocol.thresholds):
            pred[t] = dict(zip(order, (b for part in parts for b in part[ti])))
        return pred
    options: dict[str, Any] = dict(zip(_BOX_OPTIONS, params))
    by_shape: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for k in order:
        by_shape.setdefault(maps[k].shape, []).append(k)
    for ks in by_shape.values():
        res = batch_boxes(
            np.stack([maps[k] for k in ks]),
            **options,
            executor=ex,
            on_item=lambda x: progress.advance(task, len(x[1])),
        ).boxes
        for t, per in zip(protocol.thresholds, res):
            for k, b in zip(ks, per):
                pred[t][k] = b
    return pred


def file_chunk_boxes(params: tuple, part: HeatmapFiles) -> list[list[np.ndarray]]:
    """Boxes of the maps of one chunk of a :class:`HeatmapFiles` index, per threshold, in the chunk's order.

    The task of :func:`evaluate_heatmaps` on files: it reads its own maps (:func:`read_maps`), so only
    the file paths and offsets travel with it. ``params`` is ``(image_shape, upsampling, thresholds,
    strict, connectivity)``.
    """
    options = dict(zip(_BOX_OPTIONS, params))
    maps = read_maps(part)
    out: list[list[np.ndarray]] = [[np.zeros((0, 4), np.int64)] * len(maps) for _ in options["thresholds"]]
    by_shape: dict[tuple[int, int], list[int]] = {}
    for i, m in enumerate(maps):
        by_shape.setdefault(m.shape, []).append(i)
    for ii in by_shape.values():
        res = heatmaps_to_boxes(np.stack([maps[i] for i in ii]), **options).boxes
        for ti, per in enumerate(res):
            for i, b in zip(ii, per):
                out[ti][i] = b
    return out
