"""Image quality assessment for radiographs: controlled degradations, a metric registry and
metric-vs-expert analysis.

Every metric works on single-channel float64 images with an explicit ``data_range`` (no rounding to 8
bits) and is registered with typed metadata (:class:`MetricSpec`): ``list_metrics()`` lists them,
``get_metric(name)`` returns one. :func:`score_pairs` scores (reference, test) image files with chosen
metrics into a tidy table (:func:`score_pair_batches`: block by block, on any executor);
:func:`degrade_folder` degrades images by a plan into a self-contained folder; :func:`compare_metrics` ranks
the degradations by each metric and compares the metrics with each other (:func:`metric_rank_agreement`),
and :func:`compare_with_experts` compares them with expert ratings (z-MOS). Each analysis returns a frozen
result that owns its files (``FILES``, ``COLUMNS``, ``save(folder)``, ``summary()``): :class:`DegradeResult`,
:class:`ScoresResult`, :class:`MetricComparisonResult`, :class:`ExpertAgreementResult`.

**Validation.** tests/iqa/test_iqa_reference_values.py compares 17 full-reference metrics (PSNR, RMSE,
SSIM, MS-SSIM, IW-SSIM, CW-SSIM, GMSD, HaarPSI, HaarPSImed, FSIM, VSI, MDSI, DSS, VIF, VIFp, UQI, AMBE)
and PIQE with piq 0.8.0, pyiqa 0.1.16 and sewar 0.4.10 on 24 radiograph pairs (values made in a separate
venv, committed in tests/iqa/data/reference_values.csv); where the conventions match (each peer's is
reproduced by an option: 8-bit rounding ``round_8bit``, piq's downsampling, ...) the largest relative
difference is below 1e-4 (most below 1e-6). The table with every tolerance and the largest difference seen
is in bench/RESULTS.md ("Validation against reference implementations", ``bench/iqa_validation.py``).

**Names.** The package exports each metric function under the metric's name (``cxreval.iqa.ssim``,
``cxreval.iqa.vif``, ``cxreval.iqa.fsim``, ...); their modules are named by what they compute
(:mod:`~cxreval.iqa.structural_similarity`, :mod:`~cxreval.iqa.visual_information`,
:mod:`~cxreval.iqa.feature_similarity`, :mod:`~cxreval.iqa.haar_wavelet_similarity`,
:mod:`~cxreval.iqa.visual_saliency_similarity`, :mod:`~cxreval.iqa.dct_subband_similarity`), so no function
shadows its module.

Examples
--------
>>> import numpy as np
>>> from cxreval.iqa import get_metric
>>> x = np.random.default_rng(0).random((64, 64))
>>> get_metric("psnr")(x, x + 0.01, data_range=1.0)  # doctest: +ELLIPSIS
40.0...
"""

from __future__ import annotations

from ._image import box_downsample
from ._registry import MetricSpec, get_metric, list_metrics, register_iqa
from .adapters import dists, lpips, paq2piq
from .comparison import (
    MetricComparisonResult,
    compare_metrics,
    degradation_ranking,
    metric_rank_agreement,
    metric_vs_metric,
    oriented_scores,
)
from .dct_subband_similarity import dss
from .degrade import DegradeResult, degrade_folder
from .expert import (
    ExpertAgreementResult,
    MetricAgreementResult,
    ZMOSResult,
    compare_with_experts,
)
from .feature_similarity import fsim, phase_congruency
from .full_reference import ambe, psnr, rmse, uqi
from .gradient import gmsd, mdsi
from .haar_wavelet_similarity import haarpsi, haarpsi_med
from .no_reference import NIQEModel, load_niqe_model, niqe, piqe, snr
from .scoring import (
    MetricSelection,
    ScoresResult,
    score_pair_batches,
    score_pairs,
    select_metrics,
)
from .structural_similarity import cw_ssim, iw_ssim, ms_ssim, ssim
from .visual_information import vif, vifp
from .visual_saliency_similarity import sdsp, vsi

__all__ = [
    "MetricSpec", "register_iqa", "get_metric", "list_metrics",
    "box_downsample",
    "psnr", "rmse", "uqi", "ambe",
    "ssim", "ms_ssim", "iw_ssim", "cw_ssim",
    "vif", "vifp",
    "gmsd", "mdsi", "haarpsi", "haarpsi_med", "fsim", "phase_congruency", "vsi", "sdsp", "dss",
    "piqe", "snr", "niqe", "load_niqe_model", "NIQEModel",
    "lpips", "dists", "paq2piq",
    "select_metrics", "score_pairs", "score_pair_batches", "oriented_scores", "metric_rank_agreement",
    "MetricSelection", "ScoresResult", "DegradeResult", "degrade_folder",
    "MetricComparisonResult", "compare_metrics", "degradation_ranking", "metric_vs_metric",
    "ExpertAgreementResult", "MetricAgreementResult", "ZMOSResult", "compare_with_experts",
]
