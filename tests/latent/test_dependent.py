"""The score-dependent readers model (``score_model='dependent'``): it recovers the truth where the readers'
accuracy depends on the score, keeps the conditionally independent fit where it does not, and its EM is
monotone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit
from sklearn.metrics import roc_auc_score

from cxreval.bootstrap import draw_plan
from cxreval.latent import bootstrap_latent_class, fit_latent_class, latent_auc_score
from cxreval.latent._fitting import select_score_model


def simulate(slope, n=3000, seed=0, separation=1.5):
    """4 readers whose logit sensitivity rises by ``slope`` per unit of the score's distance from the positives'
    mean (hard positives scored low are missed), and whose specificity falls as a negative's score rises."""
    rng = np.random.default_rng(seed)
    t = rng.random(n) < 0.3
    x = np.where(t, rng.normal(separation, 1.0, n), rng.normal(0.0, 1.0, n))
    se0 = np.array([0.85, 0.8, 0.75, 0.9])
    sp0 = np.array([0.85, 0.9, 0.8, 0.85])
    dev = (x - separation * t)[:, None]
    se = expit(logit(se0)[None] + slope * dev)
    sp = expit(logit(sp0)[None] - 0.5 * slope * dev)
    y = np.where(t[:, None], rng.random((n, 4)) < se, rng.random((n, 4)) > sp).astype(float)
    return t, y, x


@pytest.mark.parametrize("seed", [0, 1])
def test_beats_the_independence_model_on_score_dependent_readers(seed):
    t, y, x = simulate(slope=1.2, seed=seed)
    true = roc_auc_score(t, x)
    indep = latent_auc_score(x, fit_latent_class(y, x).posterior) - true
    dep_fit = fit_latent_class(y, x, score_model="dependent")
    dep = latent_auc_score(x, dep_fit.posterior) - true
    assert indep > 0.03  # the independence model reads the missed hard positives as negatives
    assert abs(dep) < abs(indep) / 2
    assert (dep_fit.sensitivity_slope > 0).all()  # the fitted slopes have the sign of the simulated ones


def test_keeps_the_independence_fit_on_conditionally_independent_readers():
    t, y, x = simulate(slope=0.0, seed=2)
    true = roc_auc_score(t, x)
    indep = fit_latent_class(y, x)
    dep = fit_latent_class(y, x, score_model="dependent")
    assert abs(latent_auc_score(x, dep.posterior) - true) < 0.015
    assert np.abs(dep.sensitivity_slope).max() < 0.4
    np.testing.assert_allclose(dep.sensitivity, indep.sensitivity, atol=0.03)
    np.testing.assert_allclose(dep.specificity, indep.specificity, atol=0.03)
    assert np.all(np.diff(dep.log_likelihood_trace) >= -1e-6 * abs(dep.log_likelihood))
    assert dep.score_model == "dependent" and dep.converged


def test_bootstrap_of_the_dependent_model_brackets_its_estimate():
    t, y, x = simulate(slope=1.2, n=1200, seed=3)
    res = bootstrap_latent_class(
        y, x, draw_plan(np.arange(x.size), n_resamples=30, rng=0), score_model="dependent"
    )
    ci = res.auc_bootstrap.confidence_interval
    assert ci.low < res.auc < ci.high
    assert res.auc == pytest.approx(
        latent_auc_score(x, fit_latent_class(y, x, score_model="dependent").posterior)
    )


def test_auto_keeps_the_independence_model_without_dependence_and_chooses_it_with():
    _, y, x = simulate(slope=0.0, seed=2)
    auto = fit_latent_class(y, x, score_model="auto")
    assert auto.score_model == "spline"
    np.testing.assert_array_equal(auto.posterior, fit_latent_class(y, x).posterior)
    assert select_score_model(y, x, None, None, None, None, max_iter=2000, tol=1e-10) == "spline"
    _, y, x = simulate(slope=1.5, seed=0)
    assert fit_latent_class(y, x, score_model="auto").score_model == "dependent"
    assert select_score_model(y, None, None, None, None, None, max_iter=2000, tol=1e-10) == "spline"
