"""Boxes: exact and float IoU / IoBB, exact decisions; hypothesis properties against Fraction."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.localization import iobb, iou
from cxreval.localization._boxes import as_threshold, check_boxes, contains, exceeds, iobb_exact, iou_exact
from cxreval.localization._protocol import correct_matrix

coord = st.integers(-50, 300)


@st.composite
def box(draw):
    x0, y0 = draw(coord), draw(coord)
    return (x0, y0, x0 + draw(st.integers(1, 200)), y0 + draw(st.integers(1, 200)))


TS = st.sampled_from(["0.1", "0.25", "0.5", "0.75", "0.9", "1/3", "0.2"])


@settings(max_examples=300, deadline=None)
@given(box(), box())
def test_iobb_ge_iou_and_identities(p, g):
    u, b = iou_exact(p, g), iobb_exact(p, g)
    assert b >= u
    if contains(np.array(p), np.array(g)):
        assert b == u == Fraction((g[2] - g[0]) * (g[3] - g[1]), (p[2] - p[0]) * (p[3] - p[1]))
    if contains(np.array(g), np.array(p)):
        assert b == 1
    assert float(iou(p, g)) == pytest.approx(float(u), abs=1e-15)
    assert float(iobb(p, g)) == pytest.approx(float(b), abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(box(), box(), TS, st.booleans())
def test_float_and_exact_decisions_agree(p, g, t, strict):
    T = Fraction(t)

    def inter(p, g):  # the reference script's formulas
        return max(0, min(p[2], g[2]) - max(p[0], g[0])) * max(0, min(p[3], g[3]) - max(p[1], g[1]))

    def area(b):
        return (b[2] - b[0]) * (b[3] - b[1])

    def r_iou(p, g):
        return Fraction(inter(p, g), area(p) + area(g) - inter(p, g))

    def r_iobb(p, g):
        return Fraction(inter(p, g), area(p))

    for measure, f in (("iou", r_iou), ("iobb", r_iobb)):
        want = f(p, g) > T if strict else f(p, g) >= T
        assert bool(exceeds(p, g, t, measure=measure, strict=strict)) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(box(), box()), min_size=1, max_size=20), TS)
def test_or_rule_equals_iobb_rule_vectorised(pairs, t):
    P = np.array([a for a, _ in pairs])
    G = np.array([b for _, b in pairs])
    assert (correct_matrix(P, G, t, rule="IoU or IoBB") == correct_matrix(P, G, t, rule="IoBB")).all()


def test_exact_boundary_cases():
    g = (400, 400, 500, 500)
    assert iobb_exact((350, 350, 550, 550), g) == Fraction(1, 4)
    assert not exceeds((350, 350, 550, 550), g, 0.25, measure="iobb")
    assert exceeds((350, 350, 550, 550), g, 0.25, measure="iobb", strict=False)
    assert iou_exact((0, 0, 1024, 1024), g) == Fraction(625, 65536)
    # float boxes: 0.1 + 0.2 style coordinates decided exactly
    p = np.array([0.0, 0.0, 0.1 + 0.2, 1.0])
    q = np.array([0.0, 0.0, 0.3, 1.0])
    assert bool(exceeds(p, q, 1, measure="iou", strict=False)) == (iou_exact(p, q) >= 1)


def test_bad_input_messages():
    with pytest.raises(SchemaError, match=r"non-positive width or height"):
        check_boxes([[10, 10, 10, 20]])
    with pytest.raises(SchemaError, match=r"outside the 1024 x 1024 image"):
        check_boxes([[0, 0, 1100, 20]], image_shape=(1024, 1024))
    with pytest.raises(SchemaError, match=r"shape \(\.\.\., 4\)"):
        check_boxes([1, 2, 3])
    with pytest.raises(InvalidParameterError, match="threshold must be a finite number"):
        as_threshold(float("nan"))
    assert as_threshold(0.1) == Fraction(1, 10)
