"""Multi-scale decompositions used by IW-SSIM, CW-SSIM and VIF (numpy ports of matlabPyrTools).

* :func:`laplacian_pyramid` — ``buildLpyr(im, ht)`` with the ``binom5`` filter (``sqrt(2) * [1 4 6 4 1] / 16``)
  and mirror (``reflect1``) edges; upsampling inserts zeros and filters the mirrored upsampled signal.
* :func:`build_scf_pyramid` — ``buildSCFpyr(im, ht, order)``: complex steerable pyramid built in the
  Fourier domain (raised-cosine radial masks, ``order + 1`` oriented angular masks).
* :func:`build_sf_pyramid` — ``buildSFpyr(im, ht, order)``: the real steerable pyramid in the Fourier
  domain, the same radial/angular split with real bands.

Reference: E. P. Simoncelli, W. T. Freeman, "The steerable pyramid: a flexible architecture for
multi-scale derivative computation", ICIP 1995. doi:10.1109/ICIP.1995.537667
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage
from scipy.special import factorial

__all__ = ["laplacian_pyramid", "build_scf_pyramid", "build_sf_pyramid"]

_BINOM5 = np.sqrt(2.0) * np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0


def _down(a: np.ndarray, axis: int) -> np.ndarray:
    out = ndimage.correlate1d(a, _BINOM5, axis=axis, mode="mirror")
    return out[::2] if axis == 0 else out[:, ::2]


def _up(a: np.ndarray, axis: int, size: int) -> np.ndarray:
    shape = list(a.shape)
    shape[axis] = size
    z = np.zeros(shape)
    if axis == 0:
        z[::2] = a
    else:
        z[:, ::2] = a
    return ndimage.correlate1d(z, _BINOM5, axis=axis, mode="mirror")


def laplacian_pyramid(image: np.ndarray, height: int) -> list[np.ndarray]:
    """Laplacian pyramid (finest band first, the low-pass residual last), ``buildLpyr`` with ``binom5``."""
    bands = []
    im = image
    for _ in range(height - 1):
        lo = _down(im, 1)
        lo2 = _down(lo, 0)
        hi = _up(lo2, 0, lo.shape[0])
        hi2 = _up(hi, 1, im.shape[1])
        bands.append(im - hi2)
        im = lo2
    bands.append(im)
    return bands


def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    ctr = np.ceil((np.array([h, w]) + 0.5) / 2).astype(int)  # 1-based centre
    xr = (np.arange(1, w + 1) - ctr[1]) / (w / 2.0)
    yr = (np.arange(1, h + 1) - ctr[0]) / (h / 2.0)
    xramp, yramp = np.meshgrid(xr, yr)
    angle = np.arctan2(yramp, xramp)
    rad = np.sqrt(xramp ** 2 + yramp ** 2)
    rad[ctr[0] - 1, ctr[1] - 1] = rad[ctr[0] - 1, ctr[1] - 2]
    return np.log2(rad), angle


def _rcos(width: float = 1.0, position: float = -0.5) -> tuple[np.ndarray, np.ndarray]:
    sz = 256
    x = np.pi * np.arange(-sz - 1, 2) / (2 * sz)
    y = np.cos(x) ** 2
    y[0] = y[1]
    y[sz + 2] = y[sz + 1]
    x = position + (2 * width / np.pi) * (x + np.pi / 4)
    return x, y


def _point_op(im: np.ndarray, lut: np.ndarray, origin: float, increment: float) -> np.ndarray:
    xs = origin + increment * np.arange(lut.size)
    return np.interp(im, xs, lut)


def _build(image: np.ndarray, height: int, order: int, complex_: bool) -> list:
    h, w = image.shape
    log_rad, angle = _grid(h, w)
    xrcos, yrcos = _rcos(1.0, -0.5)
    yrcos = np.sqrt(yrcos)
    yircos = np.sqrt(1.0 - yrcos ** 2)
    dx = xrcos[1] - xrcos[0]
    lo0mask = _point_op(log_rad, yircos, xrcos[0], dx)
    hi0mask = _point_op(log_rad, yrcos, xrcos[0], dx)
    imdft = np.fft.fftshift(np.fft.fft2(image))
    hi0 = np.real(np.fft.ifft2(np.fft.ifftshift(imdft * hi0mask)))
    lodft = imdft * lo0mask
    pyr: list = [hi0]
    nbands = order + 1
    lutsize = 1024
    xcosn = np.pi * np.arange(-(2 * lutsize + 1), lutsize + 2) / lutsize
    const = (2.0 ** (2 * order)) * factorial(order) ** 2 / (nbands * factorial(2 * order))
    if complex_:
        alfa = np.mod(np.pi + xcosn, 2 * np.pi) - np.pi
        ycosn = 2 * np.sqrt(const) * np.cos(xcosn) ** order * (np.abs(alfa) < np.pi / 2)
    else:
        ycosn = np.sqrt(const) * np.cos(xcosn) ** order
    fact = (-1j) ** (nbands - 1)
    for _ in range(height):
        xrcos = xrcos - 1.0
        himask = _point_op(log_rad, yrcos, xrcos[0], dx)
        bands = []
        for b in range(nbands):
            anglemask = _point_op(angle, ycosn, xcosn[0] + np.pi * b / nbands, xcosn[1] - xcosn[0])
            band = np.fft.ifft2(np.fft.ifftshift(fact * lodft * anglemask * himask))
            bands.append(band if complex_ else np.real(band))
        pyr.append(bands)
        dims = np.array(lodft.shape)
        ctr = np.ceil((dims + 0.5) / 2).astype(int)
        lodims = np.ceil((dims - 0.5) / 2).astype(int)
        loctr = np.ceil((lodims + 0.5) / 2).astype(int)
        lostart = ctr - loctr  # 0-based
        loend = lostart + lodims
        log_rad = log_rad[lostart[0]:loend[0], lostart[1]:loend[1]]
        angle = angle[lostart[0]:loend[0], lostart[1]:loend[1]]
        lodft = lodft[lostart[0]:loend[0], lostart[1]:loend[1]]
        lomask = _point_op(log_rad, np.abs(yircos), xrcos[0], dx)
        lodft = lomask * lodft
    pyr.append(np.real(np.fft.ifft2(np.fft.ifftshift(lodft))))
    return pyr


def build_scf_pyramid(image: np.ndarray, height: int, nbands: int) -> list:
    """Complex steerable pyramid: ``[highpass, [bands of level 1], ..., [bands of level height], lowpass]``."""
    return _build(np.asarray(image, dtype=np.float64), height, nbands - 1, True)


def build_sf_pyramid(image: np.ndarray, height: int, nbands: int) -> list:
    """Real steerable pyramid (``buildSFpyr``), same layout as :func:`build_scf_pyramid`."""
    return _build(np.asarray(image, dtype=np.float64), height, nbands - 1, False)
