"""Tests of cxreval.bootstrap: the patient-level plan and the CI summaries."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cxreval.bootstrap import bca_ci, draw_plan, percentile_ci, summarize_distribution
from cxreval.exceptions import InvalidParameterError, SchemaError


def test_plan_counts_and_patient_clusters():
    pids = ["a", "a", "b", "c", "c", "c"]
    plan = draw_plan(pids, n_resamples=200, rng=0)
    assert plan.patients == ("a", "b", "c")
    assert plan.counts.shape == (200, 3)
    assert (plan.counts.sum(axis=1) == 3).all()
    w = plan.study_weights()
    # studies of one patient always carry the same weight
    assert (w[:, 0] == w[:, 1]).all() and (w[:, 3] == w[:, 5]).all()
    idx = plan.study_indices(7)
    assert np.array_equal(np.bincount(idx, minlength=6), w[7])
    assert not plan.counts.flags.writeable


def test_plan_is_deterministic_and_seed_sensitive():
    p1 = draw_plan(list("abcdefgh"), n_resamples=50, rng=3)
    p2 = draw_plan(list("abcdefgh"), n_resamples=50, rng=3)
    p3 = draw_plan(list("abcdefgh"), n_resamples=50, rng=4)
    assert np.array_equal(p1.counts, p2.counts)
    assert not np.array_equal(p1.counts, p3.counts)


def test_plan_marginals_are_multinomial():
    plan = draw_plan([str(i) for i in range(10)], n_resamples=4000, rng=1)
    # each patient's count ~ Binomial(10, 1/10): mean 1, variance 0.9
    assert abs(plan.counts.mean() - 1.0) < 0.02
    assert abs(plan.counts.var() - 0.9) < 0.05


def test_plan_errors():
    with pytest.raises(SchemaError, match="study 's2' has no patient id"):
        draw_plan(["p1", None, "p3"], study_ids=["s1", "s2", "s3"])
    with pytest.raises(SchemaError, match="position 1 has no patient id"):
        draw_plan(["p1", ""])
    with pytest.raises(
        InvalidParameterError, match="'n_resamples' parameter of draw_plan must be an int >= 1"
    ):
        draw_plan(["p1"], n_resamples=0)
    with pytest.raises(InvalidParameterError, match="'rng' parameter"):
        draw_plan(["p1"], rng="seed")


def test_percentile_ci_matches_numpy_and_counts_undefined():
    rng = np.random.default_rng(0)
    d = rng.normal(size=999)
    d[[3, 10]] = np.nan
    res = percentile_ci(d, estimate=0.1, confidence_level=0.9)
    ok = d[np.isfinite(d)]
    assert res.n_undefined == 2
    assert res.confidence_interval.low == pytest.approx(np.percentile(ok, 5), abs=1e-15)
    assert res.confidence_interval.high == pytest.approx(np.percentile(ok, 95), abs=1e-15)
    assert res.standard_error == pytest.approx(ok.std(ddof=1))
    assert res.to_dict()["n_undefined"] == 2
    with pytest.raises(ValueError):
        res.bootstrap_distribution[0] = 1.0


def test_summarize_distribution_vectorised_matches_scalar():
    rng = np.random.default_rng(2)
    d = rng.random((3, 4, 100))
    d[1, 2, :5] = np.nan
    d[2, 0, :] = np.nan
    s = summarize_distribution(d)
    assert s["n_undefined"][1, 2] == 5 and s["n_undefined"][2, 0] == 100
    assert np.isnan(s["mean"][2, 0])
    one = percentile_ci(d[1, 2], estimate=0.0)
    assert s["ci_low"][1, 2] == one.confidence_interval.low
    assert s["sd"][0, 1] == pytest.approx(d[0, 1].std(ddof=1))


def test_bca_matches_scipy_for_the_mean():
    rng = np.random.default_rng(5)
    x = rng.exponential(size=40)
    plan = draw_plan([str(i) for i in range(40)], n_resamples=2000, rng=0)
    dist = (plan.counts * x[None, :]).sum(axis=1) / 40
    jk = (x.sum() - x) / 39
    res = bca_ci(dist, estimate=x.mean(), jackknife=jk, confidence_level=0.95)
    # scipy's BCa on the same resamples: same formula, so the same interval
    ref = stats.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(0))
    assert res.method == "BCa"
    assert res.confidence_interval.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert res.confidence_interval.high == pytest.approx(ref.confidence_interval.high, abs=0.05)
    # BCa shifts the interval right of the percentile one for a right-skewed statistic
    pct = percentile_ci(dist, estimate=x.mean())
    assert res.confidence_interval.high > pct.confidence_interval.high
