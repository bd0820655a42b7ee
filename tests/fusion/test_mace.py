"""MACE: restarts that differ, determinism, permutation invariance, spammer detection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.fusion import MACE, MajorityVote


def simulate(n_items=2000, competence=(0.9, 0.8, 0.7, 0.1, 0.1), seed=0, n_classes=3):
    """MACE's generative model: reader j knows with prob. competence[j], else says a uniform random state."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, n_classes, n_items)
    comp = np.asarray(competence)
    knows = rng.random((n_items, len(comp))) < comp
    spam = rng.integers(0, n_classes, (n_items, len(comp)))
    labels = np.where(knows, z[:, None], spam)
    ii, jj = np.indices(labels.shape)
    d = pd.DataFrame(
        {
            "study_id": [f"s{i:05d}" for i in ii.ravel()],
            "source": [f"r{j}" for j in jj.ravel()],
            "state": labels.ravel(),
        }
    )
    return d, z


@pytest.fixture(scope="module")
def sim():
    return simulate()


def test_competence_and_truth(sim):
    d, z = sim
    m = MACE(rng=0).fit(d)
    comp = m.competence_.set_index("source")["competence"]
    np.testing.assert_allclose(comp.to_numpy(), [0.9, 0.8, 0.7, 0.1, 0.1], atol=0.05)
    acc = (m.labels_.to_numpy() == z).mean()
    acc_mv = (MajorityVote().fit_predict(d).to_numpy() == z).mean()
    assert acc > acc_mv + 0.02, (acc, acc_mv)
    sp = m.spamming_.groupby("source")["probability"].sum()
    assert np.all(sp <= 1.0 + 1e-12)  # VB parameters exp(E[log xi]) are sub-normalised


def test_restarts_differ_and_best_is_kept(sim):
    d, _ = sim
    m = MACE(n_restarts=5, n_iter=3, rng=1).fit(d.iloc[:3000])
    lls = m.log_likelihoods_["*"]
    assert len(np.unique(lls)) == 5  # crowd-kit 1.4.2 gives 5 identical values
    one = [MACE(n_restarts=1, n_iter=3, rng=np.random.default_rng(1)).fit(d.iloc[:3000])]
    assert one[0].log_likelihoods_["*"][0] == lls[0]


def test_deterministic_and_permutation_invariant(sim):
    d, _ = sim
    d = d.iloc[:3000]
    ref = MACE(n_restarts=3, rng=7).fit(d)
    again = MACE(n_restarts=3, rng=7).fit(d)
    pd.testing.assert_frame_equal(again.probas_, ref.probas_)
    rng = np.random.default_rng(0)
    for _ in range(2):
        perm = MACE(n_restarts=3, rng=7).fit(d.iloc[rng.permutation(len(d))])
        pd.testing.assert_frame_equal(perm.probas_, ref.probas_)
        pd.testing.assert_frame_equal(perm.competence_, ref.competence_)


def test_em_method_and_states():
    d, z = simulate(n_items=600, competence=(0.9, 0.8, 0.2), seed=3, n_classes=2)
    d["state"] = d["state"] * 2  # states NEG / POS only
    m = MACE(method="em", rng=0).fit(d)
    assert (m.probas_[1] == 0).all()
    assert set(m.labels_.unique()) <= {0, 2}
    assert (m.labels_.to_numpy() == 2 * z).mean() > 0.9


def test_bad_params(sim):
    d, _ = sim
    with pytest.raises(InvalidParameterError, match="'n_restarts' parameter of MACE must be an int >= 1"):
        MACE(n_restarts=0).fit(d)
    with pytest.raises(InvalidParameterError, match="'method' parameter of MACE must be one of"):
        MACE(method="gibbs").fit(d)
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of MACE must be a float > 0"):
        MACE(alpha=0).fit(d)
    with pytest.raises(InvalidParameterError, match="'rng' parameter"):
        MACE(rng="seed").fit(d)


def test_against_crowdkit_sorted(sim):
    ck = pytest.importorskip("crowdkit.aggregation")
    d, _ = sim
    d = d.iloc[:3000]
    ours = MACE(rng=0).fit_predict(d)
    c = d.rename(columns={"study_id": "task", "source": "worker", "state": "label"}).sort_values(
        ["worker", "label", "task"]
    )
    theirs = ck.MACE().fit_predict(c)
    assert (ours.to_numpy() == theirs.reindex(ours.index).to_numpy()).mean() > 0.99
