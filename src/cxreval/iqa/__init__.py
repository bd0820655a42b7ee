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

**Names.** Every metric is reached by its name through :func:`get_metric` (``get_metric("vif")``); the package
exports ``psnr``, ``ssim`` and ``ms_ssim`` as functions. The metric modules are named by what they compute
(``_structural_similarity``, ``_visual_information``, ``_feature_similarity``, ``_haar_wavelet_similarity``,
``_visual_saliency_similarity``, ``_dct_subband_similarity``: private; the package imports each, so its metrics register), so
no function shadows its module.

Examples
--------
>>> import numpy as np
>>> from cxreval.iqa import get_metric
>>> x = np.random.default_rng(0).random((64, 64))
>>> get_metric("psnr")(x, x + 0.01, data_range=1.0)  # doctest: +ELLIPSIS
40.0...
"""

from __future__ import annotations

# the metric modules register their metrics when imported (get_metric, list_metrics)
from . import (  # noqa: F401
    _adapters,
    _dct_subband_similarity,
    _feature_similarity,
    _gradient,
    _haar_wavelet_similarity,
    _no_reference,
    _visual_information,
    _visual_saliency_similarity,
)
from ._comparison import MetricComparisonResult, compare_metrics
from ._degrade import DegradeResult, degrade_folder
from ._expert import (
    ExpertAgreementResult,
    MetricAgreementResult,
    ZMOSResult,
    compare_with_experts,
    metric_agreement,
    zscores,
)
from ._full_reference import psnr
from ._registry import MetricSpec, get_metric, list_metrics, register_iqa
from ._scoring import ScoresResult, score_pairs, select_metrics
from ._structural_similarity import ms_ssim, ssim

__all__ = [
    "select_metrics",
    "MetricSpec",
    "register_iqa",
    "get_metric",
    "list_metrics",
    "psnr",
    "ssim",
    "ms_ssim",
    "score_pairs",
    "ScoresResult",
    "DegradeResult",
    "degrade_folder",
    "MetricComparisonResult",
    "compare_metrics",
    "ExpertAgreementResult",
    "MetricAgreementResult",
    "compare_with_experts",
    "metric_agreement",
    "ZMOSResult",
    "zscores",
]
