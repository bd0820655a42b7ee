"""Visual information fidelity: VIF in the wavelet domain and VIFp in the pixel domain (Sheikh & Bovik).

Both work in the units of a 0..255 image (the models' noise variances ``sigma_nsq`` are stated in those
units): the inputs are multiplied by ``255 / data_range`` in float64 — a change of units, no rounding.

**Decomposition used by** :func:`vif`. The authors' ``vifvec.m`` decomposes with the spatial steerable
pyramid ``buildSpyr(im, 4, 'sp5Filters', 'reflect1')`` (4 scales, 6 orientations) and uses two
orientations per scale, 0 and 3 (subbands 4, 7, ..., 25 of the pyramid ordered coarse to fine), with
window sizes 3, 3, 5, 5, 9, 9, 17, 17. The default ``decomposition='sp5'`` does exactly that, natively
(:func:`cxreval.iqa._pyramids.build_sp5_pyramid`; only the two orientations used are computed).
``decomposition='sf'`` is an alternative: the same steerable-pyramid design built in the Fourier domain
(``buildSFpyr``, raised-cosine radial masks); its filters' frequency responses differ, and so do its
values (e.g. 0.285 instead of 0.436 for a blurred radiograph), so it does not reproduce published VIF
values.

**pyiqa's convention.** pyiqa's ``vif`` takes an RGB tensor in [0, 1] and computes on its luma, YIQ's
``Y = 0.299 R + 0.587 G + 0.114 B``, times 255, *rounded to integers*, in float32. For a grey image
repeated to three channels that is ``round(255 x)``: ``vif(x, y, data_range=..., round_8bit=True)``
reproduces it (agreement ~2e-6 relative on radiographs, the rest is float32). The default does not round
(a 16-bit radiograph keeps its precision).

References
----------
.. [1] H. R. Sheikh, A. C. Bovik, "Image information and visual quality", IEEE TIP 15(2):430-444, 2006.
   doi:10.1109/TIP.2005.859378
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidParameterError
from ._catalogue import builtin_metric
from ._image import filter2_valid, gaussian_kernel, rescaled_pair
from ._pyramids import build_sf_pyramid, build_sp5_pyramid

__all__ = ["vif", "vifp"]

_SUBBANDS = (4, 7, 10, 13, 16, 19, 22, 25)


def _safeguard_gain(
    g: np.ndarray, sv: np.ndarray, s_ref: np.ndarray, s_dist: np.ndarray, eps: float, *, inclusive_floor: bool
) -> None:
    """The original VIF codes' safeguards on the gain ``g`` and noise variance ``sv``, in place.

    Flat reference blocks get no gain and their distorted variance as noise (and ``s_ref`` zeroed); flat
    distorted blocks get no gain and no noise; a negative gain becomes noise. The noise floor is ``<= eps``
    in vifp_mscale.m and ``< eps`` in vifvec.m, hence ``inclusive_floor``.
    """
    m_ref = s_ref < eps
    g[m_ref] = 0.0
    sv[m_ref] = s_dist[m_ref]
    s_ref[m_ref] = 0.0
    m_dist = s_dist < eps
    g[m_dist] = 0.0
    sv[m_dist] = 0.0
    neg = g < 0
    sv[neg] = s_dist[neg]
    g[neg] = 0.0
    sv[(sv <= eps) if inclusive_floor else (sv < eps)] = eps


@builtin_metric("vifp")
def vifp(
    image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, sigma_nsq: float = 2.0
) -> float:
    """Pixel-domain visual information fidelity, the authors' ``vifp_mscale.m``.

    Four scales with Gaussian windows of size ``N = 2**(5 - s) + 1`` (sigma ``N / 5``); each coarser scale
    is the 'valid'-filtered image sampled every second pixel. Per scale, a gain ``g`` and distortion
    variance ``sv^2`` are estimated locally; ``VIFp = sum log10(1 + g^2 s1^2 / (sv^2 + sigma_nsq)) /
    sum log10(1 + s1^2 / sigma_nsq)``.

    Parameters
    ----------
    image_true, image_test, data_range, sigma_nsq
        As :func:`vif` (at least 41x41 here; ``sigma_nsq`` defaults to 2.0).

    Returns
    -------
    value : float
        1 for identical images; above 1 for contrast enhancement.
    """
    ref, dist = rescaled_pair(image_true, image_test, data_range, func="vifp", min_size=41)
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
        _safeguard_gain(g, sv, s1, s2, eps, inclusive_floor=True)
        num += float(np.sum(np.log10(1.0 + g * g * s1 / (sv + sigma_nsq))))
        den += float(np.sum(np.log10(1.0 + s1 / sigma_nsq)))
    return num / den if den > 0 else float("nan")


def _box_sampled(a: np.ndarray, winsize: int, m: int) -> np.ndarray:
    """``corrDn(a, ones(winsize), 'reflect1', [m m], [s s], [h-c+1 w-c+1])`` with ``s = floor(m/2) + 1`` and
    ``c = ceil(m/2)`` (1-based): window sums at every ``m``-th pixel, from the ``(m // 2)``-th, with the
    image reflected about its edge pixels. Only the sampled sums are computed."""
    r = winsize // 2
    p = np.pad(a, r, mode="reflect")
    start = m // 2
    n0 = len(range(start, a.shape[0] - (m + 1) // 2 + 1, m))
    n1 = len(range(start, a.shape[1] - (m + 1) // 2 + 1, m))
    span0 = m * (n0 - 1) + 1
    rows = p[start : start + span0 : m].copy()
    for d in range(1, winsize):
        rows += p[start + d : start + d + span0 : m]
    span1 = m * (n1 - 1) + 1
    out = rows[:, start : start + span1 : m].copy()
    for d in range(1, winsize):
        out += rows[:, start + d : start + d + span1 : m]
    return out


def _subbands(image: np.ndarray, decomposition: str) -> list[np.ndarray]:
    """The eight subbands used by vifvec.m, in its order (coarsest level first; orientation 3, then 0)."""
    if decomposition == "sp5":
        pyr = build_sp5_pyramid(image, 4, orientations=(0, 3), highpass=False)
        levels = [(lev[0], lev[1]) for lev in pyr[1:5]]
    else:
        pyr = build_sf_pyramid(image, 4, 6)
        levels = [(lev[0], lev[3]) for lev in pyr[1:5]]
    return [band for b0, b3 in levels[::-1] for band in (b3, b0)]


@builtin_metric("vif")
def vif(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    sigma_nsq: float = 0.4,
    decomposition: str = "sp5",
    round_8bit: bool = False,
) -> float:
    """Visual information fidelity in the wavelet domain [1]_, the authors' ``vifvec.m``.

    Both images are decomposed by the steerable pyramid (see the module notes); in each of the eight
    subbands used, the reference is modelled as a Gaussian scale mixture over 3x3 neighbourhoods and the
    test image as ``g * reference + noise`` estimated in sliding windows (sampled every 3 pixels);
    ``VIF = sum log2(1 + g^2 s^2 lambda / (sv^2 + sigma_nsq)) / sum log2(1 + s^2 lambda / sigma_nsq)``.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        At least 64x64.
    data_range : float
        Images are rescaled by ``255 / data_range``.
    sigma_nsq : float, default=0.4
        HVS noise variance (0..255 units).
    decomposition : {'sp5', 'sf'}, default='sp5'
        ``'sp5'``: the original's spatial steerable pyramid (sp5Filters). ``'sf'``: a Fourier-domain
        steerable pyramid (not the original; see the module notes).
    round_8bit : bool, default=False
        Round the 0..255-scaled images to integers first (pyiqa's convention; see the module notes).

    Returns
    -------
    value : float
        1 for identical images; above 1 for contrast enhancement.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import ndimage
    >>> x = ndimage.gaussian_filter(np.random.default_rng(0).random((128, 128)), 2)
    >>> round(vif(x, x, data_range=1.0), 9)
    1.0
    >>> vif(x, ndimage.gaussian_filter(x, 1.5), data_range=1.0) < 1
    True
    """
    x, y = rescaled_pair(image_true, image_test, data_range, func="vif", min_size=64)
    if decomposition not in ("sf", "sp5"):
        raise InvalidParameterError(
            f"The 'decomposition' parameter of vif must be one of ['sp5', 'sf']. "
            f"Got {decomposition!r} instead."
        )
    if round_8bit:
        x, y = np.rint(x), np.rint(y)
    org = _subbands(x, decomposition)
    dist = _subbands(y, decomposition)
    m = 3
    tol = 1e-15
    num = 0.0
    den = 0.0
    for i, sub in enumerate(_SUBBANDS):
        lev = int(np.ceil((sub - 1) / 6))
        winsize = 2**lev + 1
        nwin = float(winsize * winsize)
        h, w = (org[i].shape[0] // m) * m, (org[i].shape[1] // m) * m
        yo, yd = org[i][:h, :w], dist[i][:h, :w]
        mean_x = _box_sampled(yo, winsize, m) / nwin
        mean_y = _box_sampled(yd, winsize, m) / nwin
        cov_xy = _box_sampled(yo * yd, winsize, m) - nwin * mean_x * mean_y
        ss_x = np.maximum(_box_sampled(yo * yo, winsize, m) - nwin * mean_x**2, 0.0)
        ss_y = np.maximum(_box_sampled(yd * yd, winsize, m) - nwin * mean_y**2, 0.0)
        g = cov_xy / (ss_x + tol)
        vv = (ss_y - g * cov_xy) / nwin
        _safeguard_gain(g, vv, ss_x, ss_y, tol, inclusive_floor=False)
        # reference GSM parameters: covariance of the M x M neighbourhoods, and s^2 per block
        temp = np.empty((m * m, h - m + 1, w - m + 1))
        for idx, (j, k) in enumerate((j, k) for j in range(m) for k in range(m)):
            temp[idx] = yo[k : h - (m - k) + 1, j : w - (m - j) + 1]
        temp = temp.reshape(m * m, -1)
        temp -= temp.mean(axis=1, keepdims=True)
        cu = temp @ temp.T / temp.shape[1]
        blocks = np.stack([yo[k::m, j::m].ravel() for j in range(m) for k in range(m)])
        ss = np.sum((np.linalg.pinv(cu) @ blocks) * blocks, axis=0) / (m * m)
        ss = ss.reshape(h // m, w // m)
        lam = np.linalg.eigvalsh(cu)
        off = int(np.ceil(((winsize - 1) / 2) / m))
        sl = (slice(off, g.shape[0] - off), slice(off, g.shape[1] - off))
        g, vv, ss = g[sl], vv[sl], ss[sl]
        a = g * g * ss
        b = vv + sigma_nsq
        for lj in lam:
            num += float(np.sum(np.log2(1.0 + a * (lj / b))))
            den += float(np.sum(np.log2(1.0 + ss * (lj / sigma_nsq))))
    return num / den if den > 0 else float("nan")
