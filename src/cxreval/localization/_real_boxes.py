"""The synthetic study's error model on real reference boxes (``BBox_List_2017``), scored per finding.

What the ChestX-ray8 protocol rewards for findings of each size: one clean and one noisy error-model map
per (image, finding) is made from its real boxes (:mod:`._synthetic`), localized by the protocol's pipeline,
a 6 x 6 box at the peak and the whole image, and scored per finding into the one localization table
(:data:`~cxreval.schema.LOCALIZATION_COLUMNS`). ``cxreval synth --real-boxes`` and the demo's
``localization_real_boxes`` section run :func:`simulate_localization_on_boxes` and save its result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .._typing import RNGLike
from .._validation import normalize_rng
from ..exceptions import SchemaError
from ..io import markdown_table
from ..schema import FINDING, STUDY_ID
from ..schema._boxes import BOX_COORDS, LOCALIZATION_COLUMNS, NO_THRESHOLD, check_box_table
from ._boxes import ThresholdLike, check_boxes
from ._heatmaps import heatmap_peaks, heatmaps_to_boxes
from ._protocol import DEFAULT_T, score_images
from ._synthetic import ErrorModel, coverage, error_model_maps
from ._table_result import _LocalizationTableResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RealBoxesResult", "BoxMaps", "box_maps", "simulate_localization_on_boxes", "by_finding_view"]

_THRESHOLDS = (60.0, 180.0)
_BY_FINDING_T = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class RealBoxesResult(_LocalizationTableResult):
    """The error model on real boxes: ``localization.csv`` and its compact per-finding view.

    Attributes
    ----------
    table : pandas.DataFrame
        Columns :data:`~cxreval.schema.LOCALIZATION_COLUMNS`; ``variant`` ``noise-free`` or
        ``noisy``, ``localizer`` ``heatmap`` (thresholds 60 and 180, bilinear upsampling), ``tiny box``
        (6 x 6 at the noisy map's peak) or ``whole image``; rules IoBB and IoU; AFP per (image, finding).
    by_finding : pandas.DataFrame
        ``finding, n_boxes, median_area_fraction`` and the IoBB Acc. of each localizer on the noisy maps at
        T = 0.1, 0.5 and 0.9 (:func:`by_finding_view`).
    n_boxes, n_images : int
        Reference boxes, and images carrying them.
    seed : int or None
        The generator seed (None when a Generator was passed).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"localization": "localization.csv", "by_finding": "localization_by_finding.csv"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = LOCALIZATION_COLUMNS
    FOLDER: ClassVar[str] = "real_boxes"
    """The subfolder of its output where ``cxreval synth --real-boxes`` saves this result (next to the
    synthetic study's files of the same names)."""

    table: pd.DataFrame
    by_finding: pd.DataFrame
    n_boxes: int
    n_images: int
    seed: int | None = 0

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"localization": self.table, "by_finding": self.by_finding}

    def summary(self) -> str:
        """The compact per-finding view as Markdown."""
        return "\n".join(
            [
                f"## Error model on {self.n_boxes} real boxes on {self.n_images} images (seed {self.seed}; "
                "noisy maps, IoBB Acc)",
                "",
                markdown_table(self.by_finding, floatfmt="{:.3f}"),
            ]
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "n_boxes": self.n_boxes,
            "n_images": self.n_images,
            "seed": self.seed,
            "by_finding": self.by_finding.to_dict(orient="records"),
        }


def by_finding_view(table: pd.DataFrame, *, T_values: Sequence[float] = _BY_FINDING_T) -> pd.DataFrame:
    """Compact per-finding view of a localization table: IoBB Acc. at ``T_values`` of each localizer on the
    noisy maps, after ``n_boxes`` and ``median_area_fraction``."""
    d = table[(table.variant == "noisy") & (table.rule == "IoBB") & (table["T"].isin(list(T_values)))].copy()
    label = (
        d[["localizer", "upsampling", "threshold"]]
        .astype(str)
        .apply(lambda r: " ".join(v for v in r if v != NO_THRESHOLD), axis=1)
    )
    d["col"] = label + " @" + d["T"].map(lambda t: f"{t:g}")
    wide = d.pivot_table(index=FINDING, columns="col", values="acc", sort=False)
    meta = table.groupby(FINDING, sort=False)[["n_boxes", "median_area_fraction"]].first()
    return meta.join(wide).reset_index()


@dataclass(frozen=True)
class BoxMaps:
    """Error-model maps made from real boxes, one per (study, finding) in order of first appearance.

    Attributes
    ----------
    groups : dict of (str, str) to list of int
        ``(study_id, finding)`` -> rows of the box table.
    coords : numpy.ndarray, shape (n_boxes, 4)
    clean, noisy : numpy.ndarray, shape (n_maps, map_size, map_size)
    """

    groups: dict[tuple[str, str], list[int]]
    coords: np.ndarray
    clean: np.ndarray
    noisy: np.ndarray


