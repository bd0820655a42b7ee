"""Dawid–Skene: recovery of known confusion matrices, monotone true log-likelihood, invariances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from cxreval.exceptions import InvalidParameterError
from cxreval.fusion import DawidSkene, MajorityVote

PRIOR = np.array([0.55, 0.15, 0.30])
CONFUSION = np.array(
    [  # reader x true x observed
        [[0.90, 0.05, 0.05], [0.20, 0.60, 0.20], [0.05, 0.10, 0.85]],
        [[0.80, 0.15, 0.05], [0.30, 0.50, 0.20], [0.10, 0.10, 0.80]],
        [[0.70, 0.10, 0.20], [0.10, 0.70, 0.20], [0.20, 0.10, 0.70]],
        [[0.95, 0.04, 0.01], [0.40, 0.40, 0.20], [0.30, 0.10, 0.60]],
        [[0.60, 0.20, 0.20], [0.20, 0.60, 0.20], [0.10, 0.20, 0.70]],
    ]
)


def simulate(n_items=3000, seed=0, p_missing=0.0, confusion=CONFUSION, prior=PRIOR):
    """Readers with known confusion matrices label items drawn from ``prior``."""
    rng = np.random.default_rng(seed)
    z = rng.choice(3, size=n_items, p=prior)
    n_readers = len(confusion)
    cum = np.cumsum(confusion, axis=2)  # reader x true x observed
    u = rng.random((n_items, n_readers))
    labels = (u[:, :, None] > cum[np.arange(n_readers)[None, :], z[:, None], :]).sum(axis=2)
    keep = rng.random((n_items, n_readers)) >= p_missing
    ii, jj = np.nonzero(keep)
    d = pd.DataFrame(
        {"study_id": [f"s{i:05d}" for i in ii], "source": [f"r{j}" for j in jj], "state": labels[ii, jj]}
    )
    return d, z


@pytest.fixture(scope="module")
def sim():
    return simulate(n_items=20000)


def test_recovers_confusion_and_truth(sim):
    d, z = sim
    ds = DawidSkene(n_iter=500).fit(d)
    est = np.zeros_like(CONFUSION)
    for r in ds.errors_.itertuples():
        est[int(r.source[1:]), r.true_state, r.observed_state] = r.probability
    # stated tolerance: every confusion entry within 0.04 (20,000 items, ~3,000 of the rarest class)
    assert np.abs(est - CONFUSION).max() < 0.04
    np.testing.assert_allclose(ds.priors_.loc["*"].to_numpy(), PRIOR, atol=0.03)
    acc_ds = (ds.labels_.to_numpy() == z).mean()
    acc_mv = (MajorityVote().fit_predict(d).to_numpy() == z).mean()
    assert acc_ds > acc_mv + 0.015, (acc_ds, acc_mv)
    assert ds.fit_info_["converged"].all()


def _true_loglik(d, ds):
    """Independent brute-force marginal log-likelihood of the fitted parameters."""
    prior = ds.priors_.loc["*"].to_numpy()
    conf = {(r.source, r.true_state, r.observed_state): r.probability for r in ds.errors_.itertuples()}
    total = 0.0
    for _, g in d.groupby("study_id"):
        terms = []
        for k in range(3):
            lp = np.log(prior[k]) if prior[k] > 0 else -np.inf
            for r, lab in zip(g.source, g.state):
                p = conf[(r, k, lab)]
                lp += np.log(p) if p > 0 else -np.inf
            terms.append(lp)
        total += logsumexp(terms)
    return total


def test_log_likelihood_monotone_and_true():
    d, _ = simulate(n_items=300, seed=1, p_missing=0.3)
    for n in (1, 2, 5, 40):
        ds = DawidSkene(n_iter=n, tol=0).fit(d)
        hist = ds.log_likelihood_history_["*"]
        assert len(hist) == n
        assert np.all(np.diff(hist) >= -1e-9 * np.abs(hist[1:]))
    # the recorded value is the true marginal log-likelihood of the returned parameters,
    # up to the one E-step the history lags behind (so compare after convergence)
    ds = DawidSkene(n_iter=2000, tol=1e-13).fit(d)
    assert ds.log_likelihood_history_["*"][-1] == pytest.approx(_true_loglik(d, ds), rel=1e-6)
    assert np.diff(ds.log_likelihood_history_["*"])[:5].min() > 0


def test_permutation_and_determinism(sim):
    d, _ = sim
    d = d.iloc[:6000]
    ref = DawidSkene().fit(d)
    rng = np.random.default_rng(3)
    perm = d.iloc[rng.permutation(len(d))]
    got = DawidSkene().fit(perm)
    pd.testing.assert_frame_equal(got.probas_, ref.probas_)
    pd.testing.assert_frame_equal(got.errors_, ref.errors_)


def test_per_finding_and_joint():
    d1, _ = simulate(n_items=200, seed=4)
    d2, _ = simulate(n_items=200, seed=5)
    d = pd.concat([d1.assign(finding="Edema"), d2.assign(finding="Effusion")], ignore_index=True)
    per = DawidSkene().fit(d)
    assert list(per.priors_.index) == ["Edema", "Effusion"]
    alone = DawidSkene().fit(d2)
    np.testing.assert_allclose(
        per.probas_.xs("Effusion", level="finding").to_numpy(), alone.probas_.to_numpy()
    )
    joint = DawidSkene(pooling="joint").fit(d)
    assert list(joint.priors_.index) == ["*"] and len(joint.labels_) == 400


def test_unused_state_is_impossible():
    d = pd.DataFrame(
        {
            "study_id": np.repeat(["a", "b", "c", "d"], 2),
            "source": ["x", "y"] * 4,
            "state": [0, 0, 2, 2, 0, 2, 2, 2],
        }
    )
    ds = DawidSkene().fit(d)
    assert (ds.probas_[1] == 0).all()
    assert set(ds.errors_["true_state"]) == {0, 2}


def test_bad_params():
    d, _ = simulate(n_items=5)
    with pytest.raises(InvalidParameterError, match="'n_iter' parameter of DawidSkene must be an int >= 1"):
        DawidSkene(n_iter=0).fit(d)
    with pytest.raises(InvalidParameterError, match="'tol' parameter of DawidSkene"):
        DawidSkene(tol=-1).fit(d)
    with pytest.raises(InvalidParameterError, match="'pooling' parameter"):
        DawidSkene(pooling="all").fit(d)
    with pytest.raises(
        InvalidParameterError, match="'init_smoothing' parameter of DawidSkene must be a float >= 0"
    ):
        DawidSkene(init_smoothing=-0.1).fit(d)


def test_against_crowdkit_converged(sim):
    ck = pytest.importorskip("crowdkit.aggregation")
    d, _ = sim
    ours = DawidSkene(n_iter=100, tol=0).fit_predict(d)
    theirs = ck.DawidSkene(n_iter=100, tol=-np.inf).fit_predict(
        d.rename(columns={"study_id": "task", "source": "worker", "state": "label"})
    )
    assert (ours.to_numpy() == theirs.reindex(ours.index).to_numpy()).mean() > 0.995
