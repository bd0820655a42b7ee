"""Tests of cxreval.mrmc's binary readers against a model's ROC curve (reader_operating_points).

References: sklearn's confusion matrix and roc_curve; hand-computed curves; a naive per-replicate recomputation on
the explicit resampled indices of the same plan; the closed forms of a binormal model (coverage); the CheXpert test
set's three benchmark radiologists (../shared/data), cross-checked by hand.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.metrics import confusion_matrix, roc_curve

from cxreval.bootstrap import draw_plan
from cxreval.exceptions import InvalidParameterError, SchemaError, UndefinedMetricWarning
from cxreval.mrmc._operating_points import OperatingPointsResult, reader_operating_points
from cxreval.mrmc._operating_points_inputs import PANEL

# tiny hand-made studies leave a reader without positives in some replicates (tested on its own below)
pytestmark = pytest.mark.filterwarnings("ignore::cxreval.exceptions.UndefinedMetricWarning")

# --- helpers -----------------------------------------------------------------------------------------------------


def _decisions(truth: np.ndarray, fp: int, tp: int) -> np.ndarray:
    """A reader's calls with ``tp`` true positives and ``fp`` false positives on ``truth``."""
    d = np.zeros(len(truth))
    d[np.flatnonzero(truth == 1)[:tp]] = 1
    d[np.flatnonzero(truth == 0)[:fp]] = 1
    return d


def _naive(decision: np.ndarray, scores: np.ndarray, truth: np.ndarray, matching: str) -> dict[str, float]:
    """One reader against the model, straight from sklearn's roc_curve and the definitions (no vectorisation)."""
    read = ~np.isnan(decision)
    d, s, y = decision[read], scores[read], truth[read]
    tn, fp, fn, tp = confusion_matrix(y, d, labels=[0, 1]).ravel()
    se, sp = tp / (tp + fn), tn / (tn + fp)
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    x = 1 - sp
    eps = 1e-12
    if matching == "step":
        model_se = tpr[fpr <= x + eps].max()
        model_sp = 1 - fpr[tpr >= se - eps].min()
    else:
        model_se = _polyline_max(fpr, tpr, x)
        model_sp = 1 - _polyline_min(tpr, fpr, se)
    return {"se": se, "sp": sp, "d_se": model_se - se, "d_sp": model_sp - sp, "below": model_se - se > 1e-9}


def _polyline_max(xs: np.ndarray, ys: np.ndarray, x: float) -> float:
    """The highest point of the polyline through (xs, ys) at abscissa x."""
    vals = list(ys[np.abs(xs - x) < 1e-12])
    for i in range(len(xs) - 1):
        if xs[i] < x < xs[i + 1]:
            vals.append(ys[i] + (x - xs[i]) * (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]))
    return max(vals)


def _polyline_min(ys: np.ndarray, xs: np.ndarray, y: float) -> float:
    """The lowest abscissa of the polyline through (xs, ys) at ordinate y."""
    vals = list(xs[np.abs(ys - y) < 1e-12])
    for i in range(len(ys) - 1):
        if ys[i] < y < ys[i + 1]:
            vals.append(xs[i] + (y - ys[i]) * (xs[i + 1] - xs[i]) / (ys[i + 1] - ys[i]))
    return min(vals)


def _study(
    n: int,
    rng: np.random.Generator,
    mu: float = 1.5,
    mu_r: tuple[float, ...] = (1.2, 1.0, 1.4),
    cut: tuple[float, ...] = (0.8, 0.5, 1.1),
    rho: float = 0.5,
):
    """A binormal study: model score ``mu * y + Z``; reader ``r`` calls positive when
    ``mu_r * y + rho * Z + sqrt(1 - rho^2) * E > cut_r`` (its latent correlated with the model's)."""
    y = (rng.random(n) < 0.5).astype(float)
    z = rng.normal(size=n)
    s = mu * y + z
    d = np.array(
        [
            (m * y + rho * z + np.sqrt(1 - rho**2) * rng.normal(size=n) > c).astype(float)
            for m, c in zip(mu_r, cut)
        ]
    )
    return d, s, y


