"""The design-based planner: the design's inclusion probabilities (stated, above 0, realised by the sampler), the
design-based (AIPW) estimate (unbiased whatever the predictions, its interval covering, the plain AUC when every
study is labelled), and the power of the right decision, calibrated on simulated study sets with a known truth
(small scale here; bench planning:power_calibration at full scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.planning import evaluate_design_auc, plan_relabelling, simulate_study_set
from cxreval.planning._design import (
    design_auc,
    inclusion_probabilities,
    pair_estimate,
    random_part,
    systematic_sample,
)
from cxreval.planning._design_estimate import DesignAUCResult
from cxreval.planning._soft_auc import auc_gradient, score_order, soft_auc, weighted_auc


def _cheap(ss):
    return ss.labels[ss.labels["source"] != "truth"]


def test_inclusion_probabilities_follow_the_priority_above_the_floor_and_sum_to_the_budget():
    rng = np.random.default_rng(0)
    c = rng.gamma(0.3, 1.0, 200)
    c[:3] = 100.0  # would take more than probability 1: capped
    pi = inclusion_probabilities(c, 30, uniform_floor=0.2)
    assert pi.sum() == pytest.approx(30) and (pi[:3] == 1).all()
    assert pi.min() >= 30 * 0.2 / 200 - 1e-12 and pi.max() <= 1
    base = 0.8 * c / c.sum() + 0.2 / 200
    ratio = pi[3:] / base[3:]
    np.testing.assert_allclose(ratio, ratio[0])  # proportional among the uncapped
    np.testing.assert_allclose(inclusion_probabilities(c, 30, uniform_floor=1.0), 30 / 200)
    np.testing.assert_allclose(inclusion_probabilities(c, 200, uniform_floor=0.2), 1.0)


def test_the_systematic_sample_has_the_budget_and_the_stated_probabilities():
    rng = np.random.default_rng(1)
    pi = inclusion_probabilities(rng.gamma(0.5, 1.0, 120), 25, uniform_floor=0.2)
    s = systematic_sample(pi, rng, 20000)
    assert (s.sum(axis=1) == 25).all()
    se = np.sqrt(pi * (1 - pi) / 20000)
    assert (np.abs(s.mean(axis=0) - pi) <= 4.5 * se + 1e-9).all()
    part = random_part(s, pi, 25, 0.2, rng)
    assert not (part & ~s).any()
    # every study is in the random part with the same probability: budget * floor / N
    np.testing.assert_allclose(part.mean(axis=0), 25 * 0.2 / 120, atol=4.5 * np.sqrt(0.04 / 20000))


def test_the_auc_gradient_and_the_weighted_auc():
    rng = np.random.default_rng(2)
    p = rng.normal(0.4, 0.6, 50)  # pseudo-truths leave [0, 1]
    so = score_order(np.round(rng.standard_normal(50), 1))
    auc, g = auc_gradient(p, so)
    for i in (0, 17, 49):
        q = p.copy()
        q[i] += 1e-6
        assert g[i] == pytest.approx((soft_auc(q, so) - auc) / 1e-6, rel=1e-4, abs=1e-8)
    t = (rng.random(50) < 0.4).astype(float)
    s = rng.standard_normal(50) + t
    assert weighted_auc(t, np.ones(50), score_order(s)) == pytest.approx(roc_auc_score(t, s))
    # integer weights are copies of the studies
    v = rng.integers(1, 4, 50).astype(float)
    rep = np.repeat(np.arange(50), v.astype(int))
    assert weighted_auc(t, v, score_order(s)) == pytest.approx(roc_auc_score(t[rep], s[rep]) * 1.0, abs=0.02)


def _population(rng, n=300, prevalence=0.3):
    t = (rng.random(n) < prevalence).astype(float)
    s = rng.standard_normal(n) + 1.2 * t
    return t, s


def test_the_design_based_estimate_is_unbiased_whatever_the_predictions():
    rng = np.random.default_rng(3)
    t, s = _population(rng)
    so = score_order(s)
    truth_auc = roc_auc_score(t, s)
    bad = np.clip(0.5 + 0.1 * rng.standard_normal(len(t)) - 0.2 * t, 0.01, 0.99)  # wrong way round
    good = np.clip(t + 0.1 * rng.standard_normal(len(t)), 0.01, 0.99)
    pi = inclusion_probabilities(np.abs(rng.standard_normal(len(t))), 60, uniform_floor=0.2)
    sampled = systematic_sample(pi, rng, 4000)
    assert abs(soft_auc(bad, so) - truth_auc) > 0.2  # the predictions alone are far off
    sds = {}
    for name, pred in (("bad", bad), ("good", good)):
        est = pair_estimate(pred, t, sampled, pi, so)
        mc = np.nanstd(est.auc) / np.sqrt(np.isfinite(est.auc).sum())
        assert abs(np.nanmean(est.auc) - truth_auc) < 0.005 + 4 * mc, name
        sds[name] = np.nanstd(est.auc)
        if name == "bad":
            assert np.median(est.lam) < 0.3  # useless predictions are weighed down
    assert sds["good"] < 0.6 * sds["bad"]  # good predictions narrow the estimate
    # with the weight fixed at 0 and equal probabilities, the estimate is the sample's plain AUC
    eq = np.full(len(t), 60 / len(t))
    one = systematic_sample(eq, rng)[0]
    a0 = pair_estimate(bad, t, one, eq, so)
    plain = roc_auc_score(t[one], s[one])
    assert float(a0.auc) == pytest.approx(plain, abs=1e-12) or float(a0.lam) > 0


def test_the_interval_covers_the_population_auc():
    rng = np.random.default_rng(4)
    from scipy.stats import norm

    true_auc = norm.cdf(1.2 / np.sqrt(2))
    hits = []
    for _ in range(300):
        t, s = _population(rng, n=300)
        pred = np.clip(0.3 + 0.5 * (t - 0.3) + 0.15 * rng.standard_normal(len(t)), 0.01, 0.99)
        pi = inclusion_probabilities(np.abs(pred - 0.5) < 0.3, 60, uniform_floor=0.3)
        sampled = systematic_sample(pi, rng)[0]
        a, var = design_auc(pred, t, sampled, pi, score_order(s))
        hits.append(abs(a - true_auc) <= 1.96 * np.sqrt(var))
    assert 0.9 <= np.mean(hits) <= 0.99


def test_every_study_labelled_gives_the_plain_auc():
    ss = simulate_study_set(
        150, auc=[0.85, 0.8], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=5
    )
    expert = ss.labels[ss.labels["source"] == "truth"].assign(source="expert")
    design = pd.DataFrame({"study_id": ss.truth.index, "inclusion_probability": 1.0, "random_part": True})
    res = evaluate_design_auc(
        ss.predictions, pd.concat([_cheap(ss), expert]), reference="ref0", expert="expert", design=design
    )
    assert isinstance(res, DesignAUCResult)
    for m, g in ss.predictions.groupby("model"):
        row = res.table.set_index("model").loc[m]
        exact = roc_auc_score(ss.truth.loc[g["study_id"]], g["score"])
        assert row["auc"] == pytest.approx(exact, abs=1e-12)
        assert row["auc_random_part"] == pytest.approx(exact, abs=1e-12)
        assert row["ci_low"] < exact < row["ci_high"] and row["n_sampled"] == 150


@pytest.mark.parametrize(
    ("design", "error", "match"),
    [
        (pd.DataFrame({"study_id": ["s00001"]}), SchemaError, "inclusion_probability"),
        (
            pd.DataFrame({"study_id": ["s00001"], "inclusion_probability": [0.0]}),
            SchemaError,
            r"in \(0, 1\]; study 's00001' has '0.0'",
        ),
    ],
)
def test_a_bad_design_is_refused_naming_it(design, error, match):
    ss = simulate_study_set(40, auc=[0.85, 0.8], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=0)
    with pytest.raises(error, match=match):
        evaluate_design_auc(ss.predictions, ss.labels, reference="ref0", expert="truth", design=design)


def test_the_uniform_floor_is_checked():
    ss = simulate_study_set(40, auc=[0.85, 0.8], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=0)
    with pytest.raises(InvalidParameterError, match="'uniform_floor' parameter .* in \\(0, 1\\]"):
        plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=5, uniform_floor=0.0)


def test_a_plan_of_the_experts_sample_gives_the_design_based_estimate():
    ss = simulate_study_set(
        200, auc=[0.85, 0.8, 0.7], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=6
    )
    first = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=40, n_draws=20, rng=0)
    assert first.design.table.empty and "No expert labels" in first.summary()
    expert = ss.labels[
        (ss.labels["source"] == "truth") & ss.labels["study_id"].isin(set(first.table["study_id"]))
    ].assign(source="expert")
    labels = pd.concat([_cheap(ss), expert])
    second = plan_relabelling(
        ss.predictions,
        labels,
        reference="ref0",
        anchor="expert",
        anchor_studies=first.table,
        budget=20,
        n_draws=20,
        rng=1,
    )
    alone = evaluate_design_auc(ss.predictions, labels, reference="ref0", expert="expert", design=first.table)
    pd.testing.assert_frame_equal(second.design.table, alone.table)
    assert (second.design.table["n_sampled"] == 40).all()
    assert not set(second.table["study_id"]) & set(first.table["study_id"])  # not planned again
    assert "design-based" in second.summary()
    # read back from relabel.csv as text, the design is the same
    as_text = first.table.astype(str)
    again = evaluate_design_auc(ss.predictions, labels, reference="ref0", expert="expert", design=as_text)
    pd.testing.assert_frame_equal(again.table, alone.table)


def test_the_predicted_right_decision_is_calibrated_on_simulated_sets():
    """Small scale: 30 sets of 300 studies (one cheap reference; three models, the best 0.02-0.08 above the
    runner-up), each with one budget; the predicted probability of the right decision against the frequency with
    which the expert's labels of the plan's own sample give it (separable and the true best on top). The full
    scale (within 0.05 per budget) is bench planning:power_calibration."""
    rng = np.random.default_rng(11)
    predicted, realised = [], []
    for i in range(30):
        best = rng.uniform(0.78, 0.86)
        ss = simulate_study_set(
            300,
            auc=[best, best - rng.uniform(0.02, 0.08), best - 0.1],
            sensitivity=[rng.uniform(0.75, 0.95)],
            specificity=[rng.uniform(0.75, 0.95)],
            prevalence=rng.uniform(0.2, 0.4),
            rng=rng,
        )
        k = (60, 150, 300)[i % 3]
        plan = plan_relabelling(
            ss.predictions, _cheap(ss), reference="ref0", budget=k, budgets=[k], n_draws=60, rng=rng
        )
        expert = ss.labels[
            (ss.labels["source"] == "truth") & ss.labels["study_id"].isin(set(plan.table["study_id"]))
        ].assign(source="expert")
        est = evaluate_design_auc(
            ss.predictions,
            pd.concat([_cheap(ss), expert]),
            reference="ref0",
            expert="expert",
            design=plan.table,
        )
        comp = est.comparison.iloc[0]
        predicted.append(float(plan.power["p_right"].iloc[0]))
        realised.append(bool(comp["separable"]) and comp["model_a"] == "m0")
    gap = np.mean(predicted) - np.mean(realised)
    se = np.sqrt(np.mean(realised) * (1 - np.mean(realised)) / len(realised))
    print(f"predicted {np.mean(predicted):.3f} realised {np.mean(realised):.3f}")
    assert abs(gap) <= 0.05 + 2 * se, (np.mean(predicted), np.mean(realised))
