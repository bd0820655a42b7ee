"""Box overlays: reference and detected boxes drawn over radiographs, as a result that owns its files.

The demo's ``localization_real_boxes`` section (:func:`cxreval.demo_images.overlay_boxes`) makes one: an
error-model heat map per (image, finding) from its real boxes, the boxes the protocol finds on it, and the
radiographs downsampled for the report; the report (``report/sections.py``) draws them from the files
:class:`OverlayResult` declares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..results import TableResult
from .schema import BOX_COORDS

__all__ = ["OVERLAY_COLUMNS", "OverlayResult"]

OVERLAY_COLUMNS: tuple[str, ...] = ("study_id", "finding", "kind", *BOX_COORDS, "image_file", "image_size",
                                    "heatmap_key")
"""Columns of ``overlays.csv``: the box schema (:data:`cxreval.localization.schema.BOX_COLUMNS`) with ``kind``
(who drew the box: ``reference``, ``detected (T_h=60)``, ``detected (T_h=180)``) in the optional third place,
then the radiograph's file, its size in pixels and the key of its map in ``overlay_heatmaps.npz``."""


@dataclass(frozen=True)
class OverlayResult(TableResult):
    """Reference and detected boxes on real radiographs: ``overlays.csv``, ``overlay_heatmaps.npz`` (the maps,
    keyed ``"<study_id>|<finding>"``) and ``overlays/<image>.png`` (the downsampled radiographs).

    Attributes
    ----------
    table : pandas.DataFrame
        Columns :data:`OVERLAY_COLUMNS`.
    keys : tuple of str
        ``heatmap_key`` of each map, in the order of ``maps``.
    maps : numpy.ndarray, shape (n_maps, h, w)
        The noisy error-model maps.
    images : tuple of (str, bytes)
        ``(image_file, PNG bytes)`` of each downsampled radiograph.
    origin : str
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"overlays": "overlays.csv"})
    MAPS_FILE: ClassVar[str] = "overlay_heatmaps.npz"
    IMAGES_FOLDER: ClassVar[str] = "overlays"
    COLUMNS: ClassVar[tuple[str, ...]] = OVERLAY_COLUMNS

    table: pd.DataFrame
    keys: tuple[str, ...]
    maps: np.ndarray
    images: tuple[tuple[str, bytes], ...]
    origin: str = ""
    """Where the radiographs came from, for :meth:`summary` (``"from the data mirror"``)."""

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"overlays": self.table}

    def save(self, folder: str | PathLike[str]) -> dict[str, Path]:
        """Write ``overlays.csv`` (+ Parquet), ``overlay_heatmaps.npz`` and ``overlays/*.png``."""
        out = Path(folder)
        (out / self.IMAGES_FOLDER).mkdir(parents=True, exist_ok=True)
        for name, data in self.images:
            (out / name).write_bytes(data)
        paths = super().save(out)
        np.savez_compressed(out / self.MAPS_FILE, keys=np.array(list(self.keys), dtype=str), maps=self.maps)
        return {**paths, "maps": out / self.MAPS_FILE}

    def summary(self) -> str:
        n_det = int((self.table["kind"] != "reference").sum())
        origin = f" {self.origin}" if self.origin else ""
        return (f"Box overlays: {len(self.images)} real radiographs{origin} (downsampled for the report); reference "
                "boxes and the boxes the protocol finds on a noisy error-model map made from them "
                f"({n_det} detected boxes).")

    def _figure(self) -> Any:
        """The reference and detected boxes of the first radiograph, one colour per kind."""
        from .._plots import box_outlines

        t = self.table
        first = t[t["study_id"] == t["study_id"].iloc[0]] if len(t) else t
        return box_outlines(first, color="kind",
                            title="Reference and detected boxes" + (f" ({first['study_id'].iloc[0]})" if len(t) else ""))
