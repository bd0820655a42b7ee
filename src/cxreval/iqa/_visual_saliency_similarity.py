"""VSI: visual saliency-induced index.

The saliency maps ``VS`` of both images (SDSP: frequency, location and colour priors) act as a feature and
as the pooling weight::

    S = S_VS * S_G^alpha * S_C^beta,      VSI = sum(S * VS_m) / sum(VS_m),   VS_m = max(VS_1, VS_2)

with ``S_VS``, ``S_G`` (Scharr gradients of the L channel) and ``S_C`` (product of the M and N chroma
similarities) similarity maps ``(2ab + c) / (a^2 + b^2 + c)`` on the 0..255 scale (images are rescaled
``x * 255 / data_range``, no rounding).

Conventions (documented differences between implementations):

* VSI is defined for RGB images. ``grey='replicate'`` (default) runs the colour method on ``(g, g, g)``, as
  the authors' MATLAB code and piq/pyiqa do for a grey image repeated to three channels; because the LMN
  and Lab conversions are not exactly achromatic, the chroma terms then carry a small intensity-dependent
  signal. ``grey='achromatic'`` sets the chroma channels to zero: ``S_C = 1`` and the SDSP colour prior is
  dropped (it is undefined for an image without colour).
* ``downsample='matlab'`` (default) is ``conv2(X, ones(f)/f^2, 'same')`` then ``X(1:f:end, 1:f:end)``
  with ``f = max(1, round(min(H, W) / 256))`` as in ``VSI.m``; ``'piq'`` is piq's replicate padding of
  ``f // 2`` rows before the image followed by ``avg_pool2d``.
* The SDSP resampling to 256x256 and back is bilinear without antialiasing, as piq/pyiqa (MATLAB's
  ``imresize(..., 'bilinear')`` antialiases when shrinking).

References
----------
.. [1] L. Zhang, Y. Shen and H. Li, "VSI: a visual saliency-induced index for perceptual image quality
   assessment", IEEE TIP 23(10):4270-4281, 2014. doi:10.1109/TIP.2014.2346028
.. [2] L. Zhang, Z. Gu and H. Li, "SDSP: a novel saliency detection method by combining simple priors",
   ICIP 2013. doi:10.1109/ICIP.2013.6738036
"""

from __future__ import annotations

import functools

import numpy as np

from .._validation import check_choice
from ..io.images import box_downsample
from ._catalogue import builtin_metric
from ._image import (
    SCHARR,
    downsample_factor,
    gradient_magnitude,
    rescaled_pair,
    similarity_map,
)

__all__ = ["vsi", "sdsp"]

_SRGB_TO_XYZ_ROWSUM = np.array(
    [0.4124564 + 0.3575761 + 0.1804375, 0.2126729 + 0.7151522 + 0.0721750, 0.0193339 + 0.1191920 + 0.9503041]
)
_D50 = np.array([0.9642119944211994, 1.0, 0.8251882845188288])
_LMN_ROWSUM = np.array([0.06 + 0.63 + 0.27, 0.30 + 0.04 - 0.35, 0.34 - 0.6 + 0.17])


