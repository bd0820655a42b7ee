"""Multi-scale decompositions used by IW-SSIM, CW-SSIM and VIF (numpy ports of matlabPyrTools).

* :func:`laplacian_pyramid` — ``buildLpyr(im, ht)`` with the ``binom5`` filter (``sqrt(2) * [1 4 6 4 1] / 16``)
  and mirror (``reflect1``) edges; upsampling inserts zeros and filters the mirrored upsampled signal.
* :func:`build_scf_pyramid` — ``buildSCFpyr(im, ht, order)``: complex steerable pyramid built in the
  Fourier domain (raised-cosine radial masks, ``order + 1`` oriented angular masks).
* :func:`build_sf_pyramid` — ``buildSFpyr(im, ht, order)``: the real steerable pyramid in the Fourier
  domain, the same radial/angular split with real bands.
* :func:`build_sp5_pyramid` — ``buildSpyr(im, ht, 'sp5Filters', 'reflect1')``: the spatial steerable
  pyramid with Simoncelli's published fifth-order (6-orientation) filter set ``sp5Filters``: a 9x9
  high-pass ``hi0filt``, a 5x5 low-pass ``lo0filt`` splitting the image first, then per level six 7x7
  oriented band-pass filters on the low-pass image and a 9x9 low-pass ``lofilt`` followed by
  subsampling by 2. Every filter is applied as a correlation (``corrDn``) with the image reflected
  about its edge pixels (``reflect1``, scipy's ``'mirror'``). The taps are the published 8-decimal
  values; the code stores only the free ones and expands them by the filters' symmetries (the
  low/high-pass filters have the 8 symmetries of the square; orientation 0 is odd in x and even in y,
  orientation 3 its negated transpose; orientation 1 is point-odd, 2 = -(1)ᵀ, 4 and 5 the left-right
  mirror images of 2 and 1).

References: E. P. Simoncelli, W. T. Freeman, "The steerable pyramid: a flexible architecture for
multi-scale derivative computation", ICIP 1995. doi:10.1109/ICIP.1995.537667. E. P. Simoncelli,
W. T. Freeman, E. H. Adelson, D. J. Heeger, "Shiftable multiscale transforms", IEEE TIT 38(2):587-607,
1992. doi:10.1109/18.119725
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["laplacian_pyramid", "build_scf_pyramid", "build_sf_pyramid", "build_sp5_pyramid", "sp5_filters"]

_BINOM5 = np.sqrt(2.0) * np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0


def _down(a: np.ndarray, axis: int) -> np.ndarray:
    from scipy import ndimage

    out = ndimage.correlate1d(a, _BINOM5, axis=axis, mode="mirror")
    return out[::2] if axis == 0 else out[:, ::2]


def _up(a: np.ndarray, axis: int, size: int) -> np.ndarray:
    from scipy import ndimage

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
    rad = np.sqrt(xramp**2 + yramp**2)
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
    from scipy.special import factorial

    h, w = image.shape
    log_rad, angle = _grid(h, w)
    xrcos, yrcos = _rcos(1.0, -0.5)
    yrcos = np.sqrt(yrcos)
    yircos = np.sqrt(1.0 - yrcos**2)
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
        log_rad = log_rad[lostart[0] : loend[0], lostart[1] : loend[1]]
        angle = angle[lostart[0] : loend[0], lostart[1] : loend[1]]
        lodft = lodft[lostart[0] : loend[0], lostart[1] : loend[1]]
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


# ---- spatial steerable pyramid, sp5Filters -------------------------------------------------------------
# free taps, upper triangle (row by row) of the top-left quadrant of the D4-symmetric filters
_HI0 = (
    -0.00033429,
    -0.00113093,
    -0.00171484,
    -0.00133542,
    -0.00080639,
    -0.00350017,
    -0.00243812,
    0.00631653,
    0.01261227,
    -0.00290081,
    -0.00673482,
    -0.00981051,
    -0.07027679,
    -0.11435863,
    0.81380200,
)
_LO0 = (0.00341614, -0.01551246, -0.03848215, 0.05586982, 0.15925570, 0.40304148)
_LO_HALF = (
    0.00085404,
    -0.00244917,
    -0.00387812,
    -0.00944432,
    -0.00962054,
    -0.00523281,
    -0.00661117,
    0.00410600,
    0.01002988,
    0.01396746,
    0.03277038,
    0.03981393,
    0.06426333,
    0.08169618,
    0.10096540,
)
# orientation 0: rows 0-3, columns 0-2 (odd in x, even in y)
_B0 = (
    (0.00277643, -0.00986904, -0.01021852),
    (0.00496194, -0.00893064, -0.03075356),
    (0.01026699, 0.01189859, -0.08226445),
    (0.01455399, 0.02755155, -0.11732297),
)
# orientation 1: rows 0-2 and the first three taps of row 3 (point-odd)
_B1 = (
    (-0.00343249, -0.00358461, 0.01047717, 0.00790407, 0.00459034, -0.00128000, -0.01166982),
    (-0.00640815, -0.01977507, 0.01486305, 0.04435647, -0.00853965, -0.01161195, -0.00285723),
    (-0.00073141, -0.04084211, -0.04819057, 0.09454202, 0.05394139, -0.03930573, -0.00182078),
    (0.01124321, -0.00228219, -0.12227230),
)


def _d4(free: tuple[float, ...]) -> np.ndarray:
    """Filter with the 8 symmetries of the square from the upper triangle of its top-left quadrant."""
    r = int(round((np.sqrt(8 * len(free) + 1) - 1) / 2)) - 1  # len(free) = (r + 1)(r + 2) / 2
    q = np.zeros((r + 1, r + 1))
    q[np.triu_indices(r + 1)] = free
    q = q + np.triu(q, 1).T
    top = np.hstack([q, q[:, -2::-1]])
    return np.vstack([top, top[-2::-1]])


def sp5_filters() -> dict[str, Any]:
    """The ``sp5Filters`` set: ``hi0filt`` (9x9), ``lo0filt`` (5x5), ``lofilt`` (9x9) and ``bfilts``, a
    list of the six 7x7 oriented band-pass filters (as correlation kernels, row = y, column = x)."""
    b0 = np.zeros((7, 7))
    b0[:4, :3] = _B0
    b0[4:, :3] = b0[2::-1, :3]
    b0[:, 4:] = -b0[:, 2::-1]
    b1 = np.zeros((7, 7))
    b1[:3] = _B1[:3]
    b1[3, :3] = _B1[3]
    b1[3, 4:] = -b1[3, 2::-1]
    b1[4:] = -b1[2::-1, ::-1]
    b2 = -b1.T
    bands = [b0, b1, b2, -b0.T, b2[:, ::-1].copy(), b1[:, ::-1].copy()]
    return {"hi0filt": _d4(_HI0), "lo0filt": _d4(_LO0), "lofilt": 2.0 * _d4(_LO_HALF), "bfilts": bands}


def _corr(a: np.ndarray, k: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    return ndimage.correlate(a, k, mode="mirror")


def _corr_down2(a: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``corrDn(a, k, 'reflect1', [2 2], [1 1])``: correlation at every second pixel, from the first."""
    from scipy import ndimage

    r = k.shape[0] // 2
    p = np.pad(a, r, mode="reflect")
    h, w = a.shape
    out = np.zeros(((h + 1) // 2, (w + 1) // 2))
    # polyphase: only the sampled outputs are computed (a quarter of the full correlation)
    for u in range(2):
        for v in range(2):
            ph = p[u::2, v::2]
            kk = k[u::2, v::2]
            full = ndimage.correlate(
                ph, kk, mode="constant", origin=(-(kk.shape[0] // 2), -(kk.shape[1] // 2))
            )
            out += full[: out.shape[0], : out.shape[1]]
    return out


def build_sp5_pyramid(
    image: np.ndarray,
    height: int,
    *,
    orientations: tuple[int, ...] = (0, 1, 2, 3, 4, 5),
    highpass: bool = True,
) -> list:
    """Spatial steerable pyramid ``buildSpyr(im, height, 'sp5Filters', 'reflect1')``.

    Returns ``[highpass, [bands of level 1], ..., [bands of level height], lowpass]`` (finest level
    first), each level's bands in the order of ``orientations`` (0 = vertical structures, 3 = horizontal;
    a subset saves time). ``highpass=False`` skips the high-pass residual (``None`` in its place).
    """
    f = sp5_filters()
    im = np.asarray(image, dtype=np.float64)
    pyr: list = [_corr(im, f["hi0filt"]) if highpass else None]
    lo = _corr(im, f["lo0filt"])
    for _ in range(height):
        pyr.append([_corr(lo, f["bfilts"][b]) for b in orientations])
        lo = _corr_down2(lo, f["lofilt"])
    pyr.append(lo)
    return pyr
