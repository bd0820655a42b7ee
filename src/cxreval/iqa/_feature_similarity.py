"""FSIM: feature similarity index from phase congruency and gradient magnitude.

For single-channel images (FSIM, not the colour FSIMc): both images are rescaled to 0..255
(``x * 255 / data_range``, no rounding), downsampled by ``f = max(1, round(min(H, W) / 256))``, and their
phase congruency ``PC`` (Kovesi's ``phasecong2`` with log-Gabor filters: 4 scales, 4 orientations, as in
the authors' ``FeatureSIM.m``) and Scharr gradient magnitudes ``G`` are compared::

    S_PC = (2 PC_1 PC_2 + T1) / (PC_1^2 + PC_2^2 + T1)          T1 = 0.85
    S_G  = (2 G_1 G_2 + T2) / (G_1^2 + G_2^2 + T2)               T2 = 160
    FSIM = sum(S_PC S_G PC_m) / sum(PC_m),   PC_m = max(PC_1, PC_2)

Conventions (documented differences between implementations):

* ``downsample='matlab'`` (default) is the authors' ``conv2(Y, ones(f)/f^2, 'same')`` followed by
  ``Y(1:f:end, 1:f:end)`` (zero padding, window offset by ``(f - 1) // 2``); ``'pool'`` is piq's/pyiqa's
  ``avg_pool2d`` (blocks from the origin). They coincide for ``f <= 2`` and even sizes, and differ for
  1024-pixel radiographs (``f = 4``).
* ``median='matlab'`` (default) averages the two middle values as MATLAB's ``median``; ``'lower'`` takes
  the lower one as ``torch.median`` does in piq.
* ``epsilon = 1e-4`` in the local energy normalisation as in ``phasecong2.m`` (piq uses machine epsilon).

References
----------
.. [1] L. Zhang, L. Zhang, X. Mou and D. Zhang, "FSIM: a feature similarity index for image quality
   assessment", IEEE TIP 20(8):2378-2386, 2011. doi:10.1109/TIP.2011.2109730
.. [2] P. Kovesi, "Image features from phase congruency", Videre 1(3):1-26, 1999.
"""

from __future__ import annotations

import functools

import numpy as np

from .._validation import check_choice
from ._catalogue import builtin_metric
from ._image import SCHARR, gradient_magnitude, rescaled_pair, similarity_map

__all__ = ["fsim", "phase_congruency", "log_gabor_bank"]


def _freq_grid(n: int) -> np.ndarray:
    if n % 2:
        return np.arange(-(n - 1) / 2, (n - 1) / 2 + 1) / (n - 1)
    return np.arange(-n / 2, n / 2) / n


