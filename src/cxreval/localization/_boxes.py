"""Half-open pixel boxes: area, intersection, IoU and IoBB, exact and vectorised.

A box is ``(x_min, y_min, x_max, y_max)`` in pixels, half-open: columns ``x_min .. x_max - 1`` and rows
``y_min .. y_max - 1``, so its area is ``(x_max - x_min) * (y_max - y_min)`` with no ``+ 1``. The ChestX-ray14
article's ``(r0, c0, r1, c1)`` is the same box with the axes swapped; every measure here is symmetric in the two
axes, so either order gives the same numbers as long as both boxes use the same one.

Two overlap measures of a detected box ``p`` against a reference box ``g`` (Wang et al., 2017):

* ``IoU(p, g) = |p & g| / |p | g|``;
* ``IoBB(p, g) = |p & g| / |p|``, the intersection over the *detected* box.

Because ``|p| <= |p | g|``, IoBB >= IoU always; for ``p`` containing ``g`` both equal ``|g| / |p|``, and
for ``p`` inside ``g`` IoBB is 1 whatever the size of ``p``.

The float functions are vectorised and broadcast like NumPy. Threshold decisions (``> T`` or ``>= T``)
are made *exactly* by :func:`exceeds`: the float ratio decides wherever it is further than ``1e-9``
(relative) from ``T``, and the remaining near-ties are recomputed with :class:`fractions.Fraction` from
the coordinates (every float is a rational), so ``IoBB = 1/4`` never passes ``> 0.25``. A threshold
given as a float is read through its decimal ``str`` (``0.1`` means ``1/10``).

Examples
--------
>>> import numpy as np
>>> g = np.array([400, 400, 500, 500])
>>> p = np.array([350, 350, 550, 550])          # twice as large on each axis, centred
>>> float(iou(p, g)), float(iobb(p, g))
(0.25, 0.25)
>>> bool(exceeds(p, g, 0.25, measure="iobb")), bool(exceeds(p, g, 0.25, measure="iobb", strict=False))
(False, True)
>>> iobb_exact((445, 445, 455, 455), (400, 400, 500, 500))
Fraction(1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from numbers import Rational
from typing import TypeAlias, Union

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice, float_array
from ..exceptions import InvalidParameterError, SchemaError
from ..schema._columns import first_true

__all__ = [
    "MEASURES",
    "as_threshold",
    "check_boxes",
    "box_area",
    "intersection_area",
    "iou",
    "iobb",
    "area_exact",
    "intersection_exact",
    "iou_exact",
    "iobb_exact",
    "exceeds",
    "contains",
]

MEASURES: tuple[str, ...] = ("iou", "iobb")
ThresholdLike: TypeAlias = Union[float, np.floating, Fraction, str]
"""A box-overlap threshold ``T`` as :func:`as_threshold` reads it: a number, a Fraction or a decimal string."""
BoxLike: TypeAlias = Union[Sequence[Union[float, Fraction]], np.ndarray]
"""One box ``(x_min, y_min, x_max, y_max)``: four numbers (floats, ints or Fractions)."""
_REL_TOL = 1e-9


def as_threshold(value: ThresholdLike, *, name: str = "T") -> Fraction:
    """Return a threshold as an exact :class:`~fractions.Fraction`.

    Floats are read through their shortest decimal representation (``0.1`` -> ``1/10``), strings
    as decimals or fractions (``"0.25"``, ``"1/4"``); ``Fraction`` and integers are taken as they are.
    """
    if isinstance(value, bool):
        raise InvalidParameterError(f"The '{name}' threshold must be a number. Got {value!r} instead.")
    try:
        if isinstance(value, Rational):
            return Fraction(value)
        if isinstance(value, (float, np.floating)):
            if not np.isfinite(value):
                raise ValueError
            return Fraction(str(float(value)))
        if isinstance(value, str):
            return Fraction(value.strip())
    except (ValueError, ZeroDivisionError):
        pass
    raise InvalidParameterError(
        f"The '{name}' threshold must be a finite number, Fraction or decimal string. Got {value!r} instead."
    )


def check_boxes(
    boxes: ArrayLike, *, name: str = "boxes", image_shape: tuple[int, int] | None = None, where: str = ""
) -> np.ndarray:
    """Validate boxes and return them as a float array of shape ``(..., 4)``.

    Parameters
    ----------
    boxes : array-like of shape (..., 4)
        ``(x_min, y_min, x_max, y_max)``, half-open, in pixels.
    name : str
        Name used in error messages.
    image_shape : (height, width), optional
        When given, every box must lie inside ``[0, width] x [0, height]``.
    where : str
        Extra location text for error messages (file, row).

    Raises
    ------
    SchemaError
        If the boxes are not finite, not of shape ``(..., 4)``, have non-positive width or height, or lie
        outside the image.
    """
    loc = f" in {where}" if where else ""
    b = float_array(boxes, SchemaError(f"'{name}'{loc} must be numeric boxes (x_min, y_min, x_max, y_max)."))
    if b.ndim == 0 or b.shape[-1] != 4:
        raise SchemaError(
            f"'{name}'{loc} must have shape (..., 4) as (x_min, y_min, x_max, y_max); got shape {b.shape}."
        )
    flat = b.reshape(-1, 4)
    bad = ~np.isfinite(flat).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(f"'{name}'{loc}: box {i} {flat[i].tolist()} has a non-finite coordinate.")
    bad = (flat[:, 2] <= flat[:, 0]) | (flat[:, 3] <= flat[:, 1])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(
            f"'{name}'{loc}: box {i} {flat[i].tolist()} has non-positive width or height "
            f"(expected x_max > x_min and y_max > y_min; {int(bad.sum())} such box(es))."
        )
    if image_shape is not None:
        h, w = image_shape
        bad = (flat[:, 0] < 0) | (flat[:, 1] < 0) | (flat[:, 2] > w) | (flat[:, 3] > h)
        if (row := first_true(bad)) is not None:
            raise SchemaError(
                f"'{name}'{loc}: box {row} {flat[row].tolist()} lies outside the {h} x {w} image "
                f"(expected 0 <= x_min < x_max <= {w} and 0 <= y_min < y_max <= {h}; "
                f"{int(bad.sum())} such box(es))."
            )
    return b


def box_area(boxes: ArrayLike) -> np.ndarray:
    """Area ``max(0, x_max - x_min) * max(0, y_max - y_min)`` of boxes of shape ``(..., 4)``."""
    b = np.asarray(boxes, dtype=float)
    return np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)


def intersection_area(boxes_pred: ArrayLike, boxes_true: ArrayLike) -> np.ndarray:
    """Area of the intersection of two broadcastable box arrays of shape ``(..., 4)``."""
    p = np.asarray(boxes_pred, dtype=float)
    g = np.asarray(boxes_true, dtype=float)
    w = np.minimum(p[..., 2], g[..., 2]) - np.maximum(p[..., 0], g[..., 0])
    h = np.minimum(p[..., 3], g[..., 3]) - np.maximum(p[..., 1], g[..., 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def _num_den(p: np.ndarray, g: np.ndarray, measure: str) -> tuple[np.ndarray, np.ndarray]:
    inter = intersection_area(p, g)
    ap = box_area(p)
    if measure == "iobb":
        return inter, np.broadcast_to(ap, inter.shape)
    return inter, ap + box_area(g) - inter


def iou(boxes_pred: ArrayLike, boxes_true: ArrayLike) -> np.ndarray:
    """Intersection over union (float), broadcast over ``(..., 4)`` box arrays."""
    n, d = _num_den(np.asarray(boxes_pred, float), np.asarray(boxes_true, float), "iou")
    return n / d


def iobb(boxes_pred: ArrayLike, boxes_true: ArrayLike) -> np.ndarray:
    """Intersection over the detected box's area (float), broadcast over ``(..., 4)`` box arrays."""
    n, d = _num_den(np.asarray(boxes_pred, float), np.asarray(boxes_true, float), "iobb")
    return n / d


