"""No-reference metrics: PIQE, SNR and NIQE.

Images are single-channel float64 with an explicit ``data_range``; PIQE and NIQE work on the 0..255 scale
(``x * 255 / data_range``) without rounding to 8 bits unless asked (``round_8bit=True`` reproduces pyiqa,
which rounds).

References
----------
.. [1] N. Venkatanath, D. Praneeth, M. C. Bh, S. S. Channappayya and S. S. Medasani, "Blind image quality
   evaluation using perception based features", NCC 2015. doi:10.1109/NCC.2015.7084843
.. [2] A. Mittal, R. Soundararajan and A. C. Bovik, "Making a 'completely blind' image quality analyzer",
   IEEE Signal Processing Letters 20(3):209-212, 2013. doi:10.1109/LSP.2012.2227726
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .._typing import PathLike
from .._validation import check_choice
from ..exceptions import CxrevalError, DataUnavailableError, InvalidParameterError
from ._catalogue import builtin_metric
from ._image import check_data_range, check_image, gaussian_kernel

__all__ = ["piqe", "snr", "niqe", "load_niqe_model", "NIQEModel"]

_G7 = gaussian_kernel(7, 7.0 / 6.0)
_G7_1D = _G7[:, 3] / np.sqrt(_G7[3, 3])


def _mscn(image: np.ndarray) -> np.ndarray:
    """Mean-subtracted contrast-normalised coefficients: 7x7 Gaussian (sigma 7/6), replicate borders."""
    from scipy import ndimage

    def blur(a: np.ndarray) -> np.ndarray:
        return ndimage.correlate1d(
            ndimage.correlate1d(a, _G7_1D, axis=0, mode="nearest"), _G7_1D, axis=1, mode="nearest"
        )

    mu = blur(image)
    sigma = np.sqrt(np.abs(blur(image * image) - mu * mu))
    return (image - mu) / (sigma + 1.0)


def _to_255(
    image: object, data_range: object, *, func: str, normalize: str, round_8bit: bool, min_size: int
) -> np.ndarray:
    x = check_image(image, func=func, min_size=min_size)
    dr = check_data_range(data_range, func=func)
    normalize = check_choice(normalize, ("data_range", "max"), name="normalize", func=func)
    if normalize == "max":
        top = float(x.max())
        if top <= 0:
            raise InvalidParameterError(f"{func}: normalize='max' needs an image with a positive maximum.")
        x = x * (255.0 / top)
    else:
        x = x * (255.0 / dr)
    return np.rint(x) if round_8bit else x


@builtin_metric("piqe")
def piqe(
    image: np.ndarray,
    *,
    data_range: float,
    block_size: int = 16,
    activity_threshold: float = 0.1,
    block_impaired_threshold: float = 0.1,
    window_size: int = 6,
    normalize: str = "data_range",
    round_8bit: bool = False,
) -> float:
    """Perception-based image quality evaluator (PIQE), as MATLAB's ``piqe``.

    The image (0..255 scale) is padded to a multiple of ``block_size`` by replicating its last row/column
    (MATLAB's ``padarray(..., 'replicate', 'post')``; pyiqa pads symmetrically by ``H mod 16`` rows, which
    agrees for sizes that are multiples of 16), converted to MSCN coefficients (7x7 Gaussian, replicate
    borders), and cut into 16x16 blocks. Blocks with variance above ``activity_threshold`` are active; an
    active block is distorted by blockiness (an edge segment of ``window_size`` pixels with standard deviation
    below ``block_impaired_threshold``: score ``1 - var``) and/or by noise (block std above twice the
    centre-surround deviation ratio: score ``var``). PIQE = ``100 (sum of scores + 1) / (n_active + 1)``.

    Parameters
    ----------
    image : array-like of shape (H, W), H, W >= block_size
    data_range : float
        Span of the stored type (255, 65535, 1.0 ...).
    block_size, activity_threshold, block_impaired_threshold, window_size
        MATLAB's defaults 16, 0.1, 0.1, 6.
    normalize : {'data_range', 'max'}, default='data_range'
        ``'data_range'``: ``x * 255 / data_range``; ``'max'``: ``x * 255 / max(x)`` (pyiqa).
    round_8bit : bool, default=False
        Round to integers after scaling (pyiqa does).

    Returns
    -------
    value : float
        In [0, 100]; lower is better.
    """
    func = "piqe"
    bs = int(block_size)
    x = _to_255(image, data_range, func=func, normalize=normalize, round_8bit=round_8bit, min_size=bs)
    h, w = x.shape
    x = np.pad(x, ((0, -h % bs), (0, -w % bs)), mode="edge")
    mscn = _mscn(x)
    hb, wb = mscn.shape[0] // bs, mscn.shape[1] // bs
    blocks = mscn.reshape(hb, bs, wb, bs).transpose(0, 2, 1, 3).reshape(-1, bs, bs)
    var = blocks.var(axis=(1, 2), ddof=1)
    active = var > activity_threshold
    # noise criterion: centre (two middle columns) vs surround standard deviation. As MATLAB's
    # centerSurDev (and pyiqa): columns c1 and c1 + 1 are the centre; deleting column c1 and then column
    # c1 + 1 of what remains leaves out the original columns c1 and c1 + 2 from the surround.
    c1 = bs // 2 - 1
    centre = blocks[:, :, c1 : c1 + 2].reshape(len(blocks), -1)
    keep = np.ones(bs, dtype=bool)
    keep[[c1, c1 + 2]] = False
    surround = blocks[:, :, keep].reshape(len(blocks), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        csd = np.nan_to_num(centre.std(axis=1, ddof=1) / surround.std(axis=1, ddof=1))
        sigma = np.sqrt(var)
        beta = np.abs(sigma - csd) / np.maximum(sigma, csd)
    noisy = sigma > 2.0 * beta
    # noticeable-distortion criterion: low-variance segments along the four block edges
    edges = np.stack([blocks[:, 0, :], blocks[:, :, -1], blocks[:, -1, :], blocks[:, :, 0]], axis=1)
    seg_std = sliding_window_view(edges, window_size, axis=-1).std(axis=-1, ddof=1)
    impaired = (seg_std < block_impaired_threshold).any(axis=(1, 2))
    scores = active * impaired * (1.0 - var) + active * noisy * var
    return float((scores.sum() + 1.0) / (active.sum() + 1.0) * 100.0)


@builtin_metric("snr")
def snr(image: np.ndarray, *, data_range: float, mask: np.ndarray | None = None, ddof: int = 0) -> float:
    """Signal-to-noise ratio of one image, ``SNR = 20 log10(mean(x) / std(x))`` in dB.

    This is the no-reference SNR used for radiographs (the ratio of the mean signal to its standard
    deviation, over the whole image or a region ``mask``); it is invariant to the intensity scale, so
    ``data_range`` is only validated.

    Parameters
    ----------
    image : array-like of shape (H, W)
    data_range : float
    mask : array-like of bool, shape (H, W), optional
        Region over which mean and standard deviation are taken (default: the whole image).
    ddof : int, default=0
        Delta degrees of freedom of the standard deviation.

    Returns
    -------
    value : float
        In dB; ``inf`` for a constant non-zero image, NaN when the mean is not positive.

    Examples
    --------
    >>> import numpy as np
    >>> round(snr(np.array([[1.0, 3.0], [1.0, 3.0]]), data_range=255), 6)
    6.0206
    """
    x = check_image(image, func="snr")
    check_data_range(data_range, func="snr")
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != x.shape:
            raise InvalidParameterError(f"snr: 'mask' must have the image's shape {x.shape}. Got {m.shape}.")
        if not m.any():
            raise InvalidParameterError("snr: 'mask' selects no pixel.")
        x = x[m]
    mean, std = float(np.mean(x)), float(np.std(x, ddof=ddof))
    if mean <= 0:
        return float("nan")
    if std == 0:
        return float("inf")
    return float(20.0 * np.log10(mean / std))


# ----------------------------------------------------------------------------------------------- NIQE
class NIQEModel:
    """Pristine multivariate Gaussian model of NIQE: ``mu`` (36,) and ``cov`` (36, 36)."""

    __slots__ = ("mu", "cov", "source")

    def __init__(self, mu: np.ndarray, cov: np.ndarray, source: str = "") -> None:
        mu = np.asarray(mu, dtype=np.float64).ravel()
        cov = np.asarray(cov, dtype=np.float64)
        if (
            mu.shape != (36,)
            or cov.shape != (36, 36)
            or not (np.all(np.isfinite(mu)) and np.all(np.isfinite(cov)))
        ):
            raise CxrevalError(
                f"NIQE model {source or ''}: expected finite mu of 36 values and a 36x36 cov; "
                f"got shapes {mu.shape} and {cov.shape}."
            )
        if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12):
            raise CxrevalError(
                f"NIQE model {source or ''}: cov must be a symmetric 36x36 covariance matrix; "
                f"its largest asymmetry is {float(np.abs(cov - cov.T).max()):.3g}."
            )
        self.mu, self.cov, self.source = mu, cov, source


def load_niqe_model(path: PathLike) -> NIQEModel:
    """Load NIQE's pristine model from a ``.mat`` (``mu_prisparam``, ``cov_prisparam``, as the authors'
    ``modelparameters.mat``) or ``.npz`` (``mu``/``cov`` or the same names) file the user supplies."""
    p = Path(path)
    if not p.is_file():
        raise DataUnavailableError(
            f"NIQE model file {p} does not exist. NIQE needs the published pristine "
            "model parameters (modelparameters.mat from the authors' release)."
        )
    try:
        if p.suffix.lower() == ".mat":
            from scipy.io import loadmat

            d = loadmat(str(p))
        else:
            d = dict(np.load(p, allow_pickle=False))
    except Exception as exc:
        raise CxrevalError(f"Cannot read NIQE model file {p}: {exc}") from exc
    for mu_key, cov_key in (
        ("mu_prisparam", "cov_prisparam"),
        ("mu", "cov"),
        ("mu_pris_param", "cov_pris_param"),
    ):
        if mu_key in d and cov_key in d:
            return NIQEModel(d[mu_key], d[cov_key], source=str(p))
    keys = sorted(k for k in d if not k.startswith("__"))
    raise CxrevalError(
        f"NIQE model file {p} must hold 'mu_prisparam' and 'cov_prisparam' (or 'mu' and 'cov'); "
        f"it has {keys}."
    )


def _cubic(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    a2, a3 = a * a, a * a * a
    return (1.5 * a3 - 2.5 * a2 + 1.0) * (a <= 1) + (-0.5 * a3 + 2.5 * a2 - 4.0 * a + 2.0) * (
        (a > 1) & (a <= 2)
    )


@functools.lru_cache(maxsize=16)
def _imresize_matrix(n_in: int, n_out: int, scale: float) -> np.ndarray:
    """(n_out, n_in) matrix of MATLAB's ``imresize`` (bicubic, antialiasing) along one axis."""
    width = 4.0 / scale if scale < 1 else 4.0
    u = np.arange(1, n_out + 1) / scale + 0.5 * (1.0 - 1.0 / scale)
    left = np.floor(u - width / 2.0)
    p = int(np.ceil(width)) + 2
    ind = left[:, None] + np.arange(p)[None, :]
    dist = u[:, None] - ind
    wts = scale * _cubic(dist * scale) if scale < 1 else _cubic(dist)
    wts = wts / wts.sum(axis=1, keepdims=True)
    aux = np.concatenate([np.arange(n_in), np.arange(n_in)[::-1]])
    cols = aux[np.mod(ind.astype(int) - 1, 2 * n_in)]
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.repeat(np.arange(n_out), p), cols.ravel()), wts.ravel())
    m.setflags(write=False)
    return m


