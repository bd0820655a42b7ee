"""The ChestX-ray14 article's reference pipeline (skimage resize + ndimage.label + find_objects, Fraction scoring): the oracle."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import ndimage
from skimage.transform import resize


def ref_area(b):
    return max(0, b[2] - b[0]) * max(0, b[3] - b[1])


def ref_inter(p, g):
    return ref_area((max(p[0], g[0]), max(p[1], g[1]), min(p[2], g[2]), min(p[3], g[3])))


def ref_iou(p, g):
    i = ref_inter(p, g)
    return Fraction(i, ref_area(p) + ref_area(g) - i)


def ref_iobb(p, g):
    return Fraction(ref_inter(p, g), ref_area(p))


def ref_boxes(hm, order, thr, conn=8, shape=(1024, 1024)):
    """The reference script's boxes_from, returning (x_min, y_min, x_max, y_max) in label order."""
    up = resize(hm, shape, order=order, mode="edge", anti_aliasing=False)
    if up.max() == up.min():
        return []
    norm = 255 * (up - up.min()) / (up.max() - up.min())
    st = np.ones((3, 3)) if conn == 8 else None
    lab, _ = ndimage.label(norm > thr, structure=st)
    return [(s[1].start, s[0].start, s[1].stop, s[0].stop) for s in ndimage.find_objects(lab)]


class _Ref:
    area = staticmethod(ref_area)
    inter = staticmethod(ref_inter)
    iou = staticmethod(ref_iou)
    iobb = staticmethod(ref_iobb)
    boxes = staticmethod(ref_boxes)


@pytest.fixture(scope="session")
def ref():
    return _Ref
