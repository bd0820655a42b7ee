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
(``_structural_similarity``, ``_visual_information``, ``_feature_similarity``, ``_haar_wavelet_similarity``,
``_visual_saliency_similarity``, ``_dct_subband_similarity``: private, every public name is this package's), so
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

from ._adapters import dists, lpips, paq2piq
from ._comparison import (
    METRIC_VS_METRIC_COLUMNS,
    RANKING_COLUMNS,
    MetricComparisonResult,
    compare_metrics,
    degradation_ranking,
    metric_rank_agreement,
    metric_vs_metric,
    oriented_scores,
)
from ._dct_subband_similarity import dss
from ._degrade import (
    BUILTIN_PLANS,
    IMAGES_DIR,
    MANIFEST_COLUMNS,
    PAIR_COLUMNS,
    REFERENCES_DIR,
    TRANSFORMS,
    DegradationPlan,
    DegradeResult,
    ImageFiles,
    apply_degradation,
    degrade_folder,
    degrade_images,
    image_files,
    plan_source,
    read_plan,
    sample_images,
    shrink_images,
)
from ._expert import (
    DDOF_CHOICES,
    DROPPED_COLUMNS,
    IQA_KENDALL,
    IQA_SPEARMAN,
    METRIC_AGREEMENT_COLUMNS,
    RATER_AGREEMENT_COLUMNS,
    UNSCORED_CHOICES,
    ZMOS_COLUMNS,
    ExpertAgreementResult,
    MetricAgreementResult,
    RankCorrelations,
    ZMOSResult,
    compare_with_experts,
    metric_agreement,
    rater_agreement,
    srcc_krcc,
    zmos,
    zscores,
    zscores_for_scores,
)
from ._feature_similarity import fsim, phase_congruency
from ._full_reference import ambe, psnr, rmse, uqi
from ._gradient import gmsd, mdsi
from ._haar_wavelet_similarity import haarpsi, haarpsi_med
from ._no_reference import NIQEModel, load_niqe_model, niqe, piqe, snr
from ._registry import MetricSpec, get_metric, list_metrics, register_iqa
from ._scoring import (
    SCORE_COLUMNS,
    MetricSelection,
    ScoresResult,
    score_pair_batches,
    score_pairs,
    select_metrics,
)
from ._structural_similarity import SSIMMaps, cw_ssim, iw_ssim, ms_ssim, ssim, ssim_maps
from ._visual_information import vif, vifp
from ._visual_saliency_similarity import sdsp, vsi

__all__ = [
    "MetricSpec",
    "register_iqa",
    "get_metric",
    "list_metrics",
    "psnr",
    "rmse",
    "uqi",
    "ambe",
    "ssim",
    "ms_ssim",
    "iw_ssim",
    "cw_ssim",
    "SSIMMaps",
    "ssim_maps",
    "vif",
    "vifp",
    "gmsd",
    "mdsi",
    "haarpsi",
    "haarpsi_med",
    "fsim",
    "phase_congruency",
    "vsi",
    "sdsp",
    "dss",
    "piqe",
    "snr",
    "niqe",
    "load_niqe_model",
    "NIQEModel",
    "lpips",
    "dists",
    "paq2piq",
    "select_metrics",
    "score_pairs",
    "score_pair_batches",
    "oriented_scores",
    "metric_rank_agreement",
    "MetricSelection",
    "ScoresResult",
    "SCORE_COLUMNS",
    "DegradeResult",
    "degrade_folder",
    "degrade_images",
    "DegradationPlan",
    "read_plan",
    "plan_source",
    "BUILTIN_PLANS",
    "TRANSFORMS",
    "apply_degradation",
    "sample_images",
    "shrink_images",
    "ImageFiles",
    "image_files",
    "MANIFEST_COLUMNS",
    "PAIR_COLUMNS",
    "REFERENCES_DIR",
    "IMAGES_DIR",
    "MetricComparisonResult",
    "compare_metrics",
    "degradation_ranking",
    "metric_vs_metric",
    "RANKING_COLUMNS",
    "METRIC_VS_METRIC_COLUMNS",
    "ExpertAgreementResult",
    "MetricAgreementResult",
    "ZMOSResult",
    "compare_with_experts",
    "zscores",
    "zmos",
    "zscores_for_scores",
    "rater_agreement",
    "metric_agreement",
    "RankCorrelations",
    "srcc_krcc",
    "UNSCORED_CHOICES",
    "DDOF_CHOICES",
    "IQA_SPEARMAN",
    "IQA_KENDALL",
    "ZMOS_COLUMNS",
    "RATER_AGREEMENT_COLUMNS",
    "METRIC_AGREEMENT_COLUMNS",
    "DROPPED_COLUMNS",
]