def _frac_box(b: BoxLike) -> tuple[Fraction, ...]:
    return tuple(Fraction(float(v)) if not isinstance(v, Rational) else Fraction(v) for v in b)


def area_exact(box: BoxLike) -> Fraction:
    """Exact area of one box (coordinates read as exact rationals)."""
    b = _frac_box(box)
    return max(Fraction(0), b[2] - b[0]) * max(Fraction(0), b[3] - b[1])


def intersection_exact(box_pred: BoxLike, box_true: BoxLike) -> Fraction:
    """Exact intersection area of two boxes."""
    p, g = _frac_box(box_pred), _frac_box(box_true)
    return area_exact((max(p[0], g[0]), max(p[1], g[1]), min(p[2], g[2]), min(p[3], g[3])))


def iou_exact(box_pred: BoxLike, box_true: BoxLike) -> Fraction:
    """Exact IoU of two boxes as a :class:`~fractions.Fraction`."""
    i = intersection_exact(box_pred, box_true)
    return i / (area_exact(box_pred) + area_exact(box_true) - i)


def iobb_exact(box_pred: BoxLike, box_true: BoxLike) -> Fraction:
    """Exact IoBB (intersection over the detected box) as a :class:`~fractions.Fraction`."""
    return intersection_exact(box_pred, box_true) / area_exact(box_pred)


