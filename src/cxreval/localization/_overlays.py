"""Box overlays: reference and detected boxes drawn over radiographs, as a result that owns its files.

:func:`overlay_boxes` makes one (``cxreval synth --real-boxes FILE --images DIR``, the demo's
``localization_real_boxes`` section): an error-model heat map per (image, finding) from its real boxes, the
boxes the protocol finds on it, and the radiographs downsampled for the report; the report (``report/sections.py``) draws them from the files
:class:`OverlayResult` declares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._typing import RNGLike
from ..results import TableResult
from ..schema._boxes import BOX_COORDS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OVERLAY_COLUMNS", "OVERLAY_SIZE", "OverlayResult", "boxed_images", "overlay_boxes"]

OVERLAY_SIZE = 512
"""Largest side (pixels) of the radiographs embedded in the report's box overlays (block-averaged by an
integer factor: a 1024-pixel radiograph becomes 512 pixels, about 100 kB as PNG)."""

OVERLAY_COLUMNS: tuple[str, ...] = (
    "study_id",
    "finding",
    "kind",
    *BOX_COORDS,
    "image_file",
    "image_size",
    "heatmap_key",
)
"""Columns of ``overlays.csv``: the box schema (:data:`cxreval.schema.BOX_COLUMNS`) with ``kind``
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
        return (
            f"Box overlays: {len(self.images)} real radiographs{origin} (downsampled for the report); reference "
            "boxes and the boxes the protocol finds on a noisy error-model map made from them "
            f"({n_det} detected boxes)."
        )

    def _figure(self) -> Any:
        """The reference and detected boxes of the first radiograph, one colour per kind."""
        from .._plots import box_outlines

        t = self.table
        first = t[t["study_id"] == t["study_id"].iloc[0]] if len(t) else t
        return box_outlines(
            first,
            color="kind",
            title="Reference and detected boxes" + (f" ({first['study_id'].iloc[0]})" if len(t) else ""),
        )


def boxed_images(folder: str | PathLike[str], boxes: pd.DataFrame) -> list[Path]:
    """The radiographs ``folder/*.png`` named by a ``study_id`` of ``boxes`` (``00004296_000.png``), sorted; none
    when ``folder`` is not a folder."""
    from ..schema import STUDY_ID

    d = Path(folder)
    ids = set(boxes[STUDY_ID].astype(str))
    return sorted(p for p in d.glob("*.png") if p.name in ids) if d.is_dir() else []


def _png_bytes(image: np.ndarray) -> bytes:
    from io import BytesIO

    from PIL import Image

    lo, hi = float(image.min()), float(image.max())
    u8 = (
        np.zeros(image.shape, np.uint8)
        if hi <= lo
        else np.rint((image - lo) / (hi - lo) * 255).astype(np.uint8)
    )
    buf = BytesIO()
    Image.fromarray(u8, mode="L").save(buf, format="PNG")
    return buf.getvalue()


def overlay_boxes(
    images: Sequence[Path], boxes: pd.DataFrame, *, rng: RNGLike = None, origin: str = "from the data mirror"
) -> OverlayResult:
    """Error-model heat maps from the real boxes of ``images``, the protocol's boxes on them, and the
    downsampled radiographs.

    For each (image, finding) in ``boxes`` order, the clean coverage map of its boxes (their maximum)
    gets the synthetic study's distractor and noise (:func:`cxreval.localization.error_model_maps`, drawn from
    ``rng`` in that order); the noisy map is turned into boxes at thresholds 60 and 180 (bilinear
    upsampling to 1024 x 1024, 8-connectivity).

    Parameters
    ----------
    images : sequence of path
        Radiographs named by their ``study_id`` (``00004296_000.png``).
    boxes : pandas.DataFrame
        A box table (:data:`cxreval.schema.BOX_COLUMNS`).
    rng : int, Generator or None, default=None
        Seed of the error-model maps: ``None`` draws fresh entropy, a different result on each call; an int
        reproduces one.
    origin : str, default='from the data mirror'
        Where the radiographs came from, for :meth:`OverlayResult.summary`.

    Returns
    -------
    res : OverlayResult
    """
    import pandas as pd

    from ..io.images import box_downsample, read_image
    from ..schema._boxes import check_box_table
    from ._heatmaps import heatmaps_to_boxes
    from ._real_boxes import box_maps
    from ._synthetic import ErrorModel

    boxes = check_box_table(boxes)
    model = ErrorModel()
    size = model.image_size
    names = {p.name: p for p in images}
    bm = box_maps(boxes[boxes["study_id"].astype(str).isin(names)], rng=rng, model=model)
    groups, coords, stack = bm.groups, bm.coords, bm.noisy
    det = (
        heatmaps_to_boxes(stack, image_shape=(size, size), thresholds=(60.0, 180.0)).boxes
        if len(stack)
        else ((), ())
    )
    rows, keys, pngs = [], [], {}
    for j, ((im, f), idx) in enumerate(groups.items()):
        file = f"{OverlayResult.IMAGES_FOLDER}/{Path(im).stem}.png"
        if file not in pngs:
            img = read_image(names[im]).image
            small = box_downsample(
                np.asarray(img, dtype=np.float64),
                max(1, int(np.ceil(max(img.shape) / OVERLAY_SIZE))),
                convention="pool",
            )
            pngs[file] = _png_bytes(small)
        key = f"{im}|{f}"
        keys.append(key)
        common = {"study_id": im, "finding": f, "image_file": file, "image_size": size, "heatmap_key": key}
        for i in idx:
            rows.append({**common, "kind": "reference", **dict(zip(BOX_COORDS, coords[i]))})
        for t, kind in ((0, "detected (T_h=60)"), (1, "detected (T_h=180)")):
            for b in det[t][j]:
                rows.append({**common, "kind": kind, **dict(zip(BOX_COORDS, map(float, b)))})
    return OverlayResult(
        pd.DataFrame(rows, columns=list(OVERLAY_COLUMNS)),
        tuple(keys),
        stack,
        tuple(pngs.items()),
        origin=origin,
    )
