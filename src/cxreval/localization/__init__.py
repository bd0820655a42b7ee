"""Weakly supervised localization: the ChestX-ray8 protocol, exact and vectorised.

Heatmaps (in memory, or streamed from ``.npz`` files and folders of ``.npy`` by :mod:`.heatmap_files`)
become boxes (:mod:`.heatmaps`), boxes are scored with IoU / IoBB decided exactly
(:mod:`.boxes`) into Acc. and AFP (:mod:`.protocol`; a set of maps against reference boxes:
:mod:`.evaluate`); :mod:`.synthetic` runs the ChestX-ray14 article's synthetic error-model study, :mod:`.real_boxes` the
error model on real boxes, and :mod:`.table4` the arithmetic of the paper's Table 4. :mod:`cxreval.schema.boxes` owns
the box schema (``study_id, finding, [source,] x_min, y_min, x_max, y_max``) and the columns of every
``localization.csv``; the results (:class:`~.evaluate.LocalizationResult`, :class:`~.synthetic.SynthResult`,
:class:`~.real_boxes.RealBoxesResult`) own their files.

:mod:`.cam` makes the maps from a torch model: CAM (the paper's "transition layer activations weighted
by the prediction layer's weights") and Grad-CAM at a named layer, at the feature-map size, and
:func:`~.cam.save_heatmaps` writes them keyed ``"<image id>/<finding>"`` for ``cxreval localize``.
torch is optional (``pip install cxreval[torch]``) and imported only when those functions run.
"""

from __future__ import annotations

from ..schema.boxes import BOX_COLUMNS, BOX_COORDS, LOCALIZATION_COLUMNS, SOURCED_BOX_COLUMNS, check_box_table
from ._study import LocalizationStudy, simulate_localization_study
from .boxes import (
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
from .cam import class_activation_maps, grad_cam, heatmap_dict, save_heatmaps
from .evaluate import DETAIL_COLUMNS, LocalizationResult, evaluate_heatmap_files, evaluate_heatmaps
from .heatmap_files import HEATMAP_INPUTS, HeatmapFiles, read_maps, scan_heatmaps
from .heatmaps import (
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
from .overlays import OVERLAY_COLUMNS, OverlayResult, boxed_images, overlay_boxes
from .protocol import DEFAULT_T, RULES, ImageScores, LocalizationProtocol, correct_matrix, score_images
from .real_boxes import RealBoxesResult, simulate_localization_on_boxes
from .synthetic import (
    ErrorModel,
    SynthResult,
    coverage,
    error_model_maps,
    simulate_localization,
    synthetic_cases,
)
from .table4 import TABLE4_ACC, TABLE4_T, denominators, table4_denominators

__all__ = [
    "area_exact", "as_threshold", "box_area", "check_boxes", "contains", "exceeds", "intersection_area",
    "iobb", "iobb_exact", "iou", "iou_exact",
    "heatmap_boxes", "heatmap_peaks", "heatmap_runs", "heatmaps_to_boxes", "HeatmapBoxesResult",
    "HEATMAP_BOX_COLUMNS", "interpolation_matrix",
    "mask_boxes", "normalize_heatmap", "runs_to_boxes", "threshold_mask", "upsample",
    "DEFAULT_T", "RULES", "ImageScores", "LocalizationProtocol", "correct_matrix", "score_images",
    "ErrorModel", "SynthResult", "coverage", "error_model_maps", "synthetic_cases", "simulate_localization",
    "TABLE4_ACC", "TABLE4_T", "denominators", "table4_denominators",
    "class_activation_maps", "grad_cam", "heatmap_dict", "save_heatmaps",
    "HEATMAP_INPUTS", "HeatmapFiles", "scan_heatmaps", "read_maps",
    "LocalizationResult", "DETAIL_COLUMNS", "evaluate_heatmaps", "evaluate_heatmap_files",
    "LocalizationStudy", "simulate_localization_study", "RealBoxesResult", "simulate_localization_on_boxes",
    "BOX_COLUMNS", "BOX_COORDS", "SOURCED_BOX_COLUMNS", "LOCALIZATION_COLUMNS", "check_box_table",
    "OVERLAY_COLUMNS", "OverlayResult", "boxed_images", "overlay_boxes",
]
