"""Input checks and filtering utilities for the IQA metrics (images are read by :mod:`cxreval.io.images`).

Images are handled as 2-D ``float64`` arrays together with an explicit ``data_range`` — the span of
values the stored type can take (255 for 8-bit, 65535 for 16-bit, ``2**BitsStored - 1`` for DICOM,
1.0 for float images) — never guessed from the pixel values and never rounded to 8 bits.

Filtering follows MATLAB's conventions, because the reference implementations of the metrics are
MATLAB code: :func:`imfilter` is correlation (not convolution) with MATLAB's boundary options and its
kernel centre ``floor((k + 1) / 2)`` (1-based) for even sizes; :func:`filter2_valid` is
``filter2(k, x, 'valid')``; :func:`conv2` is ``conv2(x, k, shape)`` with zero padding;
:func:`gaussian_kernel` is ``fspecial('gaussian', size, sigma)``. Separable kernels are applied as two
1-D passes.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, float_array, is_number
from ..exceptions import InvalidParameterError
from ..io.images import box_downsample

__all__ = [
    "PREWITT",
    "SCHARR",
    "gradient_magnitude",
    "similarity_map",
    "check_image",
    "check_pair",
    "check_data_range",
    "rescaled_pair",
    "gaussian_kernel",
    "imfilter",
    "filter2_valid",
    "conv2",
    "auto_downsample",
    "downsample_factor",
]


def check_data_range(data_range: object, *, func: str) -> float:
    """Validate ``data_range`` (a positive finite number) and return it as float."""
    if not is_number(data_range) or not np.isfinite(float(data_range)) or float(data_range) <= 0:
        raise InvalidParameterError(
            f"The 'data_range' parameter of {func} must be a positive finite number (255 for 8-bit, 65535 for "
            f"16-bit, 1.0 for float images). Got {data_range!r} instead."
        )
    return float(data_range)


def check_image(
    image: object, *, name: str = "image", func: str, min_size: int = 1, finite: bool = True
) -> np.ndarray:
    """Return ``image`` as a 2-D finite float64 array, or raise with a message naming ``func`` and ``name``.

    ``finite=False`` skips the finiteness check, for a caller whose result is finite only if every input
    is (it must then call again with ``finite=True`` when its result is not finite)."""
    a = float_array(
        image,
        InvalidParameterError(f"{func}: '{name}' must be a numeric 2-D array. Got {type(image).__name__}."),
    )
    if a.ndim != 2:
        raise InvalidParameterError(
            f"{func}: '{name}' must be a 2-D single-channel image. Got shape {a.shape}."
        )
    if min(a.shape) < min_size:
        raise InvalidParameterError(
            f"{func}: '{name}' must be at least {min_size}x{min_size} pixels. Got shape {a.shape}."
        )
    # a sum is finite iff every term is (NaN and inf propagate), unless finite values overflow: then look
    if finite and not np.isfinite(np.add.reduce(a, axis=None)) and not np.all(np.isfinite(a)):
        bad = int((~np.isfinite(a)).sum())
        raise InvalidParameterError(f"{func}: '{name}' must be finite; it has {bad} NaN/inf value(s).")
    return a


def check_pair(
    image_true: object,
    image_test: object,
    data_range: object,
    *,
    func: str,
    min_size: int = 1,
    finite: bool = True,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Validate a full-reference pair and its data range; return ``(image_true, image_test, data_range)``
    (``finite``: see :func:`check_image`)."""
    x = check_image(image_true, name="image_true", func=func, min_size=min_size, finite=finite)
    y = check_image(image_test, name="image_test", func=func, min_size=min_size, finite=finite)
    if x.shape != y.shape:
        raise InvalidParameterError(
            f"{func}: 'image_true' and 'image_test' must have the same shape. "
            f"Got {x.shape} and {y.shape} instead."
        )
    return x, y, check_data_range(data_range, func=func)