def _row(res: OperatingPointsResult, reader: str, metric: str) -> pd.Series:
    c = res.comparisons
    return c[(c.reader == reader) & (c.metric == metric)].iloc[0]


# --- point estimates against sklearn and by hand -------------------------------------------------------------------


def test_sensitivity_specificity_equal_sklearn_confusion_matrix():
    rng = np.random.default_rng(3)
    d, s, y = _study(300, rng)
    d[1, rng.choice(300, 40, replace=False)] = np.nan  # reader 2 did not read 40 cases
    res = reader_operating_points(d, s, y, n_resamples=50, rng=0)
    op = res.operating_points.set_index(["reader", "metric"])
    for r in range(3):
        read = ~np.isnan(d[r])
        tn, fp, fn, tp = confusion_matrix(y[read], d[r, read]).ravel()
        name = f"reader_{r + 1}"
        assert op.loc[(name, "sensitivity"), "estimate"] == pytest.approx(tp / (tp + fn), abs=1e-15)
        assert op.loc[(name, "specificity"), "estimate"] == pytest.approx(tn / (tn + fp), abs=1e-15)
        assert op.loc[(name, "sensitivity"), "n_cases"] == tp + fn
        assert op.loc[(name, "specificity"), "n_cases"] == tn + fp
    se = np.mean([op.loc[(f"reader_{r + 1}", "sensitivity"), "estimate"] for r in range(3)])
    assert op.loc[(PANEL, "sensitivity"), "estimate"] == pytest.approx(se, abs=1e-15)


def test_roc_curve_equals_sklearn_with_ties():
    rng = np.random.default_rng(4)
    y = (rng.random(200) < 0.4).astype(float)
    s = np.round(rng.normal(size=200) + y, 1)  # many ties, mixing positives and negatives
    res = reader_operating_points(_decisions(y, 10, 30), s, y, n_resamples=20, rng=0)
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    roc = res.roc_curve
    np.testing.assert_allclose(roc.fpr, fpr, atol=1e-15)
    np.testing.assert_allclose(roc.tpr, tpr, atol=1e-15)
    assert np.isinf(roc.threshold.iloc[0]) and np.isinf(thr[0])
    np.testing.assert_array_equal(roc.threshold.iloc[1:], thr[1:])


# the step curve of truth/scores: vertices in counts (fp, tp) (0,0) (0,1) (0,2) (1,2) (1,3) (2,3) (3,3), 3 + 3 cases
STEP_TRUTH = np.array([1, 1, 1, 0, 0, 0], dtype=float)
STEP_SCORES = np.array([0.9, 0.8, 0.3, 0.7, 0.2, 0.1])


@pytest.mark.parametrize(
    ("fp", "tp", "below", "d_se", "d_sp"),
    [
        (0, 2, False, 0, 0),  # on a vertex (the top of the riser at fpr 0): on the curve
        (0, 1, True, 1, 0),  # on the riser at fpr 0 (the model reaches tpr 2/3 at specificity 1): below
        (1, 2, True, 1, 1),  # on the vertical riser at fpr 1/3 (the model reaches tpr 1 there): below
        (0, 3, False, -1, -1),  # above the curve
        (2, 2, True, 1, 2),  # strictly below
        (
            2,
            3,
            False,
            0,
            1,
        ),  # on the horizontal tread at tpr 1 (the model reaches it at fpr 1/3): on the curve
    ],
)
def test_below_the_curve_on_hand_made_points(fp, tp, below, d_se, d_sp):
    res = reader_operating_points(
        _decisions(STEP_TRUTH, fp, tp), STEP_SCORES, STEP_TRUTH, n_resamples=20, rng=0
    )
    row = res.readers_vs_curve.iloc[0]
    assert bool(row.below_curve) is below and res.n_below == int(below)
    assert row.curve_gap == pytest.approx(d_se / 3, abs=1e-15)
    assert _row(res, "reader_1", "sensitivity_at_reader_specificity").difference == pytest.approx(
        d_se / 3, abs=1e-15
    )
    assert _row(res, "reader_1", "specificity_at_reader_sensitivity").difference == pytest.approx(
        d_sp / 3, abs=1e-15
    )
    assert res.below_count.loc[res.below_count.observed, "n_readers_below"].item() == int(below)


