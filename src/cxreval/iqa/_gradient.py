"""Gradient-similarity full-reference metrics: GMSD and MDSI.

Both compare gradient magnitudes of the reference and test images through the similarity map
``S(a, b; c) = (2ab + c) / (a^2 + b^2 + c)``. Images are single-channel float64 with an explicit
``data_range``; they are rescaled to the 0..255 scale the published constants were tuned for
(``x * 255 / data_range``, no rounding), so a 16-bit radiograph keeps its precision.

The gradient magnitudes (Prewitt and Scharr, zero padding) and the similarity map, shared with :mod:`.feature_similarity`
and :mod:`.visual_saliency_similarity`, live in :mod:`._image` (:func:`._image.gradient_magnitude`, :func:`._image.similarity_map`); the
common start (validation, box downsampling with MATLAB's
``conv2(..., 'same')`` alignment, rescaling to 0..255) is :func:`._image.rescaled_pair`.

References
----------
.. [1] W. Xue, L. Zhang, X. Mou and A. C. Bovik, "Gradient magnitude similarity deviation: a highly
   efficient perceptual image quality index", IEEE TIP 23(2):684-695, 2014. doi:10.1109/TIP.2013.2293423
.. [2] H. Z. Nafchi, A. Shahkolaei, R. Hedjam and M. Cheriet, "Mean deviation similarity index: efficient
   and reliable full-reference image quality evaluator", IEEE Access 4:5579-5590, 2016.
   doi:10.1109/ACCESS.2016.2604042
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice
from ..exceptions import InvalidParameterError
from ._catalogue import builtin_metric
from ._image import PREWITT, gradient_magnitude, rescaled_pair, similarity_map

__all__ = ["gmsd", "mdsi"]


@builtin_metric("gmsd")
def gmsd(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    t: float = 170.0,
    downsample: bool = True,
    std: str = "sample",
) -> float:
    """Gradient magnitude similarity deviation (GMSD).

    Both images are rescaled to 0..255, averaged over 2x2 blocks and subsampled by 2 (the original
    ``GMSD.m``), their Prewitt gradient magnitudes ``m`` compared pixel-wise by
    ``GMS = (2 m_r m_d + T) / (m_r^2 + m_d^2 + T)``, and the score is the standard deviation of GMS.
    By default it is MATLAB's ``std2`` of the authors' ``GMSD.m`` (divides by ``N - 1``); ``std='population'``
    divides by ``N`` (the paper's equation, piq). The two differ by the constant factor ``sqrt(N / (N - 1))``
    (``1 + 7.6e-6`` on a 512x512 image, ``N = 256 * 256`` after downsampling).

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
        Reference and test images, single channel.
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...).
    t : float, default=170.0
        The constant ``T`` on the 0..255 scale (piq's ``170 / 255**2`` on the 0..1 scale).
    downsample : bool, default=True
        The 2x2 average-and-subsample step of the original.
    std : {'sample', 'population'}, default='sample'
        ``'sample'``: divide by ``N - 1`` (MATLAB ``std2``, the original code; pyiqa); ``'population'``:
        divide by ``N`` (piq, the paper's equation).
    """
    std = check_choice(std, ("sample", "population"), name="std", func="gmsd")
    x, y = rescaled_pair(
        image_true, image_test, data_range, func="gmsd", min_size=2, factor=2 if downsample else 1
    )
    gms = similarity_map(gradient_magnitude(x, PREWITT), gradient_magnitude(y, PREWITT), float(t))
    n = gms.size
    ddof = 1 if std == "sample" and n > 1 else 0
    return float(np.sqrt(np.sum((gms - gms.mean()) ** 2) / (n - ddof)))


# LHM opponent colour space of MDSI (rows: L, H, M; columns: R, G, B)
_LHM = np.array([[0.2989, 0.587, 0.114], [0.3, 0.04, -0.35], [0.34, -0.6, 0.17]])


@builtin_metric("mdsi")
def mdsi(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    c1: float = 140.0,
    c2: float = 55.0,
    c3: float = 550.0,
    combination: str = "sum",
    alpha: float = 0.6,
    beta: float = 0.1,
    gamma: float = 0.2,
    rho: float = 1.0,
    q: float = 0.25,
    o: float = 0.25,
    grey: str = "replicate",
) -> float:
    """Mean deviation similarity index (MDSI).

    Following the authors' MATLAB code (and piq): rescale to 0..255, average ``f x f`` blocks with
    ``f = max(1, round(min(H, W) / 256))`` (MATLAB ``conv2 'same'`` alignment), convert to the LHM opponent
    space, compute the gradient similarity ``GS = S(g_r, g_d; c1) + S(g_d, g_f; c2) - S(g_r, g_f; c2)``
    with Prewitt magnitudes (``g_f`` of the fused image ``(r + d) / 2``; the order matters: reference first), the chromaticity similarity ``CS`` of the H and M
    channels, combine them (``'sum'``: ``alpha GS + (1 - alpha) CS``; ``'mult'``: ``GS^gamma CS^beta``, complex
    powers), and pool with the mean deviation of ``GCS^q`` (complex): ``mean(|GCS^q - mean(GCS^q)|^rho)^(o/rho)``.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
    c1, c2, c3 : float, default=140, 55, 550
        Constants on the 0..255 scale.
    combination : {'sum', 'mult'}, default='sum'
    alpha, beta, gamma, rho, q, o : float
        The paper's combination and pooling parameters.
    grey : {'replicate', 'achromatic'}, default='replicate'
        MDSI is defined for RGB images. ``'replicate'`` feeds the grey image as ``(g, g, g)`` to the colour
        code (as the authors' MATLAB code and piq do for a replicated grey image: because the LHM rows do not
        sum exactly to 0, H = -0.01 g and M = -0.09 g are not zero). ``'achromatic'`` sets H = M = 0, so the
        chromaticity similarity is 1 everywhere.

    Returns
    -------
    value : float
        0 for identical images; lower is better.
    """
    func = "mdsi"
    x, y = rescaled_pair(image_true, image_test, data_range, func=func, min_size=3, factor="auto")
    combination = check_choice(combination, ("sum", "mult"), name="combination", func=func)
    grey = check_choice(grey, ("replicate", "achromatic"), name="grey", func=func)
    if rho <= 0 or o <= 0:
        raise InvalidParameterError(
            f"The 'rho' and 'o' parameters of mdsi must be > 0. Got rho={rho!r}, o={o!r}."
        )
    rowsum = _LHM.sum(axis=1)
    lx, ly = rowsum[0] * x, rowsum[0] * y
    gx, gy = gradient_magnitude(lx, PREWITT), gradient_magnitude(ly, PREWITT)
    gavg = gradient_magnitude((lx + ly) / 2.0, PREWITT)
    gs = similarity_map(gx, gy, c1) + similarity_map(gy, gavg, c2) - similarity_map(gx, gavg, c2)
    if grey == "replicate":
        hx, mx, hy, my = rowsum[1] * x, rowsum[2] * x, rowsum[1] * y, rowsum[2] * y
        cs = (2.0 * (hx * hy + mx * my) + c3) / (hx * hx + hy * hy + mx * mx + my * my + c3)
    else:
        cs = np.ones_like(gs)
    if combination == "sum":
        gcs = (alpha * gs + (1.0 - alpha) * cs).astype(np.complex128)
    else:
        gcs = np.power(gs.astype(np.complex128), gamma) * np.power(cs.astype(np.complex128), beta)
    gq = np.power(gcs, q)
    dev = np.abs(gq - gq.mean())
    return float(np.mean(dev**rho) ** (o / rho))