def gaussian_kernel(size: int | tuple[int, int], sigma: float) -> np.ndarray:
    """MATLAB's ``fspecial('gaussian', size, sigma)``: a normalised 2-D Gaussian window."""
    h: int
    w: int
    h, w = (size, size) if np.isscalar(size) else size  # type: ignore[assignment, misc]
    y = np.arange(h, dtype=np.float64) - (h - 1) / 2.0
    x = np.arange(w, dtype=np.float64) - (w - 1) / 2.0
    k = np.exp(-(y[:, None] ** 2 + x[None, :] ** 2) / (2.0 * sigma * sigma))
    k[k < np.finfo(np.float64).eps * k.max()] = 0.0
    return k / k.sum()


_MODES = {"symmetric": "reflect", "replicate": "nearest", "circular": "wrap", "zero": "constant"}


def _separate(kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    if min(kernel.shape) == 1:
        return None
    u, s, vt = np.linalg.svd(kernel)
    if s[0] == 0 or s[1] > 1e-13 * s[0]:
        return None
    col = u[:, 0] * np.sqrt(s[0])
    row = vt[0] * np.sqrt(s[0])
    if col.sum() < 0:
        col, row = -col, -row
    return col, row


def imfilter(image: np.ndarray, kernel: np.ndarray, *, mode: str = "symmetric") -> np.ndarray:
    """MATLAB ``imfilter(image, kernel, mode, 'same')`` (correlation), in float64.

    Parameters
    ----------
    image : numpy.ndarray of shape (H, W)
    kernel : numpy.ndarray of shape (kh, kw)
        Centre at 0-based index ``(k - 1) // 2`` as MATLAB's for even sizes.
    mode : {'symmetric', 'replicate', 'circular', 'zero'}, default='symmetric'
        ``'zero'`` is MATLAB's default (and ``filter2(k, x, 'same')``).
    """
    from scipy import ndimage

    kernel = np.asarray(kernel, dtype=np.float64)
    if kernel.ndim == 1:
        kernel = kernel[None, :]
    nd_mode = _MODES[check_choice(mode, _MODES, name="mode", func="imfilter")]
    origin = [(k - 1) // 2 - k // 2 for k in kernel.shape]
    sep = _separate(kernel)
    if sep is not None:
        col, row = sep
        out = ndimage.correlate1d(image, col, axis=0, mode=nd_mode, cval=0.0, origin=origin[0])
        return ndimage.correlate1d(out, row, axis=1, mode=nd_mode, cval=0.0, origin=origin[1])
    if kernel.shape[0] == 1:
        return ndimage.correlate1d(image, kernel[0], axis=1, mode=nd_mode, cval=0.0, origin=origin[1])
    if kernel.shape[1] == 1:
        return ndimage.correlate1d(image, kernel[:, 0], axis=0, mode=nd_mode, cval=0.0, origin=origin[0])
    return ndimage.correlate(image, kernel, mode=nd_mode, cval=0.0, origin=origin)


def filter2_valid(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """MATLAB ``filter2(kernel, image, 'valid')``: correlation, output ``(H - kh + 1, W - kw + 1)``."""
    kernel = np.asarray(kernel, dtype=np.float64)
    kh, kw = kernel.shape
    same = imfilter(image, kernel, mode="zero")
    r0, c0 = (kh - 1) // 2, (kw - 1) // 2
    return same[r0 : r0 + image.shape[0] - kh + 1, c0 : c0 + image.shape[1] - kw + 1]


def conv2(image: np.ndarray, kernel: np.ndarray, shape: str = "same") -> np.ndarray:
    """MATLAB ``conv2(image, kernel, shape)`` (true convolution, zero padding), ``shape`` in
    ``{'same', 'valid', 'full'}``."""
    kernel = np.asarray(kernel, dtype=np.float64)
    flipped = kernel[::-1, ::-1]
    kh, kw = kernel.shape
    h, w = image.shape
    if shape == "full":
        padded = np.pad(image, ((kh - 1, kh - 1), (kw - 1, kw - 1)))
        return filter2_valid(padded, flipped)
    if shape == "valid":
        return filter2_valid(image, flipped)
    if shape == "same":
        full = conv2(image, kernel, "full")
        r0, c0 = kh // 2, kw // 2
        return full[r0 : r0 + h, c0 : c0 + w]
    raise InvalidParameterError(f"conv2: shape must be 'same', 'valid' or 'full'. Got {shape!r} instead.")


def auto_downsample(image: np.ndarray, factor: int | None = None) -> np.ndarray:
    """The automatic downsampling of Wang et al.'s ``ssim.m`` (also used by FSIM, VSI, ...).

    ``f = max(1, round(min(H, W) / 256))``; the image is averaged with an ``f x f`` box filter
    (``imfilter(..., 'symmetric', 'same')``) and every ``f``-th pixel kept (``x(1:f:end, 1:f:end)``).
    ``factor`` overrides ``f``.
    """
    f = downsample_factor(image.shape) if factor is None else int(factor)
    if f <= 1:
        return image
    lpf = np.full((f, f), 1.0 / (f * f))
    return imfilter(image, lpf, mode="symmetric")[::f, ::f]


def downsample_factor(shape: tuple[int, ...]) -> int:
    """``max(1, round(min(H, W) / 256))`` with MATLAB's round-half-away-from-zero (``ssim.m``, FSIM, VSI, MDSI)."""
    return max(1, int(np.floor(min(shape) / 256.0 + 0.5)))


def rescaled_pair(
    image_true: object,
    image_test: object,
    data_range: object,
    *,
    func: str,
    min_size: int = 1,
    factor: int | str = 1,
    downsample: str = "matlab",
) -> tuple[np.ndarray, np.ndarray]:
    """The common start of the metrics tuned on 8-bit images: validate, optionally downsample, rescale.

    :func:`check_pair` validates the pair; both images are then averaged over ``factor x factor`` blocks
    (:func:`~cxreval.io.images.box_downsample` in the ``downsample`` convention; ``factor='auto'`` is :func:`downsample_factor`)
    and rescaled to the 0..255 scale the published constants were tuned for, ``x * 255 / data_range`` in
    float64 without rounding, so 16-bit input keeps its precision. (Both steps are linear; averaging first
    is cheaper and equal up to floating-point rounding; exact for ``data_range=255``.)

    Returns
    -------
    image_true, image_test : numpy.ndarray
        float64 on the 0..255 scale.
    """
    x, y, dr = check_pair(image_true, image_test, data_range, func=func, min_size=min_size)
    f = downsample_factor(x.shape) if factor == "auto" else int(factor)
    if f > 1:
        x, y = box_downsample(x, f, convention=downsample), box_downsample(y, f, convention=downsample)
    return x * (255.0 / dr), y * (255.0 / dr)  # new arrays: callers may work in place


# separable 3x3 gradient operators: (smoothing, difference)
PREWITT = (np.array([1.0, 1.0, 1.0]) / 3.0, np.array([-1.0, 0.0, 1.0]))
SCHARR = (np.array([3.0, 10.0, 3.0]) / 16.0, np.array([-1.0, 0.0, 1.0]))


def gradient_magnitude(image: np.ndarray, kernel: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Gradient magnitude with a separable 3x3 operator (smoothing ⊗ difference), zero padding.

    The sign convention (convolution or correlation) does not change the magnitude."""
    smooth, _ = kernel
    a, b, c = (float(v) for v in smooth)
    p = np.pad(image, 1)
    rs = a * p[:-2] + b * p[1:-1] + c * p[2:]  # smoothed along rows, shape (H, W + 2)
    gx = rs[:, 2:] - rs[:, :-2]
    cs = a * p[:, :-2] + b * p[:, 1:-1] + c * p[:, 2:]  # smoothed along columns, shape (H + 2, W)
    gy = cs[2:] - cs[:-2]
    return np.sqrt(gx * gx + gy * gy)


def similarity_map(a: np.ndarray, b: np.ndarray, c: float) -> np.ndarray:
    """The similarity map ``S(a, b; c) = (2ab + c) / (a^2 + b^2 + c)`` (GMSD, MDSI, FSIM, VSI)."""
    return (2.0 * a * b + c) / (a * a + b * b + c)
