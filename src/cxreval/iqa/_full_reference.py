"""Pixel-statistics full-reference metrics: PSNR, RMSE, UQI and AMBE.

All take single-channel float images with an explicit ``data_range`` and compute in float64 without
rounding to 8 bits.

References
----------
.. [1] Z. Wang and A. C. Bovik, "A universal image quality index", IEEE Signal Processing Letters
   9(3):81-84, 2002. doi:10.1109/97.995823
.. [2] S.-D. Chen and A. R. Ramli, "Minimum mean brightness error bi-histogram equalization in contrast
   enhancement", IEEE Trans. Consumer Electronics 49(4):1310-1319, 2003. doi:10.1109/TCE.2003.1261234
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._catalogue import builtin_metric
from ._image import check_pair

__all__ = ["psnr", "rmse", "uqi", "ambe"]


def _mse(x: np.ndarray, y: np.ndarray) -> float:
    """Mean squared difference, accumulated over cache-sized row blocks (no full-size temporary)."""
    xf, yf = x.reshape(-1), y.reshape(-1)
    step = 1 << 15
    buf = np.empty(min(step, xf.size))
    total = 0.0
    for i in range(0, xf.size, step):
        d = buf[: min(step, xf.size - i)]
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite input: the caller checks the result
            np.subtract(xf[i : i + step], yf[i : i + step], out=d)
            total += float(np.dot(d, d))
    return total / xf.size


@builtin_metric("psnr")
def psnr(image_true: np.ndarray, image_test: np.ndarray, *, data_range: float) -> float:
    """Peak signal-to-noise ratio, ``10 log10(data_range**2 / MSE)`` in dB.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        Reference and test images, single channel.
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...); the peak in the formula.

    Returns
    -------
    value : float
        ``inf`` for identical images.

    Examples
    --------
    >>> import numpy as np
    >>> round(psnr(np.zeros((4, 4)), np.full((4, 4), 0.1), data_range=1.0), 6)
    20.0
    """
    x, y, dr = check_pair(image_true, image_test, data_range, func="psnr", finite=False)
    mse = _mse(x, y)
    if not np.isfinite(mse):  # a NaN/inf input (raises), else finite values whose squares overflow
        check_pair(image_true, image_test, data_range, func="psnr")
    if mse == 0.0:
        return float("inf")
    with np.errstate(divide="ignore"):
        return float(10.0 * np.log10(dr * dr / mse))


@builtin_metric("rmse")
def rmse(
    image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, normalize: bool = True
) -> float:
    """Root mean squared error ``sqrt(mean((x - y)**2))``.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
        Span of the stored type.
    normalize : bool, default=True
        Divide by ``data_range`` so that the value does not depend on the bit depth (an 8-bit image and
        its exact 16-bit copy give the same value). ``False`` gives grey levels, as MATLAB's
        ``sqrt(immse(x, y))``.

    Returns
    -------
    value : float
    """
    return _in_range_units(
        image_true, image_test, data_range, normalize, "rmse", lambda x, y: np.sqrt(np.mean((x - y) ** 2))
    )


def _in_range_units(
    image_true: np.ndarray,
    image_test: np.ndarray,
    data_range: float,
    normalize: bool,
    func: str,
    error: Callable[[np.ndarray, np.ndarray], float],
) -> float:
    """``error`` of the checked pair in grey levels, divided by ``data_range`` when ``normalize``."""
    x, y, dr = check_pair(image_true, image_test, data_range, func=func)
    v = float(error(x, y))
    return v / dr if normalize else v


@builtin_metric("ambe")
def ambe(
    image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, normalize: bool = True
) -> float:
    """Absolute mean brightness error ``|mean(x) - mean(y)|`` [2]_.

    Parameters are those of :func:`rmse` (``normalize=False`` gives grey levels, as the original definition on
    8-bit images). Returns a float.
    """
    return _in_range_units(
        image_true, image_test, data_range, normalize, "ambe", lambda x, y: abs(np.mean(x) - np.mean(y))
    )


def _box_sum_valid(a: np.ndarray, b: int) -> np.ndarray:
    """``filter2(ones(b), a, 'valid')``."""
    from scipy import ndimage

    ones = np.ones(b)
    s = ndimage.correlate1d(a, ones, axis=0, mode="constant", origin=(b - 1) // 2 - b // 2)
    s = ndimage.correlate1d(s, ones, axis=1, mode="constant", origin=(b - 1) // 2 - b // 2)
    r0 = (b - 1) // 2
    return s[r0 : r0 + a.shape[0] - b + 1, r0 : r0 + a.shape[1] - b + 1]


@builtin_metric("uqi")
def uqi(image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, block_size: int = 8) -> float:
    """Universal image quality index [1]_, the authors' ``img_qi.m``.

    In each ``block_size x block_size`` window (sliding, 'valid'),
    ``Q = 4 s_xy m_x m_y / ((s_x^2 + s_y^2)(m_x^2 + m_y^2))``; windows where only the variance term is
    zero get ``2 m_x m_y / (m_x^2 + m_y^2)``, windows where both are zero get 1. The index is the mean of
    the map. It is invariant to the scale of the data, so ``data_range`` is only validated. Zero tests use
    a relative tolerance of ``1e-12`` (the original tests exact zeros on 8-bit integers held as doubles).

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
    block_size : int, default=8

    Returns
    -------
    value : float in [-1, 1]
    """
    x, y, _ = check_pair(image_true, image_test, data_range, func="uqi", min_size=block_size)
    n = float(block_size * block_size)
    sx = _box_sum_valid(x, block_size)
    sy = _box_sum_valid(y, block_size)
    sxx = _box_sum_valid(x * x, block_size)
    syy = _box_sum_valid(y * y, block_size)
    sxy = _box_sum_valid(x * y, block_size)
    mul = sx * sy
    sq_mul = sx * sx + sy * sy
    numerator = 4.0 * (n * sxy - mul) * mul
    den1 = n * (sxx + syy) - sq_mul
    tol = 1e-12 * n * (sxx + syy)
    den1 = np.where(np.abs(den1) <= tol, 0.0, den1)
    denominator = den1 * sq_mul
    qmap = np.ones_like(denominator)
    idx = (den1 == 0) & (sq_mul != 0)
    qmap[idx] = 2.0 * mul[idx] / sq_mul[idx]
    idx = denominator != 0
    qmap[idx] = numerator[idx] / denominator[idx]
    return float(np.mean(qmap))
