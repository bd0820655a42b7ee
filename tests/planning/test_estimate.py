"""evaluate_two_phase_auc: exact anchors give the ordinary AUC and DeLong's interval; the latent estimate recovers a
known truth in simulation; its refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri
from sklearn.metrics import roc_auc_score

from cxreval.classification import delong_test
from cxreval.exceptions import InvalidParameterError
from cxreval.planning import evaluate_two_phase_auc, simulate_study_set
from cxreval.planning._estimate import COMPARISON_COLUMNS, TWO_PHASE_COLUMNS
from cxreval.planning._soft_auc import reveal_auc, score_order, soft_auc


def _set(n: int, seed: int, **kw):
    opts = {"auc": [0.85, 0.8, 0.72], "sensitivity": [0.75], "specificity": [0.85], "prevalence": 0.3}
    opts.update(kw)
    return simulate_study_set(n, rng=seed, **opts)


def _with_expert(ss, studies):
    t = ss.labels
    cheap = t[t["source"] != "truth"]
    expert = t[(t["source"] == "truth") & t["study_id"].isin(set(studies))].assign(source="expert")
    return pd.concat([cheap, expert], ignore_index=True)


def test_exact_anchor_everywhere_gives_the_ordinary_auc_and_delongs_interval():
    ss = _set(120, seed=0)
    res = evaluate_two_phase_auc(
        ss.predictions,
        _with_expert(ss, ss.truth.index),
        reference="ref0",
        anchor="expert",
        pairs={"Effusion": ("m0", "m2")},
    )
    assert (
        tuple(res.table.columns) == TWO_PHASE_COLUMNS and tuple(res.comparison.columns) == COMPARISON_COLUMNS
    )
    y = ss.truth.to_numpy()
    for m, auc in zip(res.table["model"], res.table["auc"]):
        s = ss.predictions[ss.predictions["model"] == m].set_index("study_id")["score"].loc[ss.truth.index]
        assert auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    sa, sb = (
        ss.predictions[ss.predictions["model"] == m].set_index("study_id")["score"].loc[ss.truth.index]
        for m in ("m0", "m2")
    )
    dl = delong_test(y, sa.to_numpy(), sb.to_numpy())
    row = res.comparison.iloc[0]
    assert row["delta"] == pytest.approx(dl.difference, abs=1e-12)
    assert row["ci_high"] - row["delta"] == pytest.approx(float(ndtri(0.975)) * dl.standard_error, rel=1e-9)
    assert (res.table["n_anchored"] == 120).all()


def test_soft_auc_matches_sklearn_with_hard_weights_and_a_double_sum_with_soft_ones():
    rng = np.random.default_rng(1)
    s = np.round(rng.normal(size=25), 1)
    y = (rng.random(25) < 0.4).astype(float)
    so = score_order(s)
    assert soft_auc(y, so) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    w = rng.random(25)
    pairs = [
        (w[i] * (1 - w[j]), 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0)
        for i in range(25)
        for j in range(25)
        if i != j
    ]
    brute = sum(p * h for p, h in pairs) / sum(p for p, _ in pairs)
    assert soft_auc(w, so) == pytest.approx(brute, abs=1e-12)
    one, zero = reveal_auc(w, so)
    w1, w0 = w.copy(), w.copy()
    w1[4], w0[4] = 1.0, 0.0
    assert (one[4], zero[4]) == pytest.approx((float(soft_auc(w1, so)), float(soft_auc(w0, so))), abs=1e-12)
    batch = soft_auc(np.stack([w, y]), so)  # batched over draws
    np.testing.assert_allclose(batch, [soft_auc(w, so), soft_auc(y, so)])


@pytest.mark.slow
def test_simulation_the_latent_estimate_is_closer_to_the_truth_than_the_cheap_reference():
    """30 simulated sets of 600 studies, one cheap reference (sensitivity 0.7, specificity 0.9): the two-phase
    estimate with 100 anchored studies (random) has mean |AUC error| below the reference's and below 0.02."""
    err_latent, err_ref = [], []
    rng = np.random.default_rng(2)
    for k in range(30):
        ss = _set(600, seed=100 + k, sensitivity=[0.7], specificity=[0.9])
        studies = rng.choice(ss.truth.index, 100, replace=False)
        res = evaluate_two_phase_auc(
            ss.predictions, _with_expert(ss, studies), reference="ref0", anchor="expert"
        )
        y = ss.truth.to_numpy()
        for m, auc, ref in res.table[["model", "auc", "auc_reference"]].itertuples(index=False):
            s = (
                ss.predictions[ss.predictions["model"] == m]
                .set_index("study_id")["score"]
                .loc[ss.truth.index]
            )
            true = roc_auc_score(y, s)
            err_latent.append(abs(auc - true))
            err_ref.append(abs(ref - true))
    assert np.mean(err_latent) < 0.02 and np.mean(err_latent) < 0.5 * np.mean(err_ref)


def test_bad_pairs_are_refused():
    ss = _set(40, seed=3)
    with pytest.raises(InvalidParameterError, match="'pairs' parameter"):
        evaluate_two_phase_auc(
            ss.predictions, _with_expert(ss, []), reference="ref0", pairs={"Effusion": ("m0", "x")}
        )