def exceeds(
    boxes_pred: ArrayLike,
    boxes_true: ArrayLike,
    threshold: ThresholdLike,
    *,
    measure: str = "iobb",
    strict: bool = True,
) -> np.ndarray:
    """Exact decision ``measure(p, g) > T`` (or ``>= T``), vectorised.

    Parameters
    ----------
    boxes_pred, boxes_true : array-like of shape (..., 4)
        Broadcastable detected and reference boxes with positive area.
    threshold : float, str or Fraction
        ``T``; floats are read as their decimal (``0.1`` is ``1/10``).
    measure : {'iou', 'iobb'}, default='iobb'
    strict : bool, default=True
        ``>`` when true, ``>=`` otherwise.

    Returns
    -------
    decision : ndarray of bool
        The broadcast shape of the two inputs less the last axis.

    Notes
    -----
    The float ratio decides wherever ``|ratio - T| > 1e-9 * max(T, 1e-300)``; its error is a few ulp,
    so those decisions are exact. The other pairs are recomputed with :class:`~fractions.Fraction`.
    """
    check_choice(measure, MEASURES, name="measure", func="exceeds")
    t = as_threshold(threshold)
    p = np.asarray(boxes_pred, dtype=float)
    g = np.asarray(boxes_true, dtype=float)
    num, den = _num_den(p, g, measure)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    shape = r.shape
    r = np.atleast_1d(r)
    tf = float(t)
    out = (r > tf) if strict else (r >= tf)
    near = ~(np.abs(r - tf) > _REL_TOL * max(abs(tf), 1e-300))
    if near.any():
        pb, gb = (np.broadcast_to(a, shape + (4,)).reshape(r.shape + (4,)) for a in (p, g))
        exact = iou_exact if measure == "iou" else iobb_exact
        for idx in zip(*np.nonzero(near)):
            if box_area(pb[idx]) <= 0:
                raise SchemaError(
                    f"exceeds: detected box {pb[idx].tolist()} has zero area; "
                    "expected positive width and height."
                )
            v = exact(pb[idx], gb[idx])
            out[idx] = (v > t) if strict else (v >= t)
    return out.reshape(shape)


def contains(outer: ArrayLike, inner: ArrayLike) -> np.ndarray:
    """Whether each box of ``outer`` contains the matching box of ``inner`` (borders included)."""
    o = np.asarray(outer, dtype=float)
    i = np.asarray(inner, dtype=float)
    return (
        (o[..., 0] <= i[..., 0])
        & (o[..., 1] <= i[..., 1])
        & (o[..., 2] >= i[..., 2])
        & (o[..., 3] >= i[..., 3])
    )
