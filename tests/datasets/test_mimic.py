"""MIMIC-CXR-JPG files in their published formats (built by tests/_factories.write_mimic_folder): state codes, ids,
views, the official split and its leakage audit, the radiologist test set, the missing-file messages, and the
exported labels through `cxreval agree` and `cxreval rank`."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets import load_dataset
from cxreval.datasets.audit import audit_mimic_cxr
from cxreval.datasets.mimic import load_labels, load_metadata, load_split
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError, UnknownNameError

from .._factories import MIMIC_IMAGES, MIMIC_OBSERVATIONS, write_mimic_folder


@pytest.fixture()
def mimic(tmp_path):
    return write_mimic_folder(tmp_path / "mimic-cxr-jpg")


def _state(table, study, finding, source):
    row = table[(table.study_id == study) & (table.finding == finding) & (table.source == source)]
    assert len(row) == 1, (study, finding, source)
    return int(row["state"].iloc[0])


def test_files_are_gzipped_csv_with_the_published_headers(mimic):
    with gzip.open(mimic / "mimic-cxr-2.0.0-chexpert.csv.gz", "rt") as f:
        assert f.readline().strip() == ",".join(["subject_id", "study_id", *MIMIC_OBSERVATIONS])
    with gzip.open(mimic / "mimic-cxr-2.0.0-split.csv.gz", "rt") as f:
        assert f.readline().strip() == "dicom_id,study_id,subject_id,split"
    with gzip.open(mimic / "mimic-cxr-2.0.0-metadata.csv.gz", "rt") as f:
        assert (
            f.readline()
            .strip()
            .startswith(
                "dicom_id,subject_id,study_id,PerformedProcedureStepDescription,"
                "ViewPosition,Rows,Columns,StudyDate,StudyTime"
            )
        )


def test_state_codes_ids_and_the_two_labellers(mimic):
    res = load_labels(mimic)
    t = res.table
    assert list(t.columns) == ["study_id", "patient_id", "finding", "source", "state"]
    assert sorted(t["source"].unique()) == ["mimic_chexpert", "mimic_negbio", "mimic_radiologist"]
    # 1.0 positive (2), 0.0 negative (0), -1.0 uncertain (1), blank not mentioned (-1)
    assert _state(t, "50414267", "Effusion", "mimic_chexpert") == 2
    assert _state(t, "50414267", "Pneumonia", "mimic_chexpert") == 1
    assert _state(t, "50414267", "Pneumonia", "mimic_negbio") == 0
    assert _state(t, "50414267", "Cardiomegaly", "mimic_chexpert") == 0
    assert _state(t, "50414267", "Cardiomegaly", "mimic_negbio") == -1
    assert _state(t, "57375967", "Edema", "mimic_negbio") == 1
    # patient = subject_id, study = study_id, as the numbers
    pid = t.drop_duplicates("study_id").set_index("study_id")["patient_id"].to_dict()
    assert pid == {s: p for _, s, p, _, _ in MIMIC_IMAGES}
    per = t.groupby("source")["study_id"].nunique().to_dict()
    assert per == {"mimic_chexpert": 5, "mimic_negbio": 5, "mimic_radiologist": 2}
    assert set(t["finding"]) == {
        "No Finding",
        "Enlarged Cardiomediastinum",
        "Cardiomegaly",
        "Lung Opacity",
        "Lung Lesion",
        "Edema",
        "Consolidation",
        "Pneumonia",
        "Atelectasis",
        "Pneumothorax",
        "Effusion",
        "Pleural Other",
        "Fracture",
        "Support Devices",
    }
    assert res.report.n_read == 12 and res.report.n_dropped == 0


def test_radiologist_test_set_patients_and_airspace_opacity(mimic):
    res = load_labels(mimic, sources=["mimic_radiologist"])
    t = res.table
    assert set(t["study_id"]) == {"55555555", "56666666"}
    assert set(t["patient_id"]) == {"11000011"}  # looked up: the file has no subject_id
    assert _state(t, "56666666", "Lung Opacity", "mimic_radiologist") == 2
    assert _state(t, "56666666", "Atelectasis", "mimic_radiologist") == 0
    assert _state(t, "55555555", "Lung Opacity", "mimic_radiologist") == -1
    assert any("Airspace Opacity -> Lung Opacity" in n for n in res.report.notes)


def test_radiologist_patients_without_the_split_file(mimic):
    (mimic / "mimic-cxr-2.0.0-split.csv.gz").unlink()
    t = load_labels(mimic, sources=["mimic_chexpert", "mimic_radiologist"]).table
    assert set(t.loc[t.source == "mimic_radiologist", "patient_id"]) == {"11000011"}  # from the labeller file
    alone = load_labels(mimic, sources=["mimic_radiologist"]).table
    assert set(alone["patient_id"]) == {"11000011"} and set(alone["source"]) == {"mimic_radiologist"}
    with pytest.raises(DataUnavailableError, match="no 'mimic-cxr-2.0.0-split.csv.gz'"):
        load_labels(mimic, split="test")


def test_radiologist_study_without_a_patient_is_dropped_with_its_reason(mimic):
    f = mimic / "mimic-cxr-2.1.0-test-set-labeled.csv"
    df = pd.read_csv(f, dtype=str).astype(object)
    df.loc[len(df)] = {"study_id": "59999999", "No Finding": "1.0"}
    df.to_csv(f, index=False)
    res = load_labels(mimic, sources=["mimic_radiologist"])
    assert "59999999" not in set(res.table["study_id"])
    assert res.report.dropped["value"].tolist() == ["mimic_radiologist:59999999"]
    assert "no subject_id" in res.report.dropped["reason"].iloc[0]


def test_views_keep_studies_with_such_an_image(mimic):
    res = load_labels(mimic, sources=["mimic_chexpert"], views="PA,ap")
    assert set(res.table["study_id"]) == {"50414267", "53189527", "57375967", "56666666"}
    d = res.report.dropped
    assert (
        d["value"].tolist() == ["mimic_chexpert:55555555"]
        and "ViewPosition in ['PA', 'AP']" in d["reason"].iloc[0]
    )
    lateral = load_labels(mimic, sources=["mimic_chexpert"], views=["LATERAL"]).table
    assert set(lateral["study_id"]) == {"50414267", "57375967"}


def test_official_split_part(mimic):
    t = load_labels(mimic, sources=["mimic_chexpert", "mimic_negbio"], split="test").table
    assert set(t["study_id"]) == {"55555555", "56666666"}
    sp = load_split(mimic).table
    assert list(sp.columns) == ["dicom_id", "study_id", "patient_id", "split"]
    assert sp.groupby("split")["dicom_id"].size().to_dict() == {"test": 2, "train": 3, "validate": 2}
    meta = load_metadata(mimic).table
    assert meta["view"].tolist() == [v for *_, v in MIMIC_IMAGES]
    with pytest.raises(InvalidParameterError, match="'split' parameter .* 'validate'"):
        load_labels(mimic, split="val")


def test_bad_values_and_missing_files_name_the_file(mimic, tmp_path):
    with pytest.raises(UnknownNameError, match="mimic_negbio"):
        load_labels(mimic, sources=["negbio"])
    (mimic / "mimic-cxr-2.1.0-test-set-labeled.csv").unlink()
    assert "mimic_radiologist" not in set(load_labels(mimic).table["source"])
    with pytest.raises(DataUnavailableError, match="mimic-cxr-2.1.0-test-set-labeled.csv.*2.1.0"):
        load_labels(mimic, sources=["mimic_radiologist"])
    (mimic / "mimic-cxr-2.0.0-metadata.csv.gz").unlink()
    with pytest.raises(DataUnavailableError, match="no 'mimic-cxr-2.0.0-metadata.csv.gz'.*place it in"):
        load_labels(mimic, views=("PA",))
    f = mimic / "mimic-cxr-2.0.0-negbio.csv.gz"
    df = pd.read_csv(f, dtype=str)
    df.loc[2, "Edema"] = "2.0"
    df.to_csv(f, index=False)
    with pytest.raises(
        SchemaError, match=r"Label 2.0 outside the domain in file .*negbio.*row 2, column 'Edema'"
    ):
        load_labels(mimic)
    df.drop(columns=["Edema"]).to_csv(f, index=False)
    with pytest.raises(SchemaError, match=r"lacks the observation columns \['Edema'\]"):
        load_labels(mimic)
    f.unlink()
    (mimic / "mimic-cxr-2.0.0-negbio.csv").write_text("x\n")  # misnamed: not the published name
    (mimic / "mimic-cxr-2.0.0-negbio.csv").rename(mimic / "negbio.csv")
    with pytest.raises(DataUnavailableError, match="no 'mimic-cxr-2.0.0-negbio.csv.gz'"):
        load_labels(mimic)


def test_unzipped_csv_is_read_too(mimic):
    for name in ("mimic-cxr-2.0.0-chexpert.csv.gz", "mimic-cxr-2.0.0-negbio.csv.gz"):
        (mimic / name[:-3]).write_bytes(gzip.decompress((mimic / name).read_bytes()))
        (mimic / name).unlink()
    a = load_labels(mimic, sources=["mimic_chexpert", "mimic_negbio"]).table
    assert len(a) == 2 * 5 * 14


def test_audit_official_split_does_not_leak_and_a_moved_image_does(mimic, tmp_path):
    res = audit_mimic_cxr(split_dir=mimic)
    assert (res.n_images, res.n_patients) == (7, 3)
    assert res.split is not None and res.split.n_shared_patients == 0 and not res.split.leaks
    sizes = res.split.sizes.set_index("split")
    assert sizes.loc["train", "n_studies"] == 2 and sizes.loc["test", "n_patients"] == 1
    views = res.views.set_index("view")["n_images"].to_dict()
    assert views == {"AP": 2, "LATERAL": 2, "LL": 1, "PA": 2}
    eff = res.findings.set_index("finding").loc["Effusion"]
    assert (eff["n_images"], eff["n_patients"]) == (2, 1)  # both images of 50414267
    assert "does not leak" in res.summary()
    # move one image of patient 10000032 (study 53189527) into the test part: patient and no study leak
    f = mimic / "mimic-cxr-2.0.0-split.csv.gz"
    sp = pd.read_csv(f, dtype=str)
    sp.loc[sp.study_id == "53189527", "split"] = "test"
    sp.to_csv(f, index=False)
    leak = audit_mimic_cxr(split_dir=mimic).split
    assert leak.n_shared_patients == 1 and leak.shared_patients["patient_id"].tolist() == ["10000032"]
    assert leak.shared_patients["splits"].tolist() == ["test|train"]
    # one image of a two-image study in another part: the study itself is in two parts
    sp.loc[sp.dicom_id == MIMIC_IMAGES[4][0], "split"] = "train"
    sp.to_csv(f, index=False)
    leak = audit_mimic_cxr(split_dir=mimic).split
    assert leak.shared_studies["study_id"].tolist() == ["57375967"]


def test_cli_audit_and_missing_split(mimic, tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(["data", "audit", "mimic_cxr", "--split-dir", str(mimic), "-o", str(out)]) == 0
    d = json.loads((out / "audit.json").read_text())
    assert (
        d["dataset"] == "mimic_cxr" and d["split"]["n_shared_patients"] == 0 and d["split"]["leaks"] is False
    )
    assert (out / "split_sizes.csv").is_file()
    capsys.readouterr()
    (mimic / "mimic-cxr-2.0.0-split.csv.gz").unlink()
    assert main(["data", "audit", "mimic_cxr", "--split-dir", str(mimic)]) == 2
    err = capsys.readouterr().err
    assert "mimic-cxr-2.0.0-split.csv.gz" in err and "place it in" in err
    assert main(["data", "audit", "mimic_cxr"]) == 2
    assert "--split-dir" in capsys.readouterr().err


def test_registry_and_cli_export_with_views(mimic, tmp_path, capsys):
    res = load_dataset("mimic_cxr", mimic, sources=("mimic_chexpert",))
    assert set(res.table["source"]) == {"mimic_chexpert"}
    out = tmp_path / "labels"
    assert (
        main(["data", "export", "mimic_cxr", "--path", str(mimic), "--views", "PA,AP", "-o", str(out)]) == 0
    )
    lab = pd.read_csv(out / "labels.csv", dtype=str)
    assert "55555555" not in set(lab["study_id"]) and set(lab["state"]) <= {
        "positive",
        "negative",
        "uncertain",
        "not_mentioned",
    }
    dropped = pd.read_csv(out / "dropped.csv", dtype=str)
    assert sorted(dropped["value"]) == [
        "mimic_chexpert:55555555",
        "mimic_negbio:55555555",
        "mimic_radiologist:55555555",
    ]
    capsys.readouterr()
    assert main(["data", "export", "chestxray14", "--views", "PA", "-o", str(tmp_path / "x")]) == 2
    assert "--views applies to mimic_cxr, chexpert, chexpert_train only" in capsys.readouterr().err
    assert main(["data", "export", "mimic_cxr", "-o", str(tmp_path / "y")]) == 2
    assert "--path" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["data", "export", "mimic_cxr", "--path", str(empty), "-o", str(tmp_path / "z")]) == 2
    assert "mimic-cxr-2.0.0-chexpert.csv.gz" in capsys.readouterr().err


def test_agree_and_rank_on_the_exported_labels_with_the_two_labellers(mimic, tmp_path):
    out = tmp_path / "labels"
    assert main(["data", "export", "mimic_cxr", "--path", str(mimic), "-o", str(out)]) == 0
    agree = tmp_path / "agree"
    assert (
        main(
            [
                "agree",
                "--labels",
                str(out / "labels.csv"),
                "--pairs",
                "mimic_chexpert:mimic_negbio",
                "-o",
                str(agree),
            ]
        )
        == 0
    )
    ag = pd.read_csv(agree / "agreement.csv").set_index("finding")
    assert set(ag["pair"]) == {"mimic_chexpert:mimic_negbio"} and ag.loc["Effusion", "n"] == 5
    assert ag.loc["Effusion", "f1_w"] == 1.0 and ag.loc["Pneumonia", "f1_w"] < 1.0  # uncertain vs negative
    # scores of three models on the five studies; the two labellers as references
    rng = np.random.default_rng(0)
    studies = sorted({s for _, s, *_ in MIMIC_IMAGES})
    preds = pd.DataFrame(
        [
            {"study_id": s, "model": m, "finding": f, "score": float(rng.random())}
            for s in studies
            for m in ("m1", "m2", "m3")
            for f in ("Effusion", "No Finding")
        ]
    )
    preds.to_csv(tmp_path / "preds.csv", index=False)
    rank = tmp_path / "rank"
    assert (
        main(
            [
                "rank",
                "-p",
                str(tmp_path / "preds.csv"),
                "-l",
                str(out / "labels.csv"),
                "--references",
                "mimic_chexpert,mimic_negbio",
                "--n-resamples",
                "20",
                "--seed",
                "0",
                "-o",
                str(rank),
            ]
        )
        == 0
    )
    rk = pd.read_csv(rank / "rankings.csv")
    assert set(rk["reference"]) == {"mimic_chexpert", "mimic_negbio"}
    # Effusion: positive on 50414267 under both labellers, not mentioned (negative) on the other studies
    from sklearn.metrics import roc_auc_score

    eff = preds[preds.finding == "Effusion"]
    for m, g in eff.groupby("model"):
        want = roc_auc_score((g["study_id"] == "50414267").astype(int), g["score"])
        got = rk[(rk.finding == "Effusion") & (rk.model == m)].set_index("reference")["auc"]
        assert got["mimic_chexpert"] == pytest.approx(want) and got["mimic_negbio"] == pytest.approx(want)
    assert (rank / "rank_correlation.csv").is_file()