# tied scores: the 0.5 group holds 2 positives and 2 negatives, a diagonal from (0, 1) to (2, 3) in counts
TIED_TRUTH = np.array([1, 1, 0, 1, 0, 0], dtype=float)
TIED_SCORES = np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.1])


@pytest.mark.parametrize(
    ("matching", "fp", "tp", "below", "d_se", "d_sp"),
    [
        (
            "step",
            1,
            2,
            False,
            -1,
            -1,
        ),  # above the step curve (the model has no threshold at fpr 1/3 reaching tpr 2/3)
        ("interpolated", 1, 2, False, 0, 0),  # on the diagonal
        ("step", 1, 1, False, 0, 1),  # on the step curve's tread
        (
            "interpolated",
            1,
            1,
            True,
            1,
            1,
        ),  # below the diagonal; at Se 1/3 the model's vertex (0, 1) has fpr 0
    ],
)
def test_matching_conventions_on_a_diagonal_segment(matching, fp, tp, below, d_se, d_sp):
    res = reader_operating_points(
        _decisions(TIED_TRUTH, fp, tp), TIED_SCORES, TIED_TRUTH, matching=matching, n_resamples=20, rng=0
    )
    assert bool(res.readers_vs_curve.below_curve.iloc[0]) is below
    naive = _naive(_decisions(TIED_TRUTH, fp, tp), TIED_SCORES, TIED_TRUTH, matching)
    got_se = _row(res, "reader_1", "sensitivity_at_reader_specificity").difference
    got_sp = _row(res, "reader_1", "specificity_at_reader_sensitivity").difference
    assert got_se == pytest.approx(d_se / 3, abs=1e-15) == pytest.approx(naive["d_se"], abs=1e-12)
    assert got_sp == pytest.approx(d_sp / 3, abs=1e-15) == pytest.approx(naive["d_sp"], abs=1e-12)


def test_delta_at_matched_operating_point_by_hand():
    # 4 positives, 4 negatives; model vertices in counts (fp, tp): (0,0) (0,1) (1,1) (1,2) (1,3) (2,3) (3,3) (3,4) (4,4)
    truth = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    scores = np.array([8, 7, 6, 5, 4, 3, 2, 1], dtype=float)
    # reader: Se 2/4, Sp 2/4 (fp 2, tp 2). Model at Sp >= 1/2 (fp <= 2): highest tp is 3 -> Se 3/4, ΔSe = +1/4.
    # Model at Se >= 1/2 (tp >= 2): lowest fp is 1 -> Sp 3/4, ΔSp = +1/4.
    d = np.array([1, 1, 1, 0, 1, 0, 0, 0], dtype=float)
    res = reader_operating_points(d, scores, truth, n_resamples=20, rng=0)
    se_row = _row(res, "reader_1", "sensitivity_at_reader_specificity")
    assert (se_row.model_estimate, se_row.reader_estimate, se_row.difference) == (0.75, 0.5, 0.25)
    sp_row = _row(res, "reader_1", "specificity_at_reader_sensitivity")
    assert (sp_row.model_estimate, sp_row.reader_estimate, sp_row.difference) == (0.75, 0.5, 0.25)
    assert res.n_below == 1


