"""The registry entries of the built-in IQA metrics, one row a metric.

Each metric module decorates its function with :func:`builtin_metric` (``@builtin_metric("gmsd")``), which
registers it through :func:`~cxreval.iqa.register_iqa` with the row of :data:`ENTRIES` and the line of
:data:`DESCRIPTIONS` under its name: the metadata of every built-in metric reads as one table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ._registry import Reference, register_iqa

__all__ = ["ENTRIES", "DESCRIPTIONS", "builtin_metric"]

_INF = float("inf")


class _Entry(NamedTuple):
    """A built-in metric's :func:`~cxreval.iqa.register_iqa` arguments other than its description."""

    reference: Reference
    higher_is_better: bool
    value_range: tuple[float, float]
    identical: float | None = None
    example_scale: float = 1.0
    example_size: int = 64
    needs_weights: bool = False


# reference, higher_is_better, value_range, identical (the value for an image compared with itself, which
# adds the doctest), the doctest image's scale and size, needs_weights
ENTRIES: dict[str, _Entry] = {
    "ambe": _Entry("full", False, (0.0, 1.0)),
    "cw_ssim": _Entry("full", True, (0.0, 1.0)),
    "dists": _Entry("full", False, (0.0, 1.0), needs_weights=True),
    "dss": _Entry("full", True, (0.0, 1.0), 1.0),
    "fsim": _Entry("full", True, (0.0, 1.0), 1.0),
    "gmsd": _Entry("full", False, (0.0, 1.0), 0.0, 255.0, 8),
    "haarpsi": _Entry("full", True, (0.0, 1.0), 1.0, 255.0, 32),
    "haarpsi_med": _Entry("full", True, (0.0, 1.0), 1.0, 255.0, 32),
    "iw_ssim": _Entry("full", True, (0.0, 1.0)),
    "lpips": _Entry("full", False, (0.0, 1.0), needs_weights=True),
    "mdsi": _Entry("full", False, (0.0, 1.0)),
    "ms_ssim": _Entry("full", True, (0.0, 1.0)),
    "niqe": _Entry("no", False, (0.0, _INF), needs_weights=True),
    "paq2piq": _Entry("no", True, (0.0, 100.0), needs_weights=True),
    "piqe": _Entry("no", False, (0.0, 100.0)),
    "psnr": _Entry("full", True, (0.0, _INF)),
    "rmse": _Entry("full", False, (0.0, _INF)),
    "snr": _Entry("no", True, (-_INF, _INF)),
    "ssim": _Entry("full", True, (-1.0, 1.0)),
    "uqi": _Entry("full", True, (-1.0, 1.0)),
    "vif": _Entry("full", True, (0.0, _INF)),
    "vifp": _Entry("full", True, (0.0, _INF)),
    "vsi": _Entry("full", True, (0.0, 1.0), 1.0),
}

DESCRIPTIONS: dict[str, str] = {
    "ambe": "Absolute mean brightness error |mean(x) - mean(y)|, as a fraction of data_range.",
    "cw_ssim": "Complex-wavelet SSIM (Sampat et al. 2009), complex steerable pyramid, 4 levels, 8 orientations.",
    "dists": "DISTS (Ding et al. 2022) through pyiqa or piq; needs downloaded weights.",
    "dss": "DCT subband similarity index (Balanov et al. 2015).",
    "fsim": "Feature similarity index from phase congruency and gradients (Zhang et al. 2011).",
    "gmsd": "Gradient magnitude similarity deviation (Xue et al. 2014); 0 for identical images.",
    "haarpsi": "Haar wavelet-based perceptual similarity index (Reisenhofer et al. 2018), C=30, a=4.2.",
    "haarpsi_med": "HaarPSI with the medical-image calibration C=5, a=4.9 (Karner et al. 2025).",
    "iw_ssim": "Information-content-weighted SSIM (Wang & Li 2011), 5-scale Laplacian pyramid.",
    "lpips": "LPIPS (AlexNet, v0.1) through pyiqa or piq; needs downloaded weights.",
    "mdsi": "Mean deviation similarity index (Nafchi et al. 2016); 0 for identical images.",
    "ms_ssim": "Multi-scale SSIM (Wang et al. 2003), 5 scales, product form (msssim.m).",
    "niqe": "Natural image quality evaluator (Mittal et al. 2013); needs a pristine model file.",
    "paq2piq": "PaQ-2-PiQ (Ying et al. 2020) through pyiqa; needs downloaded weights.",
    "piqe": "Perception-based image quality evaluator (Venkatanath et al. 2015); 0 best, 100 worst.",
    "psnr": "Peak signal-to-noise ratio 10*log10(data_range^2 / MSE), in dB.",
    "rmse": "Root mean squared error, as a fraction of data_range by default.",
    "snr": "Signal-to-noise ratio 20*log10(mean / std) of the image, in dB.",
    "ssim": "Structural similarity (Wang et al. 2004), 11x11 Gaussian window, no downsampling.",
    "uqi": "Universal quality index (Wang & Bovik 2002), 8x8 sliding window, mean of the map.",
    "vif": "Wavelet-domain VIF (Sheikh & Bovik 2006, vifvec.m): GSM model on the 4-scale, 6-orientation sp5 steerable pyramid.",
    "vifp": "Pixel-domain VIF (Sheikh & Bovik 2006, vifp_mscale.m), 4 scales.",
    "vsi": "Visual saliency-induced index (Zhang et al. 2014).",
}


def builtin_metric(name: str) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Decorator registering the built-in metric ``name`` with its row of :data:`ENTRIES` and its line of
    :data:`DESCRIPTIONS`."""
    return register_iqa(name, description=DESCRIPTIONS[name], **ENTRIES[name]._asdict())
