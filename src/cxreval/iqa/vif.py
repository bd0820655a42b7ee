"""Visual information fidelity: VIF in the wavelet domain and VIFp in the pixel domain (Sheikh & Bovik).

Both work in the units of a 0..255 image (the models' noise variances ``sigma_nsq`` are stated in those
units): the inputs are multiplied by ``255 / data_range`` in float64 — a change of units, no rounding.

**Decomposition used by** :func:`vif`. The authors' ``vifvec.m`` decomposes with the spatial steerable
pyramid ``buildSpyr(im, 4, 'sp5Filters')`` (4 scales, 6 orientations) and uses two orientations per scale
(subbands 4, 7, ..., 25 of the pyramid ordered coarse to fine). ``decomposition='sp5'`` does exactly that
with the sp5 filter taps taken from the optional ``pyrtools`` package (matlabPyrTools' Python port);
the default ``decomposition='sf'`` is self-contained: the same steerable pyramid design (4 scales,
6 orientations, same subband selection) built in the Fourier domain (``buildSFpyr``, raised-cosine
radial masks) with numpy only. The two differ by the filters' frequency responses; the GSM model,
window sizes and pooling are the original's.

References
----------
.. [1] H. R. Sheikh, A. C. Bovik, "Image information and visual quality", IEEE TIP 15(2):430-444, 2006.
   doi:10.1109/TIP.2005.859378
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from ..exceptions import CxrevalError, InvalidParameterError
from ._image import check_pair, filter2_valid, gaussian_kernel
from ._pyramids import build_sf_pyramid
from ._registry import register_iqa

__all__ = ["vif", "vifp"]

_SUBBANDS = (4, 7, 10, 13, 16, 19, 22, 25)


@register_iqa("vifp", reference="full", higher_is_better=True, value_range=(0.0, float("inf")),
              description="Pixel-domain VIF (Sheikh & Bovik 2006, vifp_mscale.m), 4 scales.")
def vifp(image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, sigma_nsq: float = 2.0) -> float:
    """Pixel-domain visual information fidelity, the authors' ``vifp_mscale.m``.

    Four scales with Gaussian windows of size ``N = 2**(5 - s) + 1`` (sigma ``N / 5``); each coarser scale
    is the 'valid'-filtered image sampled every second pixel. Per scale, a gain ``g`` and distortion
    variance ``sv^2`` are estimated locally; ``VIFp = sum log10(1 + g^2 s1^2 / (sv^2 + sigma_nsq)) /
    sum log10(1 + s1^2 / sigma_nsq)``.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        At least 41x41.
    data_range : float
        Images are rescaled by ``255 / data_range``.
    sigma_nsq : float, default=2.0
        HVS noise variance (0..255 units).

    Returns
    -------
    value : float
        1 for identical images; above 1 for contrast enhancement.
    """
    x, y, dr = check_pair(image_true, image_test, data_range, func="vifp", min_size=41)
    ref = x * (255.0 / dr)
    dist = y * (255.0 / dr)
    eps = 1e-10
    num = 0.0
    den = 0.0
    for scale in range(1, 5):
        n = 2 ** (4 - scale + 1) + 1
        win = gaussian_kernel(n, n / 5.0)
        if scale > 1:
            ref = filter2_valid(ref, win)[::2, ::2]
            dist = filter2_valid(dist, win)[::2, ::2]
        mu1 = filter2_valid(ref, win)
        mu2 = filter2_valid(dist, win)
        s1 = np.maximum(filter2_valid(ref * ref, win) - mu1 * mu1, 0.0)
        s2 = np.maximum(filter2_valid(dist * dist, win) - mu2 * mu2, 0.0)
        s12 = filter2_valid(ref * dist, win) - mu1 * mu2
        g = s12 / (s1 + eps)
        sv = s2 - g * s12
        m1 = s1 < eps
        g[m1] = 0.0
        sv[m1] = s2[m1]
        s1[m1] = 0.0
        m2 = s2 < eps
        g[m2] = 0.0
        sv[m2] = 0.0
        neg = g < 0
        sv[neg] = s2[neg]
        g[neg] = 0.0
        sv[sv <= eps] = eps
        num += float(np.sum(np.log10(1.0 + g * g * s1 / (sv + sigma_nsq))))
        den += float(np.sum(np.log10(1.0 + s1 / sigma_nsq)))
    return num / den if den > 0 else float("nan")


def _sp5_pyramid(image: np.ndarray) -> list[np.ndarray]:
    try:
        import pyrtools as pt
    except ImportError as exc:
        raise CxrevalError("vif(decomposition='sp5') needs the optional package pyrtools (pip install pyrtools); "
                           "decomposition='sf' needs nothing else.") from exc
    pyr = pt.pyramids.SteerablePyramidSpace(image, height=4, order=5, edge_type="reflect1")
    bands = [pyr.pyr_coeffs["residual_highpass"]]
    for lev in range(4):
        bands.extend(pyr.pyr_coeffs[(lev, b)] for b in range(6))
    bands.append(pyr.pyr_coeffs["residual_lowpass"])
    return bands[::-1]


def _sf_pyramid(image: np.ndarray) -> list[np.ndarray]:
    pyr = build_sf_pyramid(image, 4, 6)
    bands = [pyr[0]]
    for lev in range(1, 5):
        bands.extend(pyr[lev])
    bands.append(pyr[5])
    return bands[::-1]


def _mirror_corr_sampled(a: np.ndarray, win: np.ndarray, step: int, start: int) -> np.ndarray:
    out = ndimage.correlate(a, win, mode="mirror")
    stop = a.shape[0] - int(np.ceil(step / 2)) + 1, a.shape[1] - int(np.ceil(step / 2)) + 1
    return out[start:stop[0]:step, start:stop[1]:step]


@register_iqa("vif", reference="full", higher_is_better=True, value_range=(0.0, float("inf")),
              description="Wavelet-domain VIF (Sheikh & Bovik 2006, vifvec.m): GSM model on a 4-scale, "
                          "6-orientation steerable pyramid.")
def vif(image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, sigma_nsq: float = 0.4,
        decomposition: str = "sf") -> float:
    """Visual information fidelity in the wavelet domain [1]_, the authors' ``vifvec.m``.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        At least 64x64.
    data_range : float
        Images are rescaled by ``255 / data_range``.
    sigma_nsq : float, default=0.4
        HVS noise variance (0..255 units).
    decomposition : {'sf', 'sp5'}, default='sf'
        See the module notes: ``'sp5'`` reproduces ``vifvec.m`` exactly and needs ``pyrtools``.

    Returns
    -------
    value : float
    """
    x, y, dr = check_pair(image_true, image_test, data_range, func="vif", min_size=64)
    if decomposition not in ("sf", "sp5"):
        raise InvalidParameterError(f"The 'decomposition' parameter of vif must be one of ['sf', 'sp5']. "
                                    f"Got {decomposition!r} instead.")
    build = _sf_pyramid if decomposition == "sf" else _sp5_pyramid
    org = build(x * (255.0 / dr))
    dist = build(y * (255.0 / dr))
    m = 3
    tol = 1e-15
    num = 0.0
    den = 0.0
    for sub in _SUBBANDS:
        yo = org[sub - 1]
        yd = dist[sub - 1]
        lev = int(np.ceil((sub - 1) / 6))
        winsize = 2 ** lev + 1
        nwin = float(winsize * winsize)
        h, w = (yo.shape[0] // m) * m, (yo.shape[1] // m) * m
        yo, yd = yo[:h, :w], yd[:h, :w]
        win = np.ones((winsize, winsize))
        start = m // 2
        mean_x = _mirror_corr_sampled(yo, win / nwin, m, start)
        mean_y = _mirror_corr_sampled(yd, win / nwin, m, start)
        cov_xy = _mirror_corr_sampled(yo * yd, win, m, start) - nwin * mean_x * mean_y
        ss_x = np.maximum(_mirror_corr_sampled(yo * yo, win, m, start) - nwin * mean_x ** 2, 0.0)
        ss_y = np.maximum(_mirror_corr_sampled(yd * yd, win, m, start) - nwin * mean_y ** 2, 0.0)
        g = cov_xy / (ss_x + tol)
        vv = (ss_y - g * cov_xy) / nwin
        mx = ss_x < tol
        g[mx] = 0.0
        vv[mx] = ss_y[mx]
        ss_x[mx] = 0.0
        my = ss_y < tol
        g[my] = 0.0
        vv[my] = 0.0
        neg = g < 0
        vv[neg] = ss_y[neg]
        g[neg] = 0.0
        vv[vv < tol] = tol
        # reference GSM parameters: covariance of the M x M neighbourhoods, and s^2 per block
        cols = [yo[k:h - (m - k) + 1, j:w - (m - j) + 1].ravel() for j in range(m) for k in range(m)]
        temp = np.stack(cols)
        temp = temp - temp.mean(axis=1, keepdims=True)
        cu = temp @ temp.T / temp.shape[1]
        blocks = np.stack([yo[k::m, j::m].ravel() for j in range(m) for k in range(m)])
        ss = np.sum((np.linalg.pinv(cu) @ blocks) * blocks, axis=0) / (m * m)
        ss = ss.reshape(h // m, w // m)
        lam = np.linalg.eigvalsh(cu)
        off = int(np.ceil(((winsize - 1) / 2) / m))
        sl = (slice(off, g.shape[0] - off), slice(off, g.shape[1] - off))
        g, vv, ss = g[sl], vv[sl], ss[sl]
        for lj in lam:
            num += float(np.sum(np.log2(1.0 + g * g * ss * lj / (vv + sigma_nsq))))
            den += float(np.sum(np.log2(1.0 + ss * lj / sigma_nsq)))
    return num / den if den > 0 else float("nan")