def _imresize_half(image: np.ndarray) -> np.ndarray:
    h, w = image.shape
    r = _imresize_matrix(h, int(np.ceil(h * 0.5)), 0.5)
    c = _imresize_matrix(w, int(np.ceil(w * 0.5)), 0.5)
    return r @ image @ c.T


_GAM = np.arange(0.2, 10.0 + 0.0005, 0.001)


@functools.cache
def _r_gam() -> np.ndarray:
    """The generalized-Gaussian ratio at every shape of ``_GAM`` (computed on first use)."""
    from scipy.special import gammaln

    return np.exp(2.0 * gammaln(2.0 / _GAM) - gammaln(1.0 / _GAM) - gammaln(3.0 / _GAM))


def _aggd(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AGGD fit (``estimateaggdparam``) for each row of ``v``: alpha, beta_left, beta_right."""
    from scipy.special import gammaln

    neg, pos = v < 0, v > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lstd = np.sqrt((v * v * neg).sum(axis=1) / neg.sum(axis=1))
        rstd = np.sqrt((v * v * pos).sum(axis=1) / pos.sum(axis=1))
        g = lstd / rstd
        rhat = np.abs(v).mean(axis=1) ** 2 / (v * v).mean(axis=1)
        rnorm = rhat * (g**3 + 1.0) * (g + 1.0) / (g * g + 1.0) ** 2
    pos_idx = np.argmin((_r_gam()[None, :] - rnorm[:, None]) ** 2, axis=1)
    alpha = _GAM[pos_idx]
    f = np.sqrt(np.exp(gammaln(1.0 / alpha) - gammaln(3.0 / alpha)))
    bad = ~np.isfinite(rnorm)
    alpha = np.where(bad, np.nan, alpha)
    return alpha, lstd * f, rstd * f


def _niqe_features(mscn: np.ndarray, bh: int, bw: int) -> np.ndarray:
    from scipy.special import gammaln

    nh, nw = mscn.shape[0] // bh, mscn.shape[1] // bw
    blocks = mscn[: nh * bh, : nw * bw].reshape(nh, bh, nw, bw).transpose(2, 0, 1, 3)  # column-major order
    blocks = blocks.reshape(-1, bh, bw)
    flat = blocks.reshape(len(blocks), -1)
    a, bl, br = _aggd(flat)
    feats = [a, (bl + br) / 2.0]
    for shift in ((0, 1), (1, 0), (1, 1), (-1, 1)):
        prod = (blocks * np.roll(blocks, shift, axis=(1, 2))).reshape(len(blocks), -1)
        a, bl, br = _aggd(prod)
        mean = (br - bl) * np.exp(gammaln(2.0 / a) - gammaln(1.0 / a))
        feats += [a, mean, bl, br]
    return np.stack(feats, axis=1)


@builtin_metric("niqe")
def niqe(
    image: np.ndarray,
    *,
    data_range: float,
    model: str | Path | NIQEModel | None = None,
    block_size: int = 96,
    round_8bit: bool = False,
) -> float:
    """Natural image quality evaluator (NIQE), as the authors' ``computequality.m``.

    36 features (AGGD fits of MSCN coefficients and of their products with 4 neighbours, at 2 scales) are
    computed per 96x96 block (48x48 at the half scale, MATLAB bicubic ``imresize`` with antialiasing), and
    the distance between their multivariate Gaussian fit and the pristine model is
    ``sqrt((mu_p - mu_d) pinv((C_p + C_d) / 2) (mu_p - mu_d)^T)``. Blocks whose features are undefined
    (NaN, e.g. flat blocks) are left out, as MATLAB's ``nanmean``/``nancov``.

    Parameters
    ----------
    image : array-like of shape (H, W), at least ``block_size`` on each side
    data_range : float
        Span of the stored type; the image is scaled to 0..255.
    model : str, Path or NIQEModel
        The published pristine model (``modelparameters.mat`` with ``mu_prisparam``/``cov_prisparam``, or an
        ``.npz``). Not bundled: a :class:`~cxreval.exceptions.DataUnavailableError` says so when missing.
    block_size : int, default=96
    round_8bit : bool, default=False
        Round to integers after scaling (pyiqa does).

    Returns
    -------
    value : float
        Lower is better.
    """
    func = "niqe"
    if model is None:
        raise DataUnavailableError(
            "niqe needs the published pristine model parameters: pass model=PATH to the "
            "authors' modelparameters.mat (mu_prisparam, cov_prisparam) or an .npz."
        )
    mdl = model if isinstance(model, NIQEModel) else load_niqe_model(model)
    bs = int(block_size)
    if bs < 4 or bs % 2:
        raise InvalidParameterError(
            f"The 'block_size' parameter of niqe must be an even int >= 4. Got {block_size!r}."
        )
    x = _to_255(image, data_range, func=func, normalize="data_range", round_8bit=round_8bit, min_size=bs)
    h, w = (x.shape[0] // bs) * bs, (x.shape[1] // bs) * bs
    x = x[:h, :w]
    feats = []
    for scale in (1, 2):
        feats.append(_niqe_features(_mscn(x), bs // scale, bs // scale))
        if scale == 1:
            x = _imresize_half(x)
    f = np.concatenate(feats, axis=1)
    f = f[~np.isnan(f).any(axis=1)]
    if len(f) < 2:
        raise InvalidParameterError(
            f"niqe: fewer than 2 blocks with defined features (image shape {h}x{w}, block {bs})."
        )
    mu_d = f.mean(axis=0)
    cov_d = np.cov(f, rowvar=False)
    diff = mdl.mu - mu_d
    return float(np.sqrt(diff @ np.linalg.pinv((mdl.cov + cov_d) / 2.0) @ diff))
