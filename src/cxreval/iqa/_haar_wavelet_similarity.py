"""HaarPSI and its medical calibration HaarPSImed.

The Haar wavelet-based perceptual similarity index compares the magnitudes of high-frequency Haar
coefficients (scales 1 and 2, horizontal and vertical) of the two images and weights the local
similarities by the low-frequency (scale 3) coefficient magnitudes, then maps the weighted mean through
a logistic function and its inverse. For single-channel images the formula is, with
``S(a, b) = (2ab + C) / (a^2 + b^2 + C)`` and ``l_a(x) = 1 / (1 + exp(-a x))``::

    HS_k   = (S(|h_1k(x)|, |h_1k(y)|) + S(|h_2k(x)|, |h_2k(y)|)) / 2          k = horizontal, vertical
    W_k    = max(|h_3k(x)|, |h_3k(y)|)
    HaarPSI = ( l_a^-1( sum_k sum l_a(HS_k) W_k / sum_k sum W_k ) )^2

Images are rescaled to 0..255 (``x * 255 / data_range``, no rounding) and, by default, averaged over 2x2
blocks and subsampled (the original code's viewing-distance step). HaarPSI uses ``C = 30``, ``alpha = 4.2``
(Reisenhofer et al. 2018); HaarPSImed uses ``C = 5``, ``alpha = 4.9`` (Karner et al. 2025).

References
----------
.. [1] R. Reisenhofer, S. Bosse, G. Kutyniok and T. Wiegand, "A Haar wavelet-based perceptual similarity
   index for image quality assessment", Signal Processing: Image Communication 61:33-43, 2018.
   doi:10.1016/j.image.2017.11.001
.. [2] C. Karner et al., "Parameter choices in HaarPSI for IQA with medical images", 2025
   (HaarPSImed: C = 5, alpha = 4.9).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..exceptions import InvalidParameterError
from ._catalogue import builtin_metric
from ._image import rescaled_pair, similarity_map

__all__ = ["haarpsi", "haarpsi_med"]


def _haar_pair(image: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Responses to the ``k x k`` Haar filters (vertical and horizontal difference), as MATLAB's
    ``conv2(image, h, 'same')`` with zero padding (up to the sign, which the magnitudes ignore).

    Computed from a summed-area table: each response is a difference of two ``k/2 x k`` box sums / k."""
    h, w = image.shape
    top, bottom = k // 2 - 1, k // 2
    p = np.pad(image, ((top, bottom), (top, bottom)))
    s = np.zeros((p.shape[0] + 1, p.shape[1] + 1))
    np.cumsum(np.cumsum(p, axis=0), axis=1, out=s[1:, 1:])

    def box(r0: int, c0: int, hh: int, ww: int) -> np.ndarray:
        return (
            s[r0 + hh : r0 + hh + h, c0 + ww : c0 + ww + w]
            - s[r0 : r0 + h, c0 + ww : c0 + ww + w]
            - s[r0 + hh : r0 + hh + h, c0 : c0 + w]
            + s[r0 : r0 + h, c0 : c0 + w]
        )

    half = k // 2
    vert = (box(0, 0, half, k) - box(half, 0, half, k)) / k  # top half minus bottom half
    horz = (box(0, 0, k, half) - box(0, half, k, half)) / k  # left half minus right half
    return vert, horz


def _haarpsi(
    image_true: object,
    image_test: object,
    data_range: object,
    *,
    c: float,
    alpha: float,
    subsample: bool,
    func: str,
) -> float:
    x, y = rescaled_pair(
        image_true, image_test, data_range, func=func, min_size=16, factor=2 if subsample else 1
    )
    if not (np.isfinite(c) and c > 0 and np.isfinite(alpha) and alpha > 0):
        raise InvalidParameterError(
            f"The 'c' and 'alpha' parameters of {func} must be positive. "
            f"Got c={c!r}, alpha={alpha!r} instead."
        )
    if min(x.shape) < 8:
        raise InvalidParameterError(
            f"{func}: the image is too small for three Haar scales (8x8 after "
            f"subsampling). Got shape {x.shape}."
        )
    cx = [_haar_pair(x, 2 ** (s + 1)) for s in range(3)]
    cy = [_haar_pair(y, 2 ** (s + 1)) for s in range(3)]
    num = 0.0
    den = 0.0
    for o in range(2):
        w = np.maximum(np.abs(cx[2][o]), np.abs(cy[2][o]))
        sim: float | np.ndarray = 0.0
        for s in range(2):
            sim = sim + similarity_map(np.abs(cx[s][o]), np.abs(cy[s][o]), c)
        logistic = 1.0 / (1.0 + np.exp(-alpha * (sim / 2.0)))
        num += float(np.sum(logistic * w))
        den += float(np.sum(w))
    eps = np.finfo(np.float64).eps
    score = (num + eps) / (den + eps)
    return float((np.log(score / (1.0 - score)) / alpha) ** 2)


def _calibrated(name: str, c_default: float, alpha_default: float, doc: str) -> Callable[..., float]:
    """HaarPSI with the constants ``C`` and ``alpha`` of one calibration as its defaults, named ``name``."""

    def metric(
        image_true: np.ndarray,
        image_test: np.ndarray,
        *,
        data_range: float,
        c: float = c_default,
        alpha: float = alpha_default,
        subsample: bool = True,
    ) -> float:
        return _haarpsi(image_true, image_test, data_range, c=c, alpha=alpha, subsample=subsample, func=name)

    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = doc
    return metric


haarpsi = builtin_metric("haarpsi")(
    _calibrated(
        "haarpsi",
        30.0,
        4.2,
        """Haar wavelet-based perceptual similarity index (HaarPSI) of single-channel images.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W), H, W >= 16
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...).
    c : float, default=30.0
        The constant ``C`` on the 0..255 scale.
    alpha : float, default=4.2
        Slope of the logistic function.
    subsample : bool, default=True
        2x2 average and subsample first, as the original.
    """,
    )
)
haarpsi_med = builtin_metric("haarpsi_med")(
    _calibrated(
        "haarpsi_med",
        5.0,
        4.9,
        """HaarPSImed: :func:`haarpsi` with ``C = 5`` and ``alpha = 4.9`` (Karner et al. 2025), the calibration
    for medical images; the parameters are those of :func:`haarpsi`, with these defaults.""",
    )
)
