"""Fusion on real reader labels: CheXpert test set (shared data) and VinDr-CXR (metadata cache)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.fusion import fuse_labels


def test_chexpert_consensus_is_majority_vote_of_five_readers(shared_data):
    """The CheXpert test-set ground truth is the majority vote of radiologists bc1, 2, 3, 5, 7:
    cxreval's MV of those five sources reproduces it on all 500 studies x 14 findings."""
    from cxreval.datasets.chexpert import load_labels

    t = load_labels(shared_data / "chexpert_test").table
    res = fuse_labels(t, ["bc1", "bc2", "bc3", "bc5", "bc7"], ["mv", "ds"])
    assert res.readers_per_item == {5: 7000}
    mv = res.labels[res.labels.source == "fused_mv"].set_index(["study_id", "finding"])["state"]
    gt = t[t.source == "consensus"].set_index(["study_id", "finding"])["state"].reindex(mv.index)
    assert int((mv != gt).sum()) == 0
    for hist in res.estimators["ds"].log_likelihood_history_.values():
        assert np.all(np.diff(hist) >= -1e-9 * np.abs(hist[1:]))


@pytest.mark.slow
def test_vindr_competence_reflects_assignment(metadata_dir):
    from cxreval.datasets.vindr import read_vindr

    t = read_vindr(metadata_dir / "vinbigdata-train.csv.gz").table
    readers = [f"R{i}" for i in range(1, 18)]
    res = fuse_labels(
        t,
        readers,
        ["mv", "ds", "mace"],
        findings=["Cardiomegaly"],
        params={"mace": {"n_restarts": 2, "n_iter": 20}},
        rng=0,
    )
    assert res.readers_per_item == {3: 15000}
    err = res.estimators["ds"].errors_
    sens = err[(err.true_state == 2) & (err.observed_state == 2)].set_index("source")["probability"]
    assert (sens[[f"R{i}" for i in range(1, 8)]] == 0).all()  # never mark a finding
    assert (sens[["R8", "R9", "R10"]] > 0.6).all()  # read the abnormal block
    comp = res.estimators["mace"].competence_.set_index("source")["competence"]
    assert comp[["R8", "R9", "R10"]].min() > comp[[f"R{i}" for i in range(1, 8)]].max()


def test_vindr_ds_smoothed_start_escapes_zero_trap(metadata_dir):
    """Plain vote shares put exact zeros into EM, which it cannot leave (a worse fixed point)."""
    from cxreval.datasets.vindr import read_vindr
    from cxreval.fusion import DawidSkene

    t = read_vindr(metadata_dir / "vinbigdata-train.csv.gz").table
    g = t[t.finding == "ILD"]
    d = g[["study_id", "source", "state"]].assign(state=g["state"].astype(int))
    plain = DawidSkene(init_smoothing=0.0).fit(d).log_likelihood_history_["*"]
    smooth = DawidSkene().fit(d).log_likelihood_history_["*"]
    assert plain[-1] == pytest.approx(-2344.02, abs=0.01)
    assert smooth[-1] == pytest.approx(-2317.15, abs=0.01)
    for h in (plain, smooth):
        assert np.all(np.diff(h) >= -1e-9 * np.abs(h[1:]))
