"""The operating-point kernel: each rule's threshold and confusion counts equal scikit-learn's ``roc_curve`` and
``confusion_matrix`` on the same scores, and a replicate's patient counts give what the rule gives on the
resampled studies themselves."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, roc_curve

from cxreval.exceptions import CxrevalError
from cxreval.stats._operating_points import (
    OperatingPoint,
    confusion_counts,
    operating_threshold,
    parse_operating_point,
)

KINDS = ("threshold", "specificity", "sensitivity", "youden", "from")


def _sklearn_point(point: OperatingPoint, y: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray]:
    """The threshold scikit-learn's ROC curve gives the rule, and ``confusion_matrix`` there (tn, fp, fn, tp)."""
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    if point.kind == "threshold":
        t = point.value
    elif point.kind == "specificity":  # the most sensitive ROC point with specificity >= S
        t = thr[np.flatnonzero(1 - fpr >= point.value - 1e-12)[-1]]
    elif point.kind == "sensitivity":  # the most specific ROC point with sensitivity >= S
        t = thr[np.flatnonzero(tpr >= point.value - 1e-12)[0]]
    else:
        t = thr[np.argmax(tpr - fpr)]
    return float(t), confusion_matrix(y, s >= t, labels=[False, True]).ravel()


def _tables(seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(6, 80))
        y = rng.random(n) < rng.uniform(0.2, 0.7)
        if y.all() or not y.any():
            continue
        s = np.round(
            rng.normal(size=n) + y * rng.uniform(0, 2), int(rng.integers(0, 3))
        )  # ties at some roundings
        yield y, s


POINTS = [
    OperatingPoint("threshold", 0.3),
    OperatingPoint("specificity", 0.9),
    OperatingPoint("specificity", 0.5),
    OperatingPoint("sensitivity", 0.8),
    OperatingPoint("sensitivity", 0.95),
    OperatingPoint("youden", float("nan")),
]


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label())
def test_each_rule_equals_sklearn_roc_curve_and_confusion_matrix(point):
    for y, s in _tables(0):
        c = confusion_counts(point, y, s)
        t, (tn, fp, fn, tp) = _sklearn_point(point, y, s)
        assert (c.tn[0], c.fp[0], c.fn[0], c.tp[0]) == (tn, fp, fn, tp)
        if (
            point.kind == "specificity"
        ):  # the smallest threshold of that confusion matrix: just above a negative
            assert t >= c.threshold[0] > np.max(s[~y][s[~y] < t], initial=-np.inf)
        elif np.isfinite(t):
            assert c.threshold[0] == t
        else:  # no threshold beats calling every study negative: just above the highest score
            assert c.threshold[0] == np.nextafter(s.max(), np.inf)


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.label())
def test_a_replicate_is_the_rule_on_the_resampled_studies(point):
    """Patient counts ``ct`` weigh each study by its patient's draws: the rule chosen again on the explicit
    resample (every study repeated by its count) gives the same counts, and the same threshold wherever a study
    is called positive."""
    rng = np.random.default_rng(1)
    for y, s in _tables(2):
        pat = rng.integers(0, max(2, y.size // 2), y.size)
        ct = rng.multinomial(pat.max() + 1, np.ones(pat.max() + 1) / (pat.max() + 1), size=8)
        c = confusion_counts(point, y, s, pat, ct)
        for b in range(ct.shape[0]):
            idx = np.repeat(np.arange(y.size), ct[b][pat])
            one = confusion_counts(point, y[idx], s[idx])
            for k in ("tp", "fp", "tn", "fn"):
                np.testing.assert_equal(getattr(c, k)[b], getattr(one, k)[0])
            if one.tp[0] + one.fp[0] > 0:
                np.testing.assert_equal(c.threshold[b], one.threshold[0])


def test_undefined_rules_are_nan_never_a_number():
    y = np.array([True, True, True])
    s = np.array([0.1, 0.5, 0.9])
    assert np.isnan(operating_threshold(OperatingPoint("specificity", 0.9), y, s))
    assert np.isnan(confusion_counts(OperatingPoint("youden", np.nan), y, s).tp[0])
    assert confusion_counts(OperatingPoint("threshold", 0.5), y, s).tp[0] == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("spec=0.9", OperatingPoint("specificity", 0.9)),
        ("specificity = 0.8", OperatingPoint("specificity", 0.8)),
        ("sens=0.95", OperatingPoint("sensitivity", 0.95)),
        ("youden", OperatingPoint("youden", float("nan"))),
        ("threshold=0.5", OperatingPoint("threshold", 0.5)),
        (0.25, OperatingPoint("threshold", 0.25)),
        ("from=ops.csv", OperatingPoint("from", float("nan"), "ops.csv")),
    ],
)
def test_the_spellings_of_an_operating_point(text, expected):
    got = parse_operating_point(text, func="f", kinds=KINDS)
    assert (got.kind, got.source, got.label()) == (expected.kind, expected.source, expected.label())


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("spec=1.2", r"must be in \(0, 1\) for a specificity. Got 'spec=1.2'"),
        ("sens=0", r"must be in \(0, 1\) for a sensitivity"),
        ("spec=abc", "must be 'threshold=T', 'specificity=S'"),
        ("precision=0.9", "Got 'precision=0.9'"),
        ("youden=0.5", "Got 'youden=0.5'"),
        ("from=", "Got 'from='"),
        ("threshold=inf", "Got 'threshold=inf'"),
    ],
)
def test_a_bad_operating_point_is_refused_naming_it(text, match):
    with pytest.raises(CxrevalError, match=match):
        parse_operating_point(text, func="f", kinds=KINDS)


