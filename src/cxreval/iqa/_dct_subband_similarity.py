"""DSS: DCT subband similarity index.

Both images (rescaled to 0..255, ``x * 255 / data_range``, no rounding; cropped to a multiple of the block
size) are transformed by an orthonormal 8x8 block DCT. Each subband ``(m, n)`` (the coefficients of that
frequency from every block) is compared through local (3x3 Gaussian, sigma 1.5) variances::

    s_mn = mean of the worst 5 % of (2 sigma_x sigma_y + C) / (sigma_x^2 + sigma_y^2 + C)

with ``C = 1000`` for the DC subband and ``300`` otherwise; for the DC subband the structure term
``(sigma_xy + C) / (sigma_x sigma_y + C)`` (worst 5 % mean) multiplies it. Subbands are weighted by
``w_mn = exp(-((m - 0.5)^2 + (n - 0.5)^2) / (2 * 1.55^2))`` (1-based ``m, n``); weights below 0.01 are
dropped and the rest normalised to sum to 1.

All 64 subbands are processed as one stacked array (the Gaussian window is separable and applied with
zero padding, as ``conv2(..., 'same')``).

References
----------
.. [1] A. Balanov, A. Schwartz, Y. Moshe and N. Peleg, "Image quality assessment based on DCT subband
   similarity", ICIP 2015, 2105-2109. doi:10.1109/ICIP.2015.7351172
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..exceptions import InvalidParameterError
from ._catalogue import builtin_metric
from ._image import gaussian_kernel, rescaled_pair

__all__ = ["dss"]


def _dct_matrix(n: int) -> np.ndarray:
    p = np.arange(n, dtype=np.float64)[:, None]
    q = np.arange(n, dtype=np.float64)[None, :]
    m = np.sqrt(2.0 / n) * np.cos(np.pi * p * (2 * q + 1) / (2 * n))
    m[0] = np.sqrt(1.0 / n)
    return m


def _subbands(image: np.ndarray, n: int) -> np.ndarray:
    """Block DCT of ``image`` rearranged as (n, n, H/n, W/n): ``out[m, k]`` is subband ``(m, k)``."""
    h, w = image.shape
    blocks = image.reshape(h // n, n, w // n, n)
    d = _dct_matrix(n)
    # coefficients[m, k] of block (i, j) = sum_{p,q} d[m, p] x[i, p, j, q] d[k, q]
    return np.einsum("mp,ipjq,kq->mkij", d, blocks, d, optimize=True)


@builtin_metric("dss")
def dss(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    dct_size: int = 8,
    sigma_weight: float = 1.55,
    kernel_size: int = 3,
    sigma_similarity: float = 1.5,
    percentile: float = 0.05,
) -> float:
    """DCT subband similarity (DSS) of single-channel images.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W), at least ``dct_size`` on each side
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...).
    dct_size : int, default=8
        Block size of the DCT.
    sigma_weight : float, default=1.55
        Width of the Gaussian subband weighting.
    kernel_size : int, default=3
        Size of the Gaussian window for local variances.
    sigma_similarity : float, default=1.5
        Its standard deviation.
    percentile : float in (0, 1], default=0.05
        Fraction of worst local similarities averaged per subband.
    """
    from scipy import ndimage

    func = "dss"
    n = check_positive_int(dct_size, name="dct_size", func=func)
    ks = check_positive_int(kernel_size, name="kernel_size", func=func)
    x, y = rescaled_pair(image_true, image_test, data_range, func=func, min_size=max(n, ks))
    if not 0 < percentile <= 1:
        raise InvalidParameterError(
            f"The 'percentile' parameter of dss must be in (0, 1]. Got {percentile!r}."
        )
    if sigma_weight <= 0 or sigma_similarity <= 0:
        raise InvalidParameterError(
            "The 'sigma_weight' and 'sigma_similarity' parameters of dss must be > 0. "
            f"Got {sigma_weight!r} and {sigma_similarity!r}."
        )
    h, w = (x.shape[0] // n) * n, (x.shape[1] // n) * n
    bx = _subbands(x[:h, :w], n)
    by = _subbands(y[:h, :w], n)
    coords = np.arange(1, n + 1) - 0.5
    weight = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2.0 * sigma_weight**2))
    keep = weight >= 1e-2
    weight = np.where(keep, weight, 0.0)
    weight = weight / weight.sum()
    kernel = gaussian_kernel(ks, sigma_similarity)
    k1 = kernel[:, ks // 2] / np.sqrt(kernel[ks // 2, ks // 2]) if ks > 1 else np.ones(1)
    idx = np.nonzero(keep)
    sx, sy = bx[idx], by[idx]  # (n_kept, h/n, w/n)

    def smooth(a: np.ndarray) -> np.ndarray:
        a = ndimage.correlate1d(a, k1, axis=-2, mode="constant")
        return ndimage.correlate1d(a, k1, axis=-1, mode="constant")

    mu_x, mu_y = smooth(sx), smooth(sy)
    var_x = np.maximum(smooth(sx * sx) - mu_x**2, 0.0)
    var_y = np.maximum(smooth(sy * sy) - mu_y**2, 0.0)
    c = np.where((idx[0] == 0) & (idx[1] == 0), 1000.0, 300.0)[:, None, None]
    sd_xy = np.sqrt(var_x * var_y)
    left = ((2.0 * sd_xy + c) / (var_x + var_y + c)).reshape(len(c), -1)
    n_worst = int(np.floor(percentile * left.shape[1] + 0.5))
    sim = (
        np.partition(left, n_worst - 1, axis=1)[:, :n_worst].mean(axis=1)
        if n_worst
        else np.full(len(c), np.nan)
    )
    dc = np.flatnonzero((idx[0] == 0) & (idx[1] == 0))
    if dc.size and n_worst:
        i = int(dc[0])
        cov = smooth(sx[i] * sy[i]) - mu_x[i] * mu_y[i]
        right = ((cov + 1000.0) / (sd_xy[i] + 1000.0)).ravel()
        sim[i] *= np.partition(right, n_worst - 1)[:n_worst].mean()
    return float(np.sum(sim * weight[idx]))
