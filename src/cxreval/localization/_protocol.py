"""The ChestX-ray8 localization protocol: configuration and scoring to Acc. and AFP.

Wang et al. (2017) score boxes cut from a classifier's maps against radiologist boxes and report, per
finding and threshold ``T(IoBB)``, the localization accuracy (Acc.) and the average number of false
positives (AFP). The paper defines neither; cxreval reads them as the ChestX-ray14 article does:

* **Acc.** = (reference boxes hit by at least one correct detected box) / (reference boxes);
* **AFP** = (detected boxes correct for none of the image's reference boxes of that finding) / (images).

The AFP denominator is :attr:`LocalizationProtocol.afp_denominator`: ``'pairs'`` (default: the (image,
finding) pairs that have a reference box of the finding, the article's reading, which its synthetic study's
printed AFPs need: 18 distractors / 60 images = 0.300), ``'box_images'`` (every image of the box set, 880 in
``BBox_List_2017``) or ``'boxes'`` (every reference box, 984). With the last two, a finding's maps on box
images *without* a box of that finding are scored too: each of their boxes is a false positive. Table 4's
one AFP the article quotes (Nodule 0.0772 from T = 0.5 on) is k/79 for no k (79 Nodule images) but is 68/880
(truncated) or 76/984: the paper likely averaged over all box images or all boxes
(:func:`cxreval.localization.afp_denominators`).

A detected box ``p`` is *correct* for a reference box ``g`` when ``rule(p, g) > T`` (``>=`` with
``strict=False``); ``rule`` is ``'IoBB'`` (the paper's Table 4), ``'IoU'``, or ``'IoU or IoBB'`` (the text's
criterion, which equals the IoBB rule at equal thresholds since IoBB >= IoU). The IoU part uses
``T_iou`` when the protocol sets it (``IoU > T_iou[k] or IoBB > T_values[k]``), else the same ``T``. When an image has several
reference boxes of one finding, each counts once in the denominator of Acc.; one detected box may hit
several of them; a detected box is a false positive only if it is correct for none; the image counts
once in the denominator of AFP. Decisions are exact (see :func:`cxreval.localization.exceeds`).

Every choice the paper leaves open is a field of :class:`LocalizationProtocol`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .._validation import check_choice
from ..exceptions import InvalidParameterError
from ._boxes import ThresholdLike, as_threshold, exceeds
from ._heatmaps import CONNECTIVITY, UPSAMPLING

__all__ = [
    "RULES",
    "DEFAULT_T",
    "AFP_DENOMINATORS",
    "LocalizationProtocol",
    "correct_matrix",
    "score_images",
    "ImageScores",
]

RULES: tuple[str, ...] = ("IoBB", "IoU", "IoU or IoBB")
AFP_DENOMINATORS: tuple[str, ...] = ("pairs", "box_images", "boxes")
DEFAULT_T: tuple[Fraction, ...] = tuple(Fraction(t) for t in ("0.1", "0.25", "0.5", "0.75", "0.9"))


@dataclass(frozen=True)
class LocalizationProtocol:
    """Every choice of the box-generation and scoring protocol.

    Attributes
    ----------
    upsampling : {'bilinear', 'nearest'}, default='bilinear'
        How an ``s x s`` map becomes an image-size map (centred grid; bilinear holds edge values).
    thresholds : tuple of float, default=(60, 180)
        Thresholds on the min-max normalised ``[0, 255]`` float map, applied individually.
    strict_threshold : bool, default=True
        Region is ``> threshold`` (True) or ``>= threshold``.
    connectivity : {8, 4}, default=8
    rules : tuple of {'IoBB', 'IoU', 'IoU or IoBB'}, default=('IoBB', 'IoU', 'IoU or IoBB')
    T_values : tuple of Fraction, default=(1/10, 1/4, 1/2, 3/4, 9/10)
        The T of each result column: T(IoBB), and T(IoU) too unless ``T_iou`` is set.
    T_iou : tuple of Fraction or None, default=None
        A separate T(IoU) per column (same length as ``T_values``) for the ``'IoU'`` and ``'IoU or IoBB'``
        rules; ``None``: T(IoU) = T(IoBB) = ``T_values``.
    afp_denominator : {'pairs', 'box_images', 'boxes'}, default='pairs'
        What AFP divides the false positives by (see the module docstring).
    strict_T : bool, default=True
        A box is correct when ``measure > T`` (True) or ``measure >= T``.
    image_shape : (int, int), default=(1024, 1024)
        (height, width) of the images the reference boxes are drawn on.
    normalization : {'minmax'}
        Min-max rescaling of the upsampled map to [0, 255], kept as float.
    """

    upsampling: str = "bilinear"
    thresholds: tuple[float, ...] = (60.0, 180.0)
    strict_threshold: bool = True
    connectivity: int = 8
    rules: tuple[str, ...] = RULES
    T_values: tuple[Fraction, ...] = DEFAULT_T
    strict_T: bool = True
    image_shape: tuple[int, int] = (1024, 1024)
    normalization: str = field(default="minmax")
    T_iou: tuple[Fraction, ...] | None = None
    afp_denominator: str = "pairs"

    def __post_init__(self) -> None:
        check_choice(self.upsampling, UPSAMPLING, name="upsampling", func="LocalizationProtocol")
        check_choice(self.normalization, ("minmax",), name="normalization", func="LocalizationProtocol")
        if self.connectivity not in CONNECTIVITY:
            raise InvalidParameterError(
                f"The 'connectivity' parameter of LocalizationProtocol must be 8 or 4. "
                f"Got {self.connectivity!r} instead."
            )
        for r in self.rules:
            check_choice(r, RULES, name="rules", func="LocalizationProtocol")
        if not self.rules or not self.thresholds or not self.T_values:
            raise InvalidParameterError(
                "LocalizationProtocol needs at least one rule, threshold and T value."
            )
        for t in self.thresholds:
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 255:
                raise InvalidParameterError(
                    f"The 'thresholds' of LocalizationProtocol must be numbers in [0, 255]. "
                    f"Got {t!r} instead."
                )
        object.__setattr__(self, "thresholds", tuple(float(t) for t in self.thresholds))
        object.__setattr__(self, "T_values", _overlap_thresholds(self.T_values, "T_values"))
        check_choice(
            self.afp_denominator, AFP_DENOMINATORS, name="afp_denominator", func="LocalizationProtocol"
        )
        if self.T_iou is not None:
            if len(self.T_iou) != len(self.T_values):
                raise InvalidParameterError(
                    f"The 'T_iou' parameter of LocalizationProtocol must have one value per "
                    f"T value ({len(self.T_values)}: {', '.join(map(str, self.T_values))}). "
                    f"Got {len(self.T_iou)}."
                )
            object.__setattr__(self, "T_iou", _overlap_thresholds(self.T_iou, "T_iou"))
        object.__setattr__(self, "rules", tuple(self.rules))
        shape = tuple(self.image_shape)
        if len(shape) != 2 or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in shape
        ):
            raise InvalidParameterError(
                f"The 'image_shape' parameter of LocalizationProtocol must be two positive "
                f"ints (height, width) in pixels. Got {self.image_shape!r} instead."
            )
        object.__setattr__(self, "image_shape", (int(shape[0]), int(shape[1])))

    def to_dict(self) -> dict[str, object]:
        return {
            "upsampling": self.upsampling,
            "thresholds": list(self.thresholds),
            "strict_threshold": self.strict_threshold,
            "connectivity": self.connectivity,
            "rules": list(self.rules),
            "T_values": [str(t) for t in self.T_values],
            "strict_T": self.strict_T,
            "image_shape": list(self.image_shape),
            "normalization": self.normalization,
            "T_iou": None if self.T_iou is None else [str(t) for t in self.T_iou],
            "afp_denominator": self.afp_denominator,
        }

    @property
    def T_iou_values(self) -> tuple[Fraction, ...]:
        """T(IoU) of each column: ``T_iou``, or ``T_values`` when it is not set."""
        return self.T_values if self.T_iou is None else self.T_iou


def correct_matrix(
    boxes_pred: np.ndarray,
    boxes_true: np.ndarray,
    T: ThresholdLike,
    *,
    rule: str = "IoBB",
    strict: bool = True,
    T_iou: ThresholdLike | None = None,
) -> np.ndarray:
    """Exact decisions ``rule(p, g) > T`` for every pair: shape ``(n_pred, n_true)`` (broadcast inputs).

    ``T_iou`` (default: ``T``) is the threshold of the IoU measure in the ``'IoU'`` and ``'IoU or IoBB'``
    rules; ``T`` is then the IoBB threshold."""
    check_choice(rule, RULES, name="rule", func="correct_matrix")
    t_iou = T if T_iou is None else T_iou
    if rule == "IoBB":
        return exceeds(boxes_pred, boxes_true, T, measure="iobb", strict=strict)
    if rule == "IoU":
        return exceeds(boxes_pred, boxes_true, t_iou, measure="iou", strict=strict)
    return exceeds(boxes_pred, boxes_true, t_iou, measure="iou", strict=strict) | exceeds(
        boxes_pred, boxes_true, T, measure="iobb", strict=strict
    )


@dataclass(frozen=True)
class ImageScores:
    """Per-image hits and false positives for one rule and several T.

    Attributes
    ----------
    hits : ndarray of shape (n_T, n_images), int
        Reference boxes of the image hit by at least one correct box.
    false_positives : ndarray of shape (n_T, n_images), int
        Detected boxes of the image correct for none of its reference boxes.
    n_refs : ndarray of shape (n_images,), int
    n_preds : ndarray of shape (n_images,), int
    correct : ndarray of shape (n_T, n_pairs), bool
        The decision of every (detected, reference) pair, pairs ordered image by image, detected box
        by detected box, reference by reference.
    """

    hits: np.ndarray
    false_positives: np.ndarray
    n_refs: np.ndarray
    n_preds: np.ndarray
    correct: np.ndarray

    def acc(self) -> np.ndarray:
        """Acc. per T: hits / reference boxes."""
        return self.hits.sum(axis=1) / max(int(self.n_refs.sum()), 1)

    def afp(self) -> np.ndarray:
        """AFP per T: false positives / images."""
        return self.false_positives.sum(axis=1) / max(len(self.n_refs), 1)


def _pairs(preds: Sequence[np.ndarray], refs: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    n_p = np.array([len(p) for p in preds], dtype=np.int64)
    n_r = np.array([len(r) for r in refs], dtype=np.int64)
    P = (
        np.concatenate([np.asarray(p, float).reshape(-1, 4) for p in preds])
        if len(preds)
        else np.zeros((0, 4))
    )
    G = np.concatenate([np.asarray(r, float).reshape(-1, 4) for r in refs]) if len(refs) else np.zeros((0, 4))
    p_off = np.cumsum(n_p) - n_p
    r_off = np.cumsum(n_r) - n_r
    npairs = n_p * n_r
    img = np.repeat(np.arange(len(preds)), npairs)
    k = np.arange(int(npairs.sum())) - np.repeat(np.cumsum(npairs) - npairs, npairs)
    nr_img = n_r[img]
    pi = p_off[img] + k // np.maximum(nr_img, 1)
    ri = r_off[img] + k % np.maximum(nr_img, 1)
    return P, G, n_p, n_r, img, pi, ri


def score_images(
    preds: Sequence[np.ndarray],
    refs: Sequence[np.ndarray],
    *,
    rule: str = "IoBB",
    T_values: Sequence[ThresholdLike] = DEFAULT_T,
    strict: bool = True,
    T_iou: Sequence[ThresholdLike] | None = None,
) -> ImageScores:
    """Score detected boxes against reference boxes, image by image (vectorised over all pairs).

    Parameters
    ----------
    preds : sequence of array-like of shape (k_i, 4)
        Detected boxes of each image (possibly none).
    refs : sequence of array-like of shape (r_i, 4)
        Reference boxes of the same finding on each image (at least one each).
    rule : {'IoBB', 'IoU', 'IoU or IoBB'}, default='IoBB'
    T_values : sequence of threshold, default=DEFAULT_T
    strict : bool, default=True
    T_iou : sequence of threshold, optional
        T(IoU) per T value (``'IoU'`` and ``'IoU or IoBB'`` rules); default ``T_values``.

    Returns
    -------
    res : ImageScores
    """
    if len(preds) != len(refs):
        raise InvalidParameterError(
            f"score_images: 'preds' and 'refs' must have one entry per image; "
            f"got {len(preds)} and {len(refs)}."
        )
    P, G, n_p, n_r, img, pi, ri = _pairs(preds, refs)
    if (n_r == 0).any():
        i = int(np.flatnonzero(n_r == 0)[0])
        raise InvalidParameterError(
            f"score_images: image {i} has no reference box; every scored image needs one."
        )
    nT = len(T_values)
    if T_iou is not None and len(T_iou) != nT:
        raise InvalidParameterError(
            f"score_images: 'T_iou' must have one value per T value ({nT}); got {len(T_iou)}."
        )
    n_img = len(preds)
    hits = np.zeros((nT, n_img), dtype=np.int64)
    fps = np.zeros((nT, n_img), dtype=np.int64)
    corr = np.zeros((nT, img.size), dtype=bool)
    for k, T in enumerate(T_values):
        ti = None if T_iou is None else T_iou[k]
        c = (
            correct_matrix(P[pi], G[ri], T, rule=rule, strict=strict, T_iou=ti)
            if img.size
            else np.zeros(0, bool)
        )
        corr[k] = c
        ref_hit = np.zeros(len(G), dtype=bool)
        np.logical_or.at(ref_hit, ri[c], True)
        pred_ok = np.zeros(len(P), dtype=bool)
        np.logical_or.at(pred_ok, pi[c], True)
        r_img = np.repeat(np.arange(n_img), n_r)
        p_img = np.repeat(np.arange(n_img), n_p)
        hits[k] = np.bincount(r_img, weights=ref_hit, minlength=n_img).astype(np.int64)
        fps[k] = np.bincount(p_img, weights=~pred_ok, minlength=n_img).astype(np.int64)
    return ImageScores(hits, fps, n_r, n_p, corr)


def _overlap_thresholds(values: object, name: str) -> tuple[Fraction, ...]:
    """Overlap thresholds as exact fractions, each in (0, 1] (an overlap measure lies in [0, 1])."""
    out = []
    for t in values:  # type: ignore[attr-defined]
        try:
            out.append(as_threshold(t, name=name))
        except InvalidParameterError:
            raise InvalidParameterError(
                f"The '{name}' parameter of LocalizationProtocol must be numbers in (0, 1] "
                f"(decimals or fractions such as 1/3). Got {t!r} instead."
            ) from None
    bad = [t for t in out if not 0 < t <= 1]
    if bad:
        raise InvalidParameterError(
            f"The '{name}' parameter of LocalizationProtocol must lie in (0, 1] (an overlap "
            f"threshold T). Got {bad[0]} instead."
        )
    return tuple(out)