@functools.lru_cache(maxsize=16)
def _bilinear_matrix(n_in: int, n_out: int, align_corners: bool) -> np.ndarray:
    """(n_out, n_in) matrix of 1-D linear interpolation with torch's ``interpolate`` conventions."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(1)
    else:
        src = np.maximum((dst + 0.5) * (n_in / n_out) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(int), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    w1 = src - i0
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.arange(n_out), i0), 1.0 - w1)
    np.add.at(m, (np.arange(n_out), i1), w1)
    m.setflags(write=False)
    return m


def _resize(image: np.ndarray, shape: tuple[int, int], align_corners: bool) -> np.ndarray:
    r = _bilinear_matrix(image.shape[0], shape[0], align_corners)
    c = _bilinear_matrix(image.shape[1], shape[1], align_corners)
    return r @ image @ c.T


@functools.lru_cache(maxsize=4)
def _sdsp_priors(size: int, omega_0: float, sigma_f: float, sigma_d: float) -> tuple[np.ndarray, np.ndarray]:
    g = np.arange(-size / 2, size / 2) / size
    xx, yy = g[:, None], g[None, :]
    radius = np.sqrt(xx * xx + yy * yy)
    r = np.fft.ifftshift(radius * (radius <= 0.5))
    r[0, 0] = 1.0
    with np.errstate(divide="ignore"):
        lg = np.exp(-(np.log(r / omega_0) ** 2) / (2.0 * sigma_f**2))
    lg[0, 0] = 0.0
    cx, cy = xx * size + 1, yy * size + 1
    sd = np.exp(-(cx * cx + cy * cy) / sigma_d**2)
    lg.setflags(write=False)
    sd.setflags(write=False)
    return lg, sd


def _grey_lab(g: np.ndarray) -> np.ndarray:
    """CIE Lab (D50 white, sRGB primaries; SDSP's ``RGB2Lab``) of the grey image ``(g, g, g)``, g in 0..255."""
    v = g / 255.0
    lin = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
    t = lin[None] * (_SRGB_TO_XYZ_ROWSUM / _D50)[:, None, None]
    f = np.where(t > 0.008856, np.cbrt(t), (903.3 * t + 16.0) / 116.0)
    return np.stack([116.0 * f[1] - 16.0, 500.0 * (f[0] - f[1]), 200.0 * (f[1] - f[2])])


def sdsp(
    image: np.ndarray,
    *,
    omega_0: float = 0.021,
    sigma_f: float = 1.34,
    sigma_d: float = 145.0,
    sigma_c: float = 0.001,
    colour_prior: bool = True,
) -> np.ndarray:
    """SDSP saliency map of a grey image on the 0..255 scale (treated as ``(g, g, g)``), in [0, 1].

    Parameters
    ----------
    image : numpy.ndarray of shape (H, W)
        Values on the 0..255 scale.
    omega_0, sigma_f : float
        Log-Gabor centre frequency and bandwidth of the frequency prior.
    sigma_d : float
        Width of the location (centre) prior.
    sigma_c : float
        Width of the colour (warm colours) prior.
    colour_prior : bool, default=True
        False drops the colour prior (used for ``grey='achromatic'``).

    Returns
    -------
    vs : numpy.ndarray of shape (H, W)
    """
    from scipy import fft as sfft

    size = 256
    small = _resize(image, (size, size), align_corners=False)
    lab = _grey_lab(small)
    lg, sd = _sdsp_priors(size, float(omega_0), float(sigma_f), float(sigma_d))
    filt = sfft.ifft2(sfft.fft2(lab, axes=(-2, -1), workers=1) * lg, axes=(-2, -1), workers=1).real
    sf = np.sqrt((filt**2).sum(axis=0))
    eps = np.finfo(np.float64).eps
    vs = sf * sd
    if colour_prior:
        mn = lab.min(axis=(1, 2), keepdims=True)
        mx = lab.max(axis=(1, 2), keepdims=True)
        norm = (lab - mn) / (mx - mn + eps)
        vs = vs * (1.0 - np.exp(-(norm[1] ** 2 + norm[2] ** 2) / sigma_c**2))
    vs = _resize(vs, image.shape, align_corners=True)
    return (vs - vs.min()) / (vs.max() - vs.min() + eps)


@builtin_metric("vsi")
def vsi(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    c1: float = 1.27,
    c2: float = 386.0,
    c3: float = 130.0,
    alpha: float = 0.4,
    beta: float = 0.02,
    omega_0: float = 0.021,
    sigma_f: float = 1.34,
    sigma_d: float = 145.0,
    sigma_c: float = 0.001,
    grey: str = "replicate",
    downsample: str = "matlab",
) -> float:
    """Visual saliency-induced index (VSI) of single-channel images.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...).
    c1, c2, c3 : float, default=1.27, 386, 130
        Constants of the saliency, gradient and chroma similarities.
    alpha, beta : float, default=0.4, 0.02
        Exponents of the gradient and chroma similarities.
    omega_0, sigma_f, sigma_d, sigma_c : float
        SDSP parameters, see :func:`sdsp`.
    grey : {'replicate', 'achromatic'}, default='replicate'
        See the module notes.
    downsample : {'matlab', 'piq'}, default='matlab'
        See the module notes.
    """
    func = "vsi"
    x, y = rescaled_pair(image_true, image_test, data_range, func=func, min_size=8)  # saliency at full size
    grey = check_choice(grey, ("replicate", "achromatic"), name="grey", func=func)
    downsample = check_choice(downsample, ("matlab", "piq"), name="downsample", func=func)
    colour = grey == "replicate"
    vs_x = sdsp(x, omega_0=omega_0, sigma_f=sigma_f, sigma_d=sigma_d, sigma_c=sigma_c, colour_prior=colour)
    vs_y = sdsp(y, omega_0=omega_0, sigma_f=sigma_f, sigma_d=sigma_d, sigma_c=sigma_c, colour_prior=colour)
    down = functools.partial(
        box_downsample,
        f=downsample_factor(x.shape),
        convention="matlab" if downsample == "matlab" else "replicate",
    )
    vs_x, vs_y, x, y = down(vs_x), down(vs_y), down(x), down(y)
    s_vs = similarity_map(vs_x, vs_y, c1)
    s_g = similarity_map(
        gradient_magnitude(_LMN_ROWSUM[0] * x, SCHARR), gradient_magnitude(_LMN_ROWSUM[0] * y, SCHARR), c2
    )
    s = s_vs * s_g**alpha
    if colour:
        s_c = similarity_map(_LMN_ROWSUM[1] * x, _LMN_ROWSUM[1] * y, c3) * similarity_map(
            _LMN_ROWSUM[2] * x, _LMN_ROWSUM[2] * y, c3
        )
        s = s * np.abs(s_c) ** beta * np.cos(beta * np.where(s_c < 0, np.pi, 0.0))
    vs_m = np.maximum(vs_x, vs_y)
    eps = np.finfo(np.float64).eps
    return float((np.sum(s * vs_m) + eps) / (np.sum(vs_m) + eps))
