"""Tests of cxreval.datasets.chexpert on the real CheXpert test-set layout (../shared/data)."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score as sk_auc

from cxreval.classification import evaluate_auc
from cxreval.datasets import chexpert
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError


@pytest.fixture(scope="module")
def root(shared_data):
    return shared_data / "chexpert_test"


def test_labels_all_sources(root):
    res = chexpert.load_labels(root)
    t = res.table
    assert sorted(t.source.unique()) == sorted(chexpert.SOURCES)
    assert t.study_id.nunique() == 500 and t.patient_id.nunique() == 500
    assert res.report.n_read == 11 * 500 and res.report.n_dropped == 0
    assert any("byte-identical" in n for n in res.report.notes)
    # radiologists are binary; report labelers carry uncertain and not-mentioned states
    assert set(t[t.source == "bc4"].state.dropna().astype(int)) == {0, 2}
    assert {-1, 0, 1, 2} <= set(t[t.source == "chexbert"].state.dropna().astype(int))
    # the consensus file, cell by cell
    raw = pd.read_csv(root / "groundtruth.csv")
    c = t[(t.source == "consensus") & (t.finding == "Effusion")].set_index("study_id").state.astype(int)
    assert (c.reindex(raw.Study).to_numpy() == raw["Pleural Effusion"].to_numpy() * 2).all()


def test_predictions_and_notes(root):
    res = chexpert.load_predictions(root)
    t = res.table
    assert t.model.nunique() == 10 and len(t) == 10 * 500 * 5
    assert set(t.finding) == set(chexpert.COMPETITION_FINDINGS)
    assert any("identical scores for Atelectasis: drnet = ihil" in n for n in res.report.notes)
    assert any("ngango2: scores are not probabilities" in n for n in res.report.notes)


def test_consensus_auc_equals_sklearn(root):
    labels = chexpert.load_labels(root, sources=["consensus", "chexbert"]).table
    preds = chexpert.load_predictions(root, models=["jfaboy", "drnet"]).table
    res = evaluate_auc(preds, labels, n_resamples=20, rng=0)
    raw = pd.read_csv(root / "groundtruth.csv").set_index("Study")
    p = pd.read_csv(root / "example_models/predictions/standard/jfaboy_predictions.csv").set_index("Study")
    for f, col in (("Edema", "Edema"), ("Effusion", "Pleural Effusion")):
        ref = sk_auc(raw.loc[p.index, col], p[col])
        got = res.table[(res.table.model == "jfaboy") & (res.table.finding == f)
                        & (res.table.reference == "consensus")].auc.iloc[0]
        assert abs(got - ref) < 1e-12
    # report labeler: uncertain excluded, not mentioned negative
    lab = pd.read_csv(root / "labeler/chexbert_labels.csv").set_index("Study").loc[p.index, "Edema"]
    keep = lab != -1
    y = lab[keep].fillna(0).to_numpy()
    got = res.table[(res.table.model == "jfaboy") & (res.table.finding == "Edema")
                    & (res.table.reference == "chexbert")].iloc[0]
    assert abs(got.auc - sk_auc(y, p.loc[keep, "Edema"])) < 1e-12
    assert got.n_dropped == int((~keep).sum())


def test_errors(root, tmp_path):
    with pytest.raises(DataUnavailableError, match="is not a CheXpert test-set folder"):
        chexpert.load_labels(tmp_path)
    with pytest.raises(InvalidParameterError, match="Unknown CheXpert test-set source 'bc9'"):
        chexpert.load_labels(root, sources=["bc9"])
    with pytest.raises(InvalidParameterError, match="Unknown CheXpert leaderboard model 'nope'"):
        chexpert.load_predictions(root, models=["nope"])
    (tmp_path / "groundtruth.csv").write_text("Study,Edema\nCheXpert-v1.0/test/patient1/study1,7\n")
    with pytest.raises(SchemaError, match=r"State '7' outside the domain .* column 'Edema'"):
        chexpert.load_labels(tmp_path)
    (tmp_path / "groundtruth.csv").write_text("Study,Edema\nCheXpert-v1.0/test/nopatient/study1,1\n")
    with pytest.raises(SchemaError, match="Missing patient id"):
        chexpert.load_labels(tmp_path)
