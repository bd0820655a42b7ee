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
        got = res.table[
            (res.table.model == "jfaboy") & (res.table.finding == f) & (res.table.reference == "consensus")
        ].auc.iloc[0]
        assert abs(got - ref) < 1e-12
    # report labeler: uncertain excluded, not mentioned negative
    lab = pd.read_csv(root / "labeler/chexbert_labels.csv").set_index("Study").loc[p.index, "Edema"]
    keep = lab != -1
    y = lab[keep].fillna(0).to_numpy()
    got = res.table[
        (res.table.model == "jfaboy") & (res.table.finding == "Edema") & (res.table.reference == "chexbert")
    ].iloc[0]
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


# --- the train/valid release (train.csv, valid.csv), built in its published layout -----------------------------

RELEASE_HEADER = (
    "Path,Sex,Age,Frontal/Lateral,AP/PA,No Finding,Enlarged Cardiomediastinum,Cardiomegaly,"
    "Lung Opacity,Lung Lesion,Edema,Consolidation,Pneumonia,Atelectasis,Pneumothorax,Pleural Effusion,"
    "Pleural Other,Fracture,Support Devices"
)


def _release(folder, prefix="CheXpert-v1.0-small"):
    folder.mkdir(parents=True)
    train = [
        RELEASE_HEADER,
        f"{prefix}/train/patient00001/study1/view1_frontal.jpg,Female,68,Frontal,AP,1.0,,,,,,,,,0.0,,,,1.0",
        f"{prefix}/train/patient00002/study2/view1_frontal.jpg,Female,87,Frontal,AP,,,-1.0,1.0,,-1.0,-1.0,,-1.0,,-1.0,,1.0,",
        f"{prefix}/train/patient00002/study2/view2_lateral.jpg,Female,87,Lateral,,,,-1.0,1.0,,-1.0,-1.0,,-1.0,,-1.0,,1.0,",
        f"{prefix}/train/patient00002/study1/view1_lateral.jpg,Female,83,Lateral,,,,,1.0,,,,,,,,,1.0,",
    ]
    valid = [
        RELEASE_HEADER,
        f"{prefix}/valid/patient64541/study1/view1_frontal.jpg,Male,73,Frontal,AP,0.0,1.0,1.0,1.0,0.0,0.0,0.0,"
        "0.0,0.0,0.0,0.0,0.0,0.0,0.0",
        f"{prefix}/valid/patient64542/study1/view1_frontal.jpg,Male,70,Frontal,PA,0.0,0.0,0.0,0.0,0.0,0.0,0.0,"
        "0.0,0.0,0.0,1.0,0.0,0.0,1.0",
    ]
    (folder / "train.csv").write_text("\n".join(train) + "\n")
    (folder / "valid.csv").write_text("\n".join(valid) + "\n")
    return folder


def _st(t, study, finding, source):
    r = t[(t.study_id == study) & (t.finding == finding) & (t.source == source)]
    assert len(r) == 1
    return int(r["state"].iloc[0])


@pytest.mark.parametrize("prefix", ["CheXpert-v1.0-small", "CheXpert-v1.0"])
def test_release_states_ids_and_sources(tmp_path, prefix):
    res = chexpert.load_release(_release(tmp_path / "chx", prefix))
    t = res.table
    assert sorted(t.study_id.unique()) == [
        "patient00001/study1",
        "patient00002/study1",
        "patient00002/study2",
        "patient64541/study1",
        "patient64542/study1",
    ]
    assert (
        t.drop_duplicates("study_id").set_index("study_id")["patient_id"]["patient00002/study2"]
        == "patient00002"
    )
    assert set(t.source) == {"chexpert_labeler", "chexpert_radiologists"}
    assert _st(t, "patient00001/study1", "No Finding", "chexpert_labeler") == 2
    assert _st(t, "patient00001/study1", "Pneumothorax", "chexpert_labeler") == 0
    assert _st(t, "patient00001/study1", "Edema", "chexpert_labeler") == -1  # blank: not mentioned
    assert _st(t, "patient00002/study2", "Cardiomegaly", "chexpert_labeler") == 1  # -1.0: uncertain
    assert _st(t, "patient00002/study2", "Effusion", "chexpert_labeler") == 1
    assert _st(t, "patient64542/study1", "Effusion", "chexpert_radiologists") == 2
    assert _st(t, "patient64541/study1", "Effusion", "chexpert_radiologists") == 0
    assert len(t) == 5 * 14 and res.report.n_read == 6  # images


def test_release_views_and_differing_labels(tmp_path):
    root = _release(tmp_path / "chx")
    res = chexpert.load_release(root, sources=["chexpert_labeler"], views="PA,AP")
    assert sorted(res.table.study_id.unique()) == ["patient00001/study1", "patient00002/study2"]
    assert res.report.dropped["value"].tolist() == [
        "train.csv:CheXpert-v1.0-small/train/patient00002/study1/view1_lateral.jpg"
    ]
    lat = chexpert.load_release(root, views=["Lateral"]).table
    assert sorted(lat.study_id.unique()) == ["patient00002/study1", "patient00002/study2"]
    lines = (root / "train.csv").read_text().splitlines()
    lines[3] = lines[3].replace(",-1.0,1.0,", ",0.0,1.0,", 1)  # the lateral image of study2: Cardiomegaly 0.0
    (root / "train.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(
        SchemaError, match=r"Images of study 'patient00002/study2' carry different labels .*rows 1 and 2"
    ):
        chexpert.load_release(root)
    (root / "train.csv").write_text(
        RELEASE_HEADER + "\nCheXpert-v1.0/train/p1/view1.jpg" + ",x" * 4 + ",1.0" * 14 + "\n"
    )
    with pytest.raises(SchemaError, match="is not of the form .*patientNNNNN/studyN"):
        chexpert.load_release(root)


def test_release_missing_file_names_it(tmp_path, capsys):
    from cxreval.cli.main import main

    root = _release(tmp_path / "chx")
    (root / "valid.csv").unlink()
    with pytest.raises(DataUnavailableError, match="has no 'valid.csv'.*place valid.csv in"):
        chexpert.load_release(root)
    assert set(chexpert.load_release(root, sources=["chexpert_labeler"]).table.source) == {"chexpert_labeler"}
    assert main(["data", "export", "chexpert", "--path", str(root), "-o", str(tmp_path / "out")]) == 2
    assert "valid.csv" in capsys.readouterr().err


@pytest.mark.slow
def test_fetched_train_is_read_per_study(metadata_dir):
    from cxreval.datasets import load_dataset

    res = load_dataset("chexpert_train")
    t = res.table
    # CheXpert-v1.0-small train.csv: 223,414 images of 187,641 studies of 64,540 patients
    assert (res.report.n_read, t.study_id.nunique(), t.patient_id.nunique()) == (223_414, 187_641, 64_540)
    raw = pd.read_csv(metadata_dir / "chexpert_train.csv.gz", nrows=1)
    assert (
        _st(t, "patient00001/study1", "Support Devices", "chexpert_labeler")
        == 2
        == 2 * raw["Support Devices"][0]
    )