def box_maps(boxes: pd.DataFrame, *, rng: RNGLike = None, model: ErrorModel = ErrorModel()) -> BoxMaps:
    """One clean and one noisy error-model map per (study, finding) of a box table.

    Each map is the coverage of its boxes (their maximum where boxes overlap) with the error model's distractor,
    kept away from the first box, and noise (:func:`~cxreval.localization.error_model_maps`),
    drawing from ``rng`` map by map in order of first appearance (``None``: fresh entropy; an int reproduces
    the maps).
    """
    boxes = check_box_table(boxes)
    gen = normalize_rng(rng)
    img = model.image_size
    coords = check_boxes(
        boxes[list(BOX_COORDS)].to_numpy(float),
        name="reference boxes",
        image_shape=(img, img),
        where="the boxes table",
    )
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (im, f) in enumerate(zip(boxes[STUDY_ID], boxes[FINDING])):
        groups.setdefault((str(im), str(f)), []).append(i)
    clean, noisy = [], []
    for idx in groups.values():
        cov = np.max([coverage(coords[i], model) for i in idx], axis=0)
        c, nz, _ = error_model_maps(tuple(coords[idx[0]]), gen, model, cover=cov)
        clean.append(c)
        noisy.append(nz)
    empty = np.zeros((0, model.map_size, model.map_size))
    return BoxMaps(groups, coords, np.stack(clean) if clean else empty, np.stack(noisy) if noisy else empty)


def simulate_localization_on_boxes(
    boxes: pd.DataFrame,
    *,
    rng: RNGLike = None,
    model: ErrorModel = ErrorModel(),
    T_values: Sequence[ThresholdLike] = DEFAULT_T,
) -> RealBoxesResult:
    """The synthetic study's error model on real reference boxes, scored per finding.

    For every (image, finding) of ``boxes`` (in order of first appearance) a clean and a noisy map are
    made from the coverage of its boxes (their maximum where boxes overlap), with the distractor kept
    away from the first box, drawing from ``rng`` in that order. Localizers: the bilinear pipeline at
    60 and 180 on both maps, the 6 x 6 peak box and the whole image on the noisy map.

    Parameters
    ----------
    boxes : pandas.DataFrame
        A box table (:data:`~cxreval.schema.BOX_COLUMNS`) in pixels of a
        ``model.image_size`` square image.
    rng : int, Generator or None, default=None
        Seed of the error-model maps: ``None`` draws fresh entropy, a different result on each call; an int
        reproduces one.
    model : ErrorModel
    T_values : sequence, default=(0.1, 0.25, 0.5, 0.75, 0.9)

    Returns
    -------
    res : RealBoxesResult
    """
    import pandas as pd

    boxes = check_box_table(boxes)
    if len(boxes) == 0:
        raise SchemaError("the boxes table is empty (a header without rows?); the error model needs boxes.")
    seed = int(rng) if isinstance(rng, (int, np.integer)) else None
    img = model.image_size
    bm = box_maps(boxes, rng=rng, model=model)
    groups, keys, coords = bm.groups, list(bm.groups), bm.coords
    stacks = {"noise-free": bm.clean, "noisy": bm.noisy}
    preds: dict[tuple[str, str, str, str], list[np.ndarray]] = {}
    for variant, st in stacks.items():
        b = heatmaps_to_boxes(st, image_shape=(img, img), thresholds=_THRESHOLDS).boxes
        for t, per in zip(_THRESHOLDS, b):
            preds[(variant, "heatmap", "bilinear", f"{t:g}")] = list(per)
    pk = heatmap_peaks(stacks["noisy"], (img, img))
    preds[("noisy", "tiny box", "bilinear", NO_THRESHOLD)] = [
        np.array([[c - 3, r - 3, c + 3, r + 3]]) for r, c in pk
    ]
    preds[("noisy", "whole image", NO_THRESHOLD, NO_THRESHOLD)] = [np.array([[0, 0, img, img]]) for _ in keys]
    area = (coords[:, 2] - coords[:, 0]) * (coords[:, 3] - coords[:, 1]) / (img * img)
    rows = []
    findings = list(dict.fromkeys(k[1] for k in keys))
    for (variant, lname, up, thr), P in preds.items():
        for f in findings:
            idx = [j for j, k in enumerate(keys) if k[1] == f]
            G = [coords[groups[keys[j]]] for j in idx]
            med = float(np.median(np.concatenate([area[groups[keys[j]]] for j in idx])))
            for rule in ("IoBB", "IoU"):
                sc = score_images([P[j] for j in idx], G, rule=rule, T_values=T_values)
                for ti, T in enumerate(T_values):
                    rows.append(
                        {
                            "variant": variant,
                            "localizer": lname,
                            "upsampling": up,
                            "threshold": thr,
                            FINDING: f,
                            "rule": rule,
                            "T": float(T),
                            "T_iou": float(T),
                            "acc": float(sc.acc()[ti]),
                            "afp": float(sc.afp()[ti]),
                            "hits": int(sc.hits[ti].sum()),
                            "false_positives": int(sc.false_positives[ti].sum()),
                            "n_boxes": int(sc.n_refs.sum()),
                            "n_images": len(idx),
                            "n_afp": len(idx),
                            "fp_without_box": 0,
                            "median_area_fraction": med,
                        }
                    )
    table = pd.DataFrame(rows, columns=list(LOCALIZATION_COLUMNS))
    return RealBoxesResult(table, by_finding_view(table), len(boxes), int(boxes[STUDY_ID].nunique()), seed)
