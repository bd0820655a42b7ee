"""The power's Monte Carlo: the accelerated EM reaches plain EM's fixed point, the posterior truths are draws of the
fitted model (its parameters' uncertainty included), and the power does not depend on where it runs (its
calibration: tests/planning/test_design.py at small scale, bench planning:power_calibration at full scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.planning import plan_relabelling, simulate_study_set
from cxreval.planning._inputs import prepare_inputs
from cxreval.planning._mixture import fit_joint
from cxreval.planning._planner import auc_prior_weights, effective_draws, fit_finding, posterior_truths
from cxreval.planning._soft_auc import soft_auc


def _fit(n=300, seed=0, readers=("ref1", "ref2")):
    ss = simulate_study_set(
        n,
        auc=[0.85, 0.8, 0.7],
        sensitivity=[0.8, 0.75, 0.7],
        specificity=[0.85, 0.9, 0.8],
        prevalence=0.3,
        rng=seed,
    )
    cheap = ss.labels[ss.labels["source"] != "truth"]
    inputs = prepare_inputs(
        ss.predictions, cheap, reference="ref0", readers=list(readers), anchor=None, findings=None
    )
    return fit_finding(inputs.findings[0]), ss


def test_accelerated_em_reaches_the_plain_em_fixed_point():
    ff, _ = _fit()
    rng = np.random.default_rng(1)
    n = len(ff.posterior)
    anchor = np.where(np.arange(n) < 60, (rng.random((8, n)) < ff.posterior).astype(float), np.nan)
    plain, ok_plain = fit_joint(ff.data.references, ff.x, anchor=anchor)
    fast, ok_fast = fit_joint(ff.data.references, ff.x, anchor=anchor, accelerate=True, start=ff.posterior)
    assert ok_plain and ok_fast
    np.testing.assert_allclose(fast, plain, atol=1e-4)
    one, _ = fit_joint(ff.data.references, ff.x, anchor=anchor[3])
    np.testing.assert_allclose(plain[3], one, atol=1e-9)  # each batched fit is the fit of its own row


def test_posterior_truths_keep_the_anchor_and_follow_the_posterior():
    ff, ss = _fit(n=400)
    t = posterior_truths(ff, 400, np.random.default_rng(2))
    assert t.shape == (400, len(ff.posterior)) and set(np.unique(t)) <= {0.0, 1.0}
    # draws of the model: each study's frequency of truth 1 is close to its fitted posterior...
    assert np.abs(t.mean(axis=0) - ff.posterior).mean() < 0.05
    # ...and the drawn prevalence varies more than binomially around the fitted one (the parameters are drawn)
    binomial_sd = np.sqrt((ff.posterior * (1 - ff.posterior)).sum()) / len(ff.posterior)
    assert t.mean(axis=1).std() > 1.5 * binomial_sd
    anchored = ff.data.anchor.copy()
    anchored[:50] = ss.truth.to_numpy()[:50]
    ff_anchor = type(ff)(**{**ff.__dict__, "data": type(ff.data)(**{**ff.data.__dict__, "anchor": anchored})})
    ta = posterior_truths(ff_anchor, 50, np.random.default_rng(3))
    assert (ta[:, :50] == anchored[:50]).all()


def test_the_power_is_the_same_in_process_and_serial_executors():
    _, ss = _fit(n=120)
    cheap = ss.labels[ss.labels["source"] != "truth"]
    opts = {
        "reference": "ref0",
        "readers": ["ref1"],
        "budget": 20,
        "budgets": [0, 10, 20],
        "n_draws": 20,
        "rng": 5,
    }
    default = plan_relabelling(ss.predictions, cheap, **opts)
    serial = plan_relabelling(ss.predictions, cheap, executor="serial", **opts)
    pd.testing.assert_frame_equal(default.power, serial.power)
    # the Monte Carlo error: sqrt(p (1 - p) / effective draws)
    pw = default.power
    np.testing.assert_allclose(
        pw["mc_se"], np.sqrt(pw["p_right"] * (1 - pw["p_right"]) / pw["effective_draws"])
    )
    assert (pw["effective_draws"] > 1).all() and (pw["effective_draws"] <= pw["n_draws"] + 1e-9).all()
    # the right decision is a separation with the right leader: never more likely than a separation
    assert (pw["p_right"] <= pw["p_separable"] + 1e-12).all()
    np.testing.assert_allclose(pw["p_right"] + pw["p_wrong"], pw["p_separable"])


@pytest.mark.parametrize("budget", [10, 60])
def test_power_is_a_probability(budget):
    _, ss = _fit(n=120, seed=4)
    cheap = ss.labels[ss.labels["source"] != "truth"]
    res = plan_relabelling(
        ss.predictions,
        cheap,
        reference="ref0",
        readers=["ref1", "ref2"],
        budget=budget,
        budgets=[budget],
        n_draws=25,
        rng=0,
    )
    row = res.power.iloc[0]
    assert 0.0 <= row["p_right"] <= row["p_separable"] <= 1.0 and 0.0 <= row["p_wrong"] <= 1.0


def test_effective_draws_is_kish():
    assert effective_draws(np.ones(40)) == pytest.approx(40)
    assert effective_draws(np.r_[1.0, np.full(99, 1e-9)]) == pytest.approx(1, abs=1e-6)
    w = np.random.default_rng(0).random(50)
    assert effective_draws(w) == pytest.approx(w.sum() ** 2 / (w**2).sum())


def test_the_auc_prior_weights_shrink_toward_equal_aucs_and_follow_their_formula():
    ff, _ = _fit(n=400)
    t = posterior_truths(ff, 300, np.random.default_rng(6))
    w = auc_prior_weights(ff, t)
    assert w.shape == (300,) and w.max() == 1.0 and (w > 0).all()
    a = np.column_stack([soft_auc(t, ff.order[m]) for m in ff.data.scores])
    c = a - a.mean(axis=1, keepdims=True)
    tau2 = max(((c.mean(axis=0) ** 2).sum() - c.var(axis=0).sum()) / (a.shape[1] - 1), 1e-4)
    np.testing.assert_allclose(
        w, np.exp(-(c**2).sum(axis=1) / (2 * tau2) + ((c**2).sum(axis=1) / (2 * tau2)).min())
    )
    spread = (c**2).sum(axis=1)
    assert (w * spread).sum() / w.sum() < spread.mean()  # the weighted draws' AUCs are closer together


def test_the_soft_auc_is_latent_auc_score():
    """Planning's batched posterior-weighted AUC is the statistic of cxreval.latent.latent_auc_score."""
    from cxreval.latent import latent_auc_score
    from cxreval.planning._soft_auc import score_order, soft_auc

    ff, _ = _fit(n=150)
    for s in ff.data.scores.values():
        rounded = np.round(s, 1)  # ties
        for score in (s, rounded):
            assert soft_auc(ff.posterior, score_order(score)) == pytest.approx(
                latent_auc_score(score, ff.posterior), abs=1e-12
            )