@pytest.mark.parametrize("matching", ["step", "interpolated"])
def test_point_estimates_equal_the_naive_definitions(matching):
    rng = np.random.default_rng(11)
    d, s, y = _study(250, rng)
    s = np.round(s, 1)  # ties, so the two conventions differ
    d[2, :30] = np.nan
    res = reader_operating_points(d, s, y, matching=matching, n_resamples=20, rng=0)
    for r in range(3):
        ref = _naive(d[r], s, y, matching)
        name = f"reader_{r + 1}"
        assert _row(res, name, "sensitivity_at_reader_specificity").difference == pytest.approx(
            ref["d_se"], abs=1e-12
        )
        assert _row(res, name, "specificity_at_reader_sensitivity").difference == pytest.approx(
            ref["d_sp"], abs=1e-12
        )
        assert bool(res.readers_vs_curve.set_index("reader").loc[name, "below_curve"]) is bool(ref["below"])


def test_panel_is_the_mean_operating_point_against_the_full_curve():
    rng = np.random.default_rng(5)
    d, s, y = _study(200, rng)
    res = reader_operating_points(d, s, y, n_resamples=20, rng=0)
    op = res.operating_points.set_index(["reader", "metric"]).estimate
    se, sp = op.loc[(PANEL, "sensitivity")], op.loc[(PANEL, "specificity")]
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    model_se = tpr[fpr <= 1 - sp + 1e-12].max()
    assert _row(res, PANEL, "sensitivity_at_reader_specificity").difference == pytest.approx(
        model_se - se, abs=1e-12
    )
    assert res.readers_vs_curve.set_index("reader").loc[PANEL, "below_curve"] == (model_se > se)


def test_untied_scores_give_the_same_estimates_under_both_conventions():
    rng = np.random.default_rng(6)
    d, s, y = _study(200, rng)
    a = reader_operating_points(d, s, y, n_resamples=100, rng=1, matching="step")
    b = reader_operating_points(d, s, y, n_resamples=100, rng=1, matching="interpolated")
    pd.testing.assert_series_equal(a.comparisons.difference, b.comparisons.difference, atol=1e-12, rtol=0)
    np.testing.assert_allclose(a.delta_sensitivity[:, :3], b.delta_sensitivity[:, :3], atol=1e-12)


# --- the bootstrap -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("matching", ["step", "interpolated"])
def test_replicates_equal_a_naive_recomputation_on_the_resampled_cases(matching):
    rng = np.random.default_rng(7)
    d, s, y = _study(120, rng)
    s = np.round(s, 1)
    d[0, :15] = np.nan
    patients = np.repeat(np.arange(60), 2)  # two cases per patient, resampled together
    plan = draw_plan(patients, n_resamples=30, rng=2)
    res = reader_operating_points(d, s, y, plan=plan, matching=matching)
    for b in range(plan.n_resamples):
        idx = plan.study_indices(b)
        for r in range(3):
            read = ~np.isnan(d[r, idx])
            if len(np.unique(y[idx][read])) < 2:
                assert np.isnan(res.delta_sensitivity[b, r])
                continue
            ref = _naive(d[r, idx], s[idx], y[idx], matching)
            assert res.delta_sensitivity[b, r] == pytest.approx(ref["d_se"], abs=1e-12)
            assert res.delta_specificity[b, r] == pytest.approx(ref["d_sp"], abs=1e-12)


def test_same_rng_same_result_and_plan_equals_patients():
    rng = np.random.default_rng(8)
    d, s, y = _study(150, rng)
    pts = np.arange(150) // 3
    a = reader_operating_points(d, s, y, patients=pts, n_resamples=200, rng=42)
    b = reader_operating_points(d, s, y, patients=pts, n_resamples=200, rng=42)
    c = reader_operating_points(d, s, y, plan=draw_plan(pts, n_resamples=200, rng=42))
    other = reader_operating_points(d, s, y, patients=pts, n_resamples=200, rng=43)
    for k, t in a.tables().items():
        pd.testing.assert_frame_equal(t, b.tables()[k])
        pd.testing.assert_frame_equal(t, c.tables()[k])
    assert not np.array_equal(a.delta_sensitivity, other.delta_sensitivity)
    assert a.seed == 42 and a.n_patients == 50 and a.n_cases == 150 and a.n_resamples == 200


