"""Weakly supervised localization: the ChestX-ray8 protocol, exact and vectorised.

Heatmaps (in memory, or streamed from ``.npz`` files and folders of ``.npy`` by :mod:`._heatmap_files`)
become boxes (:mod:`._heatmaps`), boxes are scored with IoU / IoBB decided exactly
(:mod:`._boxes`) into Acc. and AFP (:mod:`._protocol`; a set of maps against reference boxes:
:mod:`._evaluate`); :mod:`._synthetic` runs the ChestX-ray14 article's synthetic error-model study (its result in
:mod:`._synth_result`), :mod:`._real_boxes` the
error model on real boxes, and :mod:`._table4` the arithmetic of the paper's Table 4. :mod:`cxreval.schema` owns
the box schema (``study_id, finding, [source,] x_min, y_min, x_max, y_max``) and the columns of every
``localization.csv``; the results (:class:`~cxreval.localization.LocalizationResult`, :class:`~cxreval.localization.SynthResult`,
:class:`~cxreval.localization.RealBoxesResult`) own their files.

:mod:`cxreval.predict` makes the maps from a torch model (CAM, the paper's "transition layer activations
weighted by the prediction layer's weights", and Grad-CAM), and :mod:`._heatmap_keys` keys them
``"<image id>/<finding>"`` and writes them for ``cxreval localize`` (:func:`~cxreval.localization.save_heatmaps`).
"""

from __future__ import annotations

from ._boxes import (
    area_exact,
    as_threshold,
    box_area,
    check_boxes,
    contains,
    exceeds,
    intersection_area,
    iobb,
    iobb_exact,
    iou,
    iou_exact,
)
from ._evaluate import DETAIL_COLUMNS, LocalizationResult, evaluate_heatmap_files, evaluate_heatmaps
from ._heatmap_files import HEATMAP_INPUTS, HeatmapFiles, read_maps, scan_heatmaps
from ._heatmap_keys import heatmap_dict, save_heatmaps
from ._heatmaps import (
    HEATMAP_BOX_COLUMNS,
    HeatmapBoxesResult,
    heatmap_boxes,
    heatmap_peaks,
    heatmap_runs,
    heatmaps_to_boxes,
    interpolation_matrix,
    mask_boxes,
    normalize_heatmap,
    runs_to_boxes,
    threshold_mask,
    upsample,
)
from ._overlays import OVERLAY_COLUMNS, OVERLAY_SIZE, OverlayResult, boxed_images, overlay_boxes
from ._protocol import DEFAULT_T, RULES, ImageScores, LocalizationProtocol, correct_matrix, score_images
from ._real_boxes import RealBoxesResult, simulate_localization_on_boxes
from ._study import LocalizationStudy, simulate_localization_study
from ._synth_result import SynthCells, SynthResult
from ._synthetic import (
    ErrorModel,
    ErrorModelMaps,
    coverage,
    error_model_maps,
    gaussian_blur,
    simulate_localization,
    synthetic_cases,
)
from ._table4 import (
    BBOX_2017_COUNTS,
    TABLE4_ACC,
    TABLE4_T,
    afp_denominators,
    denominators,
    table4_denominators,
)

__all__ = [
    "area_exact",
    "as_threshold",
    "box_area",
    "check_boxes",
    "contains",
    "exceeds",
    "intersection_area",
    "iobb",
    "iobb_exact",
    "iou",
    "iou_exact",
    "heatmap_boxes",
    "heatmap_peaks",
    "heatmap_runs",
    "heatmaps_to_boxes",
    "HeatmapBoxesResult",
    "HEATMAP_BOX_COLUMNS",
    "interpolation_matrix",
    "mask_boxes",
    "normalize_heatmap",
    "runs_to_boxes",
    "threshold_mask",
    "upsample",
    "DEFAULT_T",
    "RULES",
    "ImageScores",
    "LocalizationProtocol",
    "correct_matrix",
    "score_images",
    "ErrorModel",
    "SynthCells",
    "SynthResult",
    "coverage",
    "ErrorModelMaps",
    "error_model_maps",
    "gaussian_blur",
    "synthetic_cases",
    "simulate_localization",
    "TABLE4_ACC",
    "TABLE4_T",
    "BBOX_2017_COUNTS",
    "afp_denominators",
    "denominators",
    "table4_denominators",
    "heatmap_dict",
    "save_heatmaps",
    "HEATMAP_INPUTS",
    "HeatmapFiles",
    "scan_heatmaps",
    "read_maps",
    "LocalizationResult",
    "DETAIL_COLUMNS",
    "evaluate_heatmaps",
    "evaluate_heatmap_files",
    "LocalizationStudy",
    "simulate_localization_study",
    "RealBoxesResult",
    "simulate_localization_on_boxes",
    "OVERLAY_COLUMNS",
    "OVERLAY_SIZE",
    "OverlayResult",
    "boxed_images",
    "overlay_boxes",
]
