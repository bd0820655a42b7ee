"""The patient bootstrap of the latent-class model: replicates equal one fit each, intervals."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.bootstrap import draw_plan
from cxreval.exceptions import InvalidParameterError
from cxreval.latent import bootstrap_latent_class, fit_latent_class, latent_auc_score


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.random(n) < 0.3
    y = np.where(t[:, None], rng.random((n, 3)) < [0.9, 0.8, 0.75], rng.random((n, 3)) > [0.85, 0.9, 0.8])
    return t, y.astype(float), rng.normal(size=n) + 1.2 * t, rng.integers(0, n // 2, size=n)


@pytest.mark.parametrize("score_model", ["spline", "bins"])
def test_each_replicate_is_the_fit_to_its_weights(score_model):
    t, y, s, pid = _data()
    plan = draw_plan(pid, n_resamples=4, rng=1)
    res = bootstrap_latent_class(y, s, plan, score_model=score_model, replicate_tol=1e-12)
    full = fit_latent_class(y, s, score_model=score_model)
    assert res.auc == pytest.approx(latent_auc_score(s, full.posterior), abs=1e-12)
    w = plan.study_weights().astype(float)
    for b in range(4):
        # the bins and the spline's knots are those of the data, so a replicate is the weighted fit
        one = fit_latent_class(y, s, sample_weight=w[b], score_model=score_model, tol=1e-12)
        np.testing.assert_allclose(res.sensitivity[b], one.sensitivity, atol=1e-5)
        assert res.prevalence[b] == pytest.approx(one.prevalence, abs=1e-5)
        assert res.auc_bootstrap.bootstrap_distribution[b] == pytest.approx(
            latent_auc_score(s, one.posterior, sample_weight=w[b]), abs=1e-5
        )


def test_readers_only_intervals():
    t, y, s, pid = _data(n=800, seed=2)
    res = bootstrap_latent_class(y, None, draw_plan(pid, n_resamples=100, rng=0))
    assert res.auc_bootstrap is None and np.isnan(res.auc)
    iv = res.reader_interval()
    assert (iv["sensitivity_low"] < res.fit.sensitivity).all() and (
        res.fit.sensitivity < iv["sensitivity_high"]
    ).all()
    assert (iv["specificity_low"] < res.fit.specificity).all()


def test_plan_of_other_studies_is_refused():
    t, y, s, pid = _data()
    with pytest.raises(
        InvalidParameterError, match="'plan' covers 10 studies but 'reader_labels' has 500 rows"
    ):
        bootstrap_latent_class(y, s, draw_plan(np.arange(10), n_resamples=2, rng=0))