def test_pvalue_holm_verdict_and_below_count_distribution():
    rng = np.random.default_rng(9)
    d, s, y = _study(300, rng)
    res = reader_operating_points(d, s, y, n_resamples=400, rng=0, margin=0.05)
    c = res.comparisons
    for _, row in c.iterrows():
        dist = (res.delta_sensitivity if row.metric.startswith("sensitivity") else res.delta_specificity)[
            :, list(res.readers).index(row.reader) if row.kind == "reader" else -1
        ]
        assert row.pvalue == pytest.approx(np.mean(dist <= -0.05))
        lo = np.percentile(dist, 2.5)
        assert row.ci_low == pytest.approx(lo) and row.non_inferior == (lo > -0.05)
    for metric in c.metric.unique():
        p = c[(c.metric == metric) & (c.kind == "reader")].pvalue.to_numpy()
        order = np.argsort(p)
        holm = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * p[order]))
        got = c[(c.metric == metric) & (c.kind == "reader")].pvalue_holm.to_numpy()[order]
        np.testing.assert_allclose(got, holm)
        assert c[(c.metric == metric) & (c.kind == PANEL)].pvalue_holm.isna().all()
    bc = res.below_count
    assert list(bc.n_readers_below) == [0, 1, 2, 3] and bc.share.sum() == pytest.approx(1)
    for k in range(4):
        assert bc.share[k] == pytest.approx(np.mean(res.n_below_distribution == k))
    below = np.stack([res.delta_sensitivity[:, r] > 0 for r in range(3)], axis=1)
    np.testing.assert_array_equal(res.n_below_distribution, below.sum(axis=1))
    np.testing.assert_allclose(res.readers_vs_curve.share_below.iloc[:3], below.mean(axis=0))


def test_undefined_replicates_are_counted_and_warned():
    truth = np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=float)  # one positive case
    scores = np.linspace(1, 0, 8)
    with pytest.warns(UndefinedMetricWarning, match="no positive or no negative case"):
        res = reader_operating_points(_decisions(truth, 1, 1), scores, truth, n_resamples=200, rng=0)
    n_undef = int(np.isnan(res.delta_sensitivity[:, 0]).sum())
    assert 0 < n_undef < 200
    assert _row(res, "reader_1", "sensitivity_at_reader_specificity").n_undefined == n_undef
    assert np.isnan(res.n_below_distribution).sum() == n_undef


@pytest.mark.slow
@pytest.mark.parametrize("matching", ["step", "interpolated"])
def test_intervals_cover_the_binormal_truth(matching):
    """200 studies of a binormal model: the 95% intervals of ΔSe and ΔSp cover their closed forms ~95% of the time."""
    mu, mu_r, cut = 1.5, (1.2,), (0.8,)
    se_r, sp_r = norm.sf(cut[0] - mu_r[0]), norm.cdf(cut[0])
    true_dse = (
        norm.cdf(mu - norm.ppf(sp_r)) - se_r
    )  # the model's Se at the reader's Sp, minus the reader's Se
    true_dsp = norm.cdf(mu - norm.ppf(se_r)) - sp_r
    rng = np.random.default_rng(2024)
    hits = np.zeros(2)
    n_studies = 200
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(n_studies):
            d, s, y = _study(300, rng, mu=mu, mu_r=mu_r, cut=cut)
            res = reader_operating_points(d, s, y, n_resamples=400, rng=rng, matching=matching)
            a = _row(res, "reader_1", "sensitivity_at_reader_specificity")
            b = _row(res, "reader_1", "specificity_at_reader_sensitivity")
            hits += [a.ci_low <= true_dse <= a.ci_high, b.ci_low <= true_dsp <= b.ci_high]
    coverage = hits / n_studies
    assert ((coverage >= 0.90) & (coverage <= 0.99)).all(), coverage


