"""The SSIM family: SSIM, MS-SSIM, IW-SSIM and CW-SSIM, following the authors' MATLAB code.

Conventions (each exposed as an option):

* No automatic downsampling by default (the SSIM paper's definition). Wang's later ``ssim.m`` and piq's
  default average the image by ``f = round(min(H, W) / 256)`` first; ``downsample=True`` does that
  (:func:`cxreval.iqa._image.auto_downsample`).
* The constants use the caller's ``data_range`` (``C1 = (0.01 L)^2``, ``C2 = (0.03 L)^2``): no rescaling or
  rounding to 8 bits, and a single channel (no colour conversion).
* Local statistics use an 11x11 Gaussian window (sigma 1.5) over the 'valid' region (``filter2``).

References
----------
.. [1] Z. Wang, A. C. Bovik, H. R. Sheikh, E. P. Simoncelli, "Image quality assessment: from error
   visibility to structural similarity", IEEE TIP 13(4):600-612, 2004. doi:10.1109/TIP.2003.819861
.. [2] Z. Wang, E. P. Simoncelli, A. C. Bovik, "Multiscale structural similarity for image quality
   assessment", Asilomar 2003. doi:10.1109/ACSSC.2003.1292216
.. [3] Z. Wang, Q. Li, "Information content weighting for perceptual image quality assessment",
   IEEE TIP 20(5):1185-1198, 2011. doi:10.1109/TIP.2010.2092435
.. [4] M. P. Sampat, Z. Wang, S. Gupta, A. C. Bovik, M. K. Markey, "Complex wavelet structural
   similarity: a new image similarity index", IEEE TIP 18(11):2385-2401, 2009. doi:10.1109/TIP.2009.2025923
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError
from ._catalogue import builtin_metric
from ._image import auto_downsample, check_pair, filter2_valid, gaussian_kernel, imfilter
from ._pyramids import build_scf_pyramid, laplacian_pyramid

__all__ = ["ssim", "ms_ssim", "iw_ssim", "cw_ssim", "SSIMMaps", "ssim_maps"]

MS_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


class SSIMMaps(NamedTuple):
    """What :func:`ssim_maps` returns: the SSIM map and the contrast-structure map."""

    ssim_map: np.ndarray
    cs_map: np.ndarray


def ssim_maps(
    x: np.ndarray,
    y: np.ndarray,
    *,
    data_range: float,
    k1: float = 0.01,
    k2: float = 0.03,
    window: np.ndarray | None = None,
) -> SSIMMaps:
    """SSIM and contrast-structure maps over the 'valid' region (``ssim_index.m``).

    Returns
    -------
    ssim_map, cs_map : numpy.ndarray
    """
    win = gaussian_kernel(11, 1.5) if window is None else window
    c1 = (k1 * data_range) ** 2
    c2 = (k2 * data_range) ** 2
    mu1 = filter2_valid(x, win)
    mu2 = filter2_valid(y, win)
    mu1_sq, mu2_sq, mu12 = mu1 * mu1, mu2 * mu2, mu1 * mu2
    s1 = filter2_valid(x * x, win) - mu1_sq
    s2 = filter2_valid(y * y, win) - mu2_sq
    s12 = filter2_valid(x * y, win) - mu12
    cs = (2.0 * s12 + c2) / (s1 + s2 + c2)
    lum = (2.0 * mu12 + c1) / (mu1_sq + mu2_sq + c1)
    return SSIMMaps(lum * cs, cs)


@builtin_metric("ssim")
def ssim(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    downsample: bool = False,
    k1: float = 0.01,
    k2: float = 0.03,
) -> float:
    """Structural similarity index [1]_ (mean of the SSIM map, ``ssim_index.m``).

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        At least 11x11 (after downsampling).
    data_range : float
        ``L`` in ``C1 = (k1 L)^2``, ``C2 = (k2 L)^2``.
    downsample : bool, default=False
        Apply ``ssim.m``'s automatic downsampling before the index (``f = round(min(H, W) / 256)``, an
        ``f x f`` box filter with MATLAB's kernel centre, every ``f``-th pixel). piq downsamples by
        default with ``avg_pool2d``, which is the same for ``f = 2`` (images of 384-639 px) but averages a
        block shifted by ``(f - 1) // 2`` pixels for ``f >= 3``.
    k1, k2 : float, default=0.01, 0.03

    Returns
    -------
    value : float

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).random((32, 32))
    >>> ssim(x, x, data_range=1.0)
    1.0
    """
    x, y, dr = check_pair(image_true, image_test, data_range, func="ssim", min_size=11)
    if downsample:
        x, y = auto_downsample(x), auto_downsample(y)
        if min(x.shape) < 11:
            raise InvalidParameterError(
                f"ssim: the downsampled image {x.shape} is smaller than the 11x11 window."
            )
    smap, _ = ssim_maps(x, y, data_range=dr, k1=k1, k2=k2)
    return float(np.mean(smap))


def _ms_downsample(a: np.ndarray) -> np.ndarray:
    return imfilter(a, np.full((2, 2), 0.25), mode="symmetric")[::2, ::2]


@builtin_metric("ms_ssim")
def ms_ssim(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    weights: tuple[float, ...] = MS_WEIGHTS,
    downsample: bool = False,
) -> float:
    """Multi-scale SSIM [2]_, the authors' ``msssim.m``.

    ``prod_{j<M} cs_j^{w_j} * ssim_M^{w_M}``; between scales the images are averaged with a 2x2 box
    (``imfilter(..., 'symmetric')``) and every second pixel kept. A negative ``cs`` (which the MATLAB code
    would raise to a fractional power, giving a complex number) is clamped to 0, as piq does.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        At least ``11 * 2**(len(weights) - 1)`` pixels on the short side (176 for 5 scales).
    data_range : float
    weights : tuple of float, default=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333)
    downsample : bool, default=False
        Apply ``ssim.m``'s automatic downsampling first (piq's ``ms_ssim`` does not; see Notes of
        :func:`ssim`).

    Returns
    -------
    value : float in [0, 1]
    """
    levels = len(weights)
    x, y, dr = check_pair(image_true, image_test, data_range, func="ms_ssim")
    if downsample:
        x, y = auto_downsample(x), auto_downsample(y)
    need = 11 * 2 ** (levels - 1)
    if min(x.shape) < need:
        raise InvalidParameterError(
            f"ms_ssim: images must be at least {need}x{need} pixels for {levels} scales. Got shape {x.shape}."
        )
    mcs = []
    mssim = 0.0
    for lev in range(levels):
        smap, cs = ssim_maps(x, y, data_range=dr)
        mcs.append(float(np.mean(cs)))
        mssim = float(np.mean(smap))
        if lev < levels - 1:
            x, y = _ms_downsample(x), _ms_downsample(y)
    w = np.asarray(weights, dtype=float)
    vals = np.maximum(np.asarray(mcs[:-1] + [mssim]), 0.0)
    return float(np.prod(vals**w))


def _imenlarge2(im: np.ndarray) -> np.ndarray:
    """``imenlarge2`` of ``iwssim.m``: bilinear x4 enlargement (MATLAB ``imresize``), border
    extrapolation, then every second sample: a (2M-1, 2N-1)... (2M, 2N) grid aligned with the finer scale."""
    m, n = im.shape
    t1 = _resize_bilinear(im, 4 * m - 3, 4 * n - 3)
    t2 = np.zeros((4 * m - 1, 4 * n - 1))
    t2[1:-1, 1:-1] = t1
    t2[0, :] = 2 * t2[1, :] - t2[2, :]
    t2[-1, :] = 2 * t2[-2, :] - t2[-3, :]
    t2[:, 0] = 2 * t2[:, 1] - t2[:, 2]
    t2[:, -1] = 2 * t2[:, -2] - t2[:, -3]
    return t2[::2, ::2]


def _resize_bilinear(im: np.ndarray, h: int, w: int) -> np.ndarray:
    """MATLAB ``imresize(im, [h w], 'bilinear')`` for enlargement (no antialiasing; half-pixel centres)."""

    def weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        scale = n_out / n_in
        u = (np.arange(n_out) + 0.5) / scale - 0.5
        i0 = np.floor(u).astype(int)
        f = u - i0
        return np.clip(i0, 0, n_in - 1), np.clip(i0 + 1, 0, n_in - 1), f

    r0, r1, fr = weights(im.shape[0], h)
    c0, c1, fc = weights(im.shape[1], w)
    rows = im[r0] * (1 - fr)[:, None] + im[r1] * fr[:, None]
    return rows[:, c0] * (1 - fc)[None, :] + rows[:, c1] * fc[None, :]


def _info_content_weight(
    imgo: np.ndarray, imgd: np.ndarray, parent: np.ndarray | None, *, sigma_nsq: float, block: int = 3
) -> np.ndarray:
    tol = 1e-15
    win = np.full((block, block), 1.0 / (block * block))
    mean_x = imfilter(imgo, win, mode="zero")
    mean_y = imfilter(imgd, win, mode="zero")
    cov_xy = imfilter(imgo * imgd, win, mode="zero") - mean_x * mean_y
    ss_x = np.maximum(imfilter(imgo * imgo, win, mode="zero") - mean_x**2, 0.0)
    ss_y = np.maximum(imfilter(imgd * imgd, win, mode="zero") - mean_y**2, 0.0)
    g = cov_xy / (ss_x + tol)
    vv = ss_y - g * cov_xy
    small_x = ss_x < tol
    g[small_x] = 0.0
    vv[small_x] = ss_y[small_x]
    small_y = ss_y < tol
    g[small_y] = 0.0
    vv[small_y] = 0.0
    nv, nh = imgo.shape
    lb = (block - 1) // 2
    nblv, nblh = nv - block + 1, nh - block + 1
    cols = []
    for dy in range(-lb, lb + 1):
        for dx in range(-lb, lb + 1):
            shifted = np.roll(np.roll(imgo, dy, axis=0), dx, axis=1)
            cols.append(shifted[lb : lb + nblv, lb : lb + nblh].ravel())
    if parent is not None:
        cols.append(parent[lb : lb + nblv, lb : lb + nblh].ravel())
    ymat = np.stack(cols, axis=1)
    nn = ymat.shape[1]
    c_u = ymat.T @ ymat / ymat.shape[0]
    eig, h = np.linalg.eigh(c_u)
    positive = eig > 0
    psum = float(np.sum(eig * positive))
    eig_scale = float(np.sum(eig)) / (psum + (psum == 0))
    c_u = h @ np.diag(eig * positive * eig_scale) @ h.T
    ss = np.sum((ymat @ np.linalg.inv(c_u)) * ymat, axis=1) / nn
    ss = ss.reshape(nblv, nblh)
    g = g[lb : lb + nblv, lb : lb + nblh]
    vv = vv[lb : lb + nblv, lb : lb + nblh]
    infow = np.zeros_like(g)
    for lam in eig:
        infow += np.log2(
            1.0 + ((vv + (1.0 + g * g) * sigma_nsq) * ss * lam + sigma_nsq * vv) / (sigma_nsq * sigma_nsq)
        )
    infow[infow < tol] = 0.0
    return infow


@builtin_metric("iw_ssim")
def iw_ssim(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    n_scales: int = 5,
    sigma_nsq: float = 0.4,
    use_parent: bool = True,
    weights: tuple[float, ...] = MS_WEIGHTS,
    normalize_weights: bool = True,
) -> float:
    """Information-content-weighted multi-scale SSIM [3]_, the authors' ``iwssim.m``.

    A Laplacian pyramid (binomial-5 filter, mirror edges, as ``buildLpyr``) of ``n_scales`` levels; at each
    scale the contrast-structure map is pooled with weights from a Gaussian scale mixture model of the
    reference band (3x3 neighbourhood plus the parent band, noise variance ``sigma_nsq``); the coarsest
    scale uses the full SSIM map, unweighted. ``C1, C2`` use ``data_range`` (``L``).

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        At least ``11 * 2**(n_scales - 1)`` pixels on the short side.
    data_range : float
    n_scales : int, default=5
    sigma_nsq : float, default=0.4
        The model's noise variance, in the units of a 0..255 image; scaled by ``(data_range / 255)**2``.
    use_parent : bool, default=True
    weights : tuple of float, default=MS-SSIM's five weights
        Positive exponents of the per-scale scores.
    normalize_weights : bool, default=True
        Divide ``weights`` by their sum, as ``iwssim.m`` (``weight = weight/sum(weight)``) and piq do. MS-SSIM's
        published weights sum to 1.0001, so the score is ``(prod_s v_s^w_s)^(1 / 1.0001)``: on goldhill this is
        the 1.07e-5 between the unnormalised product (``False``) and MATLAB's
        0.886297251092821.

    Returns
    -------
    value : float
    """
    x, y, dr = check_pair(image_true, image_test, data_range, func="iw_ssim")
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise InvalidParameterError(
            f"iw_ssim: 'weights' must be positive finite numbers. Got {tuple(weights)!r}."
        )
    if normalize_weights:
        w = w / w.sum()
    if len(weights) != n_scales:
        raise InvalidParameterError(
            f"iw_ssim: 'weights' must have n_scales={n_scales} entries. Got {len(weights)}."
        )
    need = 11 * 2 ** (n_scales - 1)
    if min(x.shape) < need:
        raise InvalidParameterError(
            f"iw_ssim: images must be at least {need}x{need} pixels for {n_scales} "
            f"scales. Got shape {x.shape}."
        )
    pyo = laplacian_pyramid(x, n_scales)
    pyd = laplacian_pyramid(y, n_scales)
    nsq = sigma_nsq * (dr / 255.0) ** 2
    c1, c2 = (0.01 * dr) ** 2, (0.03 * dr) ** 2
    win = gaussian_kernel(11, 1.5)
    bound = 5
    bound1 = bound - 1
    wmcs = []
    for s in range(n_scales):
        o, d = pyo[s], pyd[s]
        mu1, mu2 = filter2_valid(o, win), filter2_valid(d, win)
        s1 = np.maximum(filter2_valid(o * o, win) - mu1 * mu1, 0.0)
        s2 = np.maximum(filter2_valid(d * d, win) - mu2 * mu2, 0.0)
        s12 = filter2_valid(o * d, win) - mu1 * mu2
        cs = (2 * s12 + c2) / (s1 + s2 + c2)
        if s == n_scales - 1:
            cs = cs * (2 * mu1 * mu2 + c1) / (mu1**2 + mu2**2 + c1)
            wmcs.append(float(np.mean(cs)))
            continue
        parent = None
        if use_parent and s < n_scales - 2:
            parent = _imenlarge2(pyo[s + 1])[: o.shape[0], : o.shape[1]]
        iw = _info_content_weight(o, d, parent, sigma_nsq=nsq)
        iw = iw[bound1 : iw.shape[0] - bound1, bound1 : iw.shape[1] - bound1]
        wmcs.append(float(np.sum(cs * iw) / np.sum(iw)))
    return float(np.prod(np.abs(np.asarray(wmcs)) ** w))


@builtin_metric("cw_ssim")
def cw_ssim(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    level: int = 4,
    orientations: int = 8,
    guardb: int = 0,
    k: float = 0.0,
) -> float:
    """Complex-wavelet structural similarity [4]_, the authors' ``cwssim_index.m``.

    Both images are decomposed with the complex steerable pyramid (``buildSCFpyr``, ``level`` levels,
    ``orientations`` bands). In each band of the coarsest level,
    ``(2 |sum c1 c2*| + K) / (sum |c1|^2 + sum |c2|^2 + K)`` over 7x7 windows ('valid') is averaged with a
    Gaussian weight (sigma = band height / 4); the index is the mean over the bands. Invariant to a
    common scaling, so ``data_range`` is only validated; ``k`` is in squared image units.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
    level : int, default=4
    orientations : int, default=8
    guardb : int, default=0
        Pixels discarded at each border of the full-resolution image.
    k : float, default=0.0

    Returns
    -------
    value : float
    """
    x, y, _ = check_pair(image_true, image_test, data_range, func="cw_ssim")
    if level > int(np.floor(np.log2(min(x.shape)))) - 2:
        raise InvalidParameterError(f"cw_ssim: images of shape {x.shape} are too small for level={level}.")
    bands1 = build_scf_pyramid(x, level, orientations)[level]
    bands2 = build_scf_pyramid(y, level, orientations)[level]
    gb = int(guardb / 2 ** (level - 1))
    s = bands1[0].shape
    box = np.full((7, 7), 1.0 / 49.0)
    w = gaussian_kernel((s[0] - 6, s[1] - 6), s[0] / 4.0)
    vals = []
    for b1, b2 in zip(bands1, bands2):
        if gb:
            b1, b2 = b1[gb:-gb, gb:-gb], b2[gb:-gb, gb:-gb]
        corr = b1 * np.conj(b2)
        varr = np.abs(b1) ** 2 + np.abs(b2) ** 2
        corr_band = filter2_valid(corr.real, box) + 1j * filter2_valid(corr.imag, box)
        varr_band = filter2_valid(varr, box)
        cmap = (2.0 * np.abs(corr_band) + k) / (varr_band + k)
        ww = w if cmap.shape == w.shape else gaussian_kernel(cmap.shape, s[0] / 4.0)
        vals.append(float(np.sum(cmap * ww)))
    return float(np.mean(vals))