@functools.lru_cache(maxsize=8)
def log_gabor_bank(
    rows: int,
    cols: int,
    scales: int,
    orientations: int,
    min_wavelength: float,
    mult: float,
    sigma_f: float,
    delta_theta: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-Gabor filter bank (orientations, scales, rows, cols) of ``phasecong2``, the energy of the
    smallest-scale filter per orientation, and the noise-energy factor ``2 sum A^2 + 4 sum A_i A_j``
    (read-only; cached): what :func:`phase_congruency` filters a ``rows x cols`` image with. ``phasecong2``'s
    bank, as :func:`fsim` uses it by default, is ``log_gabor_bank(rows, cols, 4, 4, 6, 2, 0.55, 1.2)``: 4 scales,
    4 orientations, smallest wavelength 6, scale factor 2, bandwidth ratio 0.55, angular ratio 1.2."""
    from scipy import fft as sfft

    x = _freq_grid(cols)[None, :]
    y = _freq_grid(rows)[:, None]
    radius = np.sqrt(x * x + y * y)
    theta = np.arctan2(-y, x)
    lp = np.fft.ifftshift(1.0 / (1.0 + (radius / 0.45) ** (2 * 15)))
    radius = np.fft.ifftshift(radius)
    theta = np.fft.ifftshift(theta)
    radius[0, 0] = 1.0
    sint, cost = np.sin(theta), np.cos(theta)
    log_gabor = np.empty((scales, rows, cols))
    for s in range(scales):
        fo = 1.0 / (min_wavelength * mult**s)
        g = np.exp(-(np.log(radius / fo) ** 2) / (2.0 * np.log(sigma_f) ** 2)) * lp
        g[0, 0] = 0.0
        log_gabor[s] = g
    theta_sigma = np.pi / orientations / delta_theta
    filt = np.empty((orientations, scales, rows, cols))
    for o in range(orientations):
        ang = o * np.pi / orientations
        ds = sint * np.cos(ang) - cost * np.sin(ang)
        dc = cost * np.cos(ang) + sint * np.sin(ang)
        spread = np.exp(-(np.arctan2(ds, dc) ** 2) / (2.0 * theta_sigma**2))
        filt[o] = log_gabor * spread
    em_n = (filt[:, 0] ** 2).sum(axis=(-2, -1))
    spatial = sfft.ifft2(filt, axes=(-2, -1), workers=1).real * np.sqrt(rows * cols)
    sum_an2 = (spatial**2).sum(axis=(1, 2, 3))
    cum = np.cumsum(spatial[:, ::-1], axis=1)[:, ::-1]  # cum[:, s] = sum_{j >= s} A_j
    sum_aiaj = np.zeros(orientations)
    for s in range(scales - 1):
        sum_aiaj += (spatial[:, s] * cum[:, s + 1]).sum(axis=(-2, -1))
    factor = 2.0 * sum_an2 + 4.0 * sum_aiaj
    for a in (filt, em_n, factor):
        a.setflags(write=False)
    return filt, em_n, factor


def phase_congruency(
    image: np.ndarray,
    bank: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    k: float = 2.0,
    epsilon: float = 1e-4,
    median: str = "matlab",
) -> np.ndarray:
    """Phase congruency map of a 2-D image (Kovesi's ``phasecong2`` as used by ``FeatureSIM.m``).

    Parameters
    ----------
    image : numpy.ndarray of shape (H, W)
    bank : tuple of numpy.ndarray
        The log-Gabor filter bank of the image's shape, :func:`log_gabor_bank`.
    k : float, default=2.0
        Standard deviations of the noise energy above its mean used as the noise threshold.
    epsilon : float, default=1e-4
    median : {'matlab', 'lower'}, default='matlab'

    Returns
    -------
    pc : numpy.ndarray of shape (H, W), values in [0, 1]
    """
    from scipy import fft as sfft

    filt, em_n, factor = bank
    eo = sfft.ifft2(
        sfft.fft2(image, workers=1)[None, None] * filt, axes=(-2, -1), workers=1, overwrite_x=True
    )
    # even = Re(eo), odd = Im(eo). With S = sum_s eo and the unit phase m = S / (|S| + epsilon):
    # sum_s (e me + o mo - |e mo - o me|) = |S|^2 / (|S| + epsilon) - sum_s |Im(eo conj(m))|
    total = eo.sum(axis=1)
    mag = np.abs(total)
    m = np.conj(total / (mag + epsilon))
    energy = mag * mag / (mag + epsilon) - np.abs((eo * m[:, None]).imag).sum(axis=1)
    an = np.abs(eo)
    e2 = (an[:, 0] ** 2).reshape(filt.shape[0], -1)
    if median == "matlab":
        med = np.median(e2, axis=1)
    else:
        med = np.partition(e2, (e2.shape[1] - 1) // 2, axis=1)[:, (e2.shape[1] - 1) // 2]
    noise_power = (-med / np.log(0.5)) / em_n
    tau = np.sqrt(noise_power * factor / 2.0)
    t = (tau * np.sqrt(np.pi / 2.0) + k * np.sqrt((2.0 - np.pi / 2.0) * tau**2)) / 1.7
    energy = np.maximum(energy - t[:, None, None], 0.0)
    eps = np.finfo(np.float64).eps
    return (energy.sum(axis=0) + eps) / (an.sum(axis=(0, 1)) + eps)


@builtin_metric("fsim")
def fsim(
    image_true: np.ndarray,
    image_test: np.ndarray,
    *,
    data_range: float,
    t1: float = 0.85,
    t2: float = 160.0,
    downsample: str = "matlab",
    median: str = "matlab",
    epsilon: float = 1e-4,
    scales: int = 4,
    orientations: int = 4,
    min_wavelength: float = 6,
    mult: float = 2,
    sigma_f: float = 0.55,
    delta_theta: float = 1.2,
    k: float = 2.0,
) -> float:
    """Feature similarity index (FSIM) of single-channel images.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...).
    t1, t2 : float, default=0.85, 160
        Constants of the phase-congruency and gradient similarities (0..255 scale).
    downsample : {'matlab', 'pool'}, default='matlab'
        See the module notes.
    median : {'matlab', 'lower'}, default='matlab'
        Median of the smallest-scale energies in the noise estimate.
    epsilon, scales, orientations, min_wavelength, mult, sigma_f, delta_theta, k
        Phase-congruency parameters: ``k`` and ``epsilon`` of :func:`phase_congruency`, the others of its
        filter bank, :func:`log_gabor_bank`.
    """
    func = "fsim"
    downsample = check_choice(downsample, ("matlab", "pool"), name="downsample", func=func)
    median = check_choice(median, ("matlab", "lower"), name="median", func=func)
    x, y = rescaled_pair(
        image_true, image_test, data_range, func=func, min_size=8, factor="auto", downsample=downsample
    )
    bank = log_gabor_bank(
        *x.shape,
        int(scales),
        int(orientations),
        float(min_wavelength),
        float(mult),
        float(sigma_f),
        float(delta_theta),
    )
    pc1, pc2 = (phase_congruency(image, bank, k=k, epsilon=epsilon, median=median) for image in (x, y))
    s_pc = similarity_map(pc1, pc2, t1)
    s_g = similarity_map(gradient_magnitude(x, SCHARR), gradient_magnitude(y, SCHARR), t2)
    pcm = np.maximum(pc1, pc2)
    return float(np.sum(s_pc * s_g * pcm) / np.sum(pcm))