def test_subgroups_keep_their_two_forms():
    with pytest.raises(CxrevalError, match="must be 'threshold=T' or 'specificity=S'"):
        parse_operating_point("youden", func="evaluate_subgroups")


def test_a_rate_met_exactly_by_a_large_count_is_reached():
    """0.9 of 20,000 negatives is 18,000: reached by the threshold just above the 18,000th, whatever the rounding of
    0.9 x 20,000 (the tolerance is relative to the count)."""
    y = np.zeros(20_001, dtype=bool)
    y[-1] = True
    s = np.arange(20_001, dtype=float)
    c = confusion_counts(OperatingPoint("specificity", 0.9), y, s)
    assert (c.tn[0], c.fp[0]) == (18_000, 2_000) and c.threshold[0] == np.nextafter(17_999.0, np.inf)
    c = confusion_counts(OperatingPoint("sensitivity", 0.9), ~y, s)
    assert (c.tp[0], c.fn[0]) == (18_000, 2_000) and c.threshold[0] == 2_000.0


@pytest.mark.parametrize("cells", [1 << 21, 64, 1])
def test_every_rule_on_every_set_at_once_equals_one_call_per_set_and_rule(cells, monkeypatch):
    """The stacked kernel (sets of different sizes, ties, an empty set, patients shared across studies) gives the
    thresholds and counts of one call per set and rule exactly, whether the sets share one chunk, are grouped into
    several (``cells`` 64) or each set's replicates are split (``cells`` 1)."""
    from cxreval.stats import _operating_points as op

    rng = np.random.default_rng(4)
    n_pat = 40
    ct = np.vstack([np.ones((1, n_pat)), rng.multinomial(n_pat, np.full(n_pat, 1 / n_pat), size=30)])
    sets = [op.ScoredSet(np.zeros(0, bool), np.zeros(0), np.zeros(0, int))]
    for y, s in _tables(2):
        sets.append(op.ScoredSet(y, s, rng.integers(0, n_pat, y.size)))
    points = [*POINTS, OperatingPoint("threshold", -0.2)]
    want = [[confusion_counts(p, x.y, x.s, x.pat, ct) for p in points] for x in sets]
    monkeypatch.setattr(op, "_CELLS", cells)
    got = op.confusion_counts_sets(points, sets, ct)
    for w_set, g_set in zip(want, got):
        for w, g in zip(w_set, g_set):
            for k in ("threshold", "tp", "fp", "tn", "fn"):
                np.testing.assert_array_equal(getattr(g, k), getattr(w, k))