@pytest.mark.slow
def test_non_inferiority_keeps_its_level_at_the_margin():
    """A reader better than the model by exactly the margin (binormal closed form): the test declares the model
    non-inferior in about (1 - 0.95) / 2 = 2.5% of 200 studies."""
    mu, mu_r, cut = 1.0, 1.6, 0.8
    true_dse = norm.cdf(mu - norm.ppf(norm.cdf(cut))) - norm.sf(cut - mu_r)  # -0.209
    rng = np.random.default_rng(3)
    rejections = 0
    for _ in range(200):
        d, s, y = _study(300, rng, mu=mu, mu_r=(mu_r,), cut=(cut,))
        res = reader_operating_points(d, s, y, n_resamples=400, rng=rng, margin=-true_dse)
        row = _row(res, "reader_1", "sensitivity_at_reader_specificity")
        assert row.non_inferior == (row.ci_low > true_dse)
        rejections += bool(row.non_inferior)
    assert rejections / 200 <= 0.06, rejections


# --- bad input -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (
            {"decisions": [[0, 1, 2, 0]]},
            SchemaError,
            r"'decisions' must be 0, 1 or NaN .* reader 'reader_1' has 2.0 at case 2",
        ),
        ({"decisions": [["a", "b", "c", "d"]]}, SchemaError, "'decisions' parameter .* must be numeric"),
        (
            {"decisions": [[1, 1, np.nan, np.nan]]},
            InvalidParameterError,
            "reader 'reader_1' read 2 positive and 0 negative cases",
        ),
        (
            {"decisions": [[1, 0, 0]]},
            InvalidParameterError,
            "inconsistent numbers of cases: decisions has 3 columns",
        ),
        ({"decisions": np.zeros((1, 1, 4))}, InvalidParameterError, "must be a 2-D array"),
        ({"truth": [1, 1, 0, 0.5]}, SchemaError, r"'truth' must be 0 or 1; case 3 has 0.5"),
        ({"truth": [1, 1, 0, np.nan]}, SchemaError, r"'truth' must be 0 or 1; case 3 has nan"),
        ({"scores": [0.1, np.inf, 0.3, 0.4]}, SchemaError, "'scores' must be finite; case 1 has inf"),
        ({"margin": 0}, InvalidParameterError, r"'margin' parameter .* must be a float in \(0, 1\)\. Got 0"),
        (
            {"margin": 1.5},
            InvalidParameterError,
            r"'margin' parameter .* must be a float in \(0, 1\)\. Got 1.5",
        ),
        (
            {"matching": "linear"},
            InvalidParameterError,
            r"'matching' parameter .* must be one of \['step', 'interpolated'\]",
        ),
        ({"confidence_level": 95}, InvalidParameterError, "'confidence_level' parameter"),
        ({"n_resamples": 0}, InvalidParameterError, "'n_resamples' parameter"),
        (
            {"reader_names": ["a", "b"]},
            InvalidParameterError,
            "'reader_names' has 2 names but 'decisions' has 1 readers",
        ),
        ({"reader_names": ["panel"]}, InvalidParameterError, "the name 'panel'"),
        (
            {"reader_names": "a"},
            InvalidParameterError,
            "'reader_names' parameter .* must be a sequence of str",
        ),
        ({"reader_names": 3}, InvalidParameterError, "'reader_names' parameter .* must be a sequence of str"),
        (
            {"patients": [1, 2, 3]},
            InvalidParameterError,
            r"'patients' has shape \(3,\) but 'scores' has 4 cases",
        ),
        ({"plan": "plan"}, InvalidParameterError, "'plan' parameter .* must be a ResamplingPlan"),
        (
            {"plan": draw_plan([1, 2, 3], n_resamples=2, rng=0)},
            InvalidParameterError,
            "the plan covers 3 cases",
        ),
        (
            {"plan": draw_plan([1, 2, 3, 4], n_resamples=2, rng=0), "patients": [1, 2, 3, 4]},
            InvalidParameterError,
            "give 'patients' or 'plan', not both",
        ),
    ],
)
def test_bad_input_is_refused_by_name(kwargs, exc, match):
    data = {"decisions": [[1, 0, 0, 1]], "scores": [0.9, 0.2, 0.3, 0.8], "truth": [1, 1, 0, 0]}
    options = {"n_resamples": 10, "rng": 0}
    for k, v in kwargs.items():
        (data if k in data else options)[k] = v
    with pytest.raises(exc, match=match):
        reader_operating_points(data["decisions"], data["scores"], data["truth"], **options)


