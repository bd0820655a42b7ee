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

from ._boxes import iobb, iou
from ._evaluate import LocalizationResult, evaluate_heatmap_files, evaluate_heatmaps
from ._heatmaps import HeatmapBoxesResult, heatmaps_to_boxes
from ._protocol import ImageScores, LocalizationProtocol, score_images
from ._study import LocalizationStudy, simulate_localization_study
from ._synth_result import SynthResult
from ._synthetic import simulate_localization, synthetic_cases

__all__ = [
    "iobb",
    "iou",
    "heatmaps_to_boxes",
    "HeatmapBoxesResult",
    "ImageScores",
    "LocalizationProtocol",
    "score_images",
    "SynthResult",
    "synthetic_cases",
    "simulate_localization",
    "LocalizationResult",
    "evaluate_heatmaps",
    "evaluate_heatmap_files",
    "LocalizationStudy",
    "simulate_localization_study",
]