def test_duplicate_reader_names_are_refused():
    with pytest.raises(InvalidParameterError, match=r"duplicate names \['a'\]"):
        reader_operating_points(
            [[1, 0, 0, 1], [1, 1, 0, 0]],
            [0.9, 0.2, 0.3, 0.8],
            [1, 1, 0, 0],
            reader_names=["a", "a"],
            n_resamples=10,
            rng=0,
        )


def test_speed_three_readers_500_cases_2000_replicates():
    import time

    rng = np.random.default_rng(10)
    d, s, y = _study(500, rng)
    reader_operating_points(d, s, y, n_resamples=50, rng=0)  # warm-up
    t = time.perf_counter()
    reader_operating_points(d, s, y, n_resamples=2000, rng=0)
    assert time.perf_counter() - t < 2.0  # ~0.1 s on a quiet machine; generous for shared CI


# --- the CheXpert test set: the 3 benchmark radiologists against leaderboard models ------------------------------


@pytest.mark.shared_data
def test_chexpert_benchmark_radiologists_below_the_curve(shared_data, capsys):
    from cxreval.datasets import chexpert, load_dataset

    root = shared_data / "chexpert_test"
    labels = load_dataset("chexpert_test", root, sources=["consensus", "bc4", "bc6", "bc8"]).table
    preds = load_dataset("chexpert_test_predictions", root).table
    models = sorted(preds.model.unique())
    assert len(models) == 10
    readers = ["bc4", "bc6", "bc8"]
    counts = {}
    for finding in chexpert.COMPETITION_FINDINGS:
        lab = labels[labels.finding == finding].pivot(index="study_id", columns="source", values="state")
        patient = (
            labels[labels.finding == finding].drop_duplicates("study_id").set_index("study_id").patient_id
        )
        for model in models:
            p = preds[(preds.finding == finding) & (preds.model == model)].set_index("study_id").score
            ids = p.index.intersection(lab.index)
            truth = (lab.loc[ids, "consensus"].astype(int) == 2).astype(float).to_numpy()
            dec = np.array([(lab.loc[ids, r].astype(int) == 2).astype(float).to_numpy() for r in readers])
            res = reader_operating_points(
                dec,
                p.loc[ids].to_numpy(),
                truth,
                patients=patient.loc[ids].to_numpy(),
                reader_names=readers,
                n_resamples=200,
                rng=0,
            )
            counts[(finding, model)] = res.n_below
            assert len(ids) == 500 and res.n_patients == 500
            # by hand: a reader is below when some threshold has fpr <= the reader's and tpr > the reader's
            fpr, tpr, _ = roc_curve(truth, p.loc[ids], drop_intermediate=False)
            hand = 0
            for r in range(3):
                tn, fp, fn, tp = confusion_matrix(truth, dec[r]).ravel()
                hand += bool((tpr[fpr <= fp / (fp + tn) + 1e-12] > tp / (tp + fn) + 1e-12).any())
            assert res.n_below == hand
            assert res.below_count.share.sum() == pytest.approx(1)
            assert res.comparisons[["ci_low", "ci_high"]].notna().all().all()
    with capsys.disabled():
        print("\nCheXpert test set: benchmark radiologists (of 3) below the model's ROC curve")
        print(pd.Series(counts).unstack().T.to_string())
    # the leaderboard models are radiologist-level: on most findings at least 2 of the 3 lie below their curves
    assert sum(v >= 2 for v in counts.values()) >= len(counts) // 2
