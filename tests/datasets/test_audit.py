"""Tests of cxreval.datasets.audit and `cxreval data audit`."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets._bbox_list import count_boxes
from cxreval.datasets.audit import audit_chestxray14
from cxreval.exceptions import SchemaError
from cxreval.findings import CHESTXRAY14

DATA_ENTRY = (
    "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position\n"
    "00000001_000.png,Cardiomegaly,0,1,57,M,PA\n"
    "00000001_001.png,Cardiomegaly|Emphysema,1,1,58,M,PA\n"
    "00000002_000.png,No Finding,0,2,81,M,AP\n"
    "00000003_000.png,Hernia,0,3,77,F,PA\n"
    "00000003_001.png,Infiltration|Hernia,1,3,78,F,AP\n"
    "00000004_000.png,No Finding,0,4,40,F,PA\n"
)
BBOX = (
    "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
    "00000001_000.png,Cardiomegaly,10,20,30,40\n"
    "00000003_001.png,Infiltrate,1,2,3,4\n"
    "00000003_001.png,Infiltrate,5,6,7,8\n"
    "00000001_001.png,Cardiomegaly,1,1,5,5\n"
)


@pytest.fixture()
def small(tmp_path):
    de = tmp_path / "Data_Entry.csv"
    de.write_text(DATA_ENTRY)
    bb = tmp_path / "BBox.csv"
    bb.write_text(BBOX)
    splits = tmp_path / "splits"
    splits.mkdir()
    (splits / "train_val_list.txt").write_text("00000001_000.png\n00000002_000.png\n00000003_000.png\n")
    (splits / "test_list.txt").write_text("00000001_001.png\n00000004_000.png\n00000003_001.png\n")
    return de, bb, splits


def test_small_audit_hand_counts(small):
    de, bb, splits = small
    res = audit_chestxray14(path=de, bbox_path=bb, split_dir=splits)
    assert (res.n_images, res.n_patients) == (6, 4)
    f = res.findings.set_index("finding")
    assert f.loc["Cardiomegaly", ["n_images", "n_patients"]].tolist() == [2, 1]
    assert f.loc["Hernia", ["n_images", "n_patients"]].tolist() == [2, 1]
    assert f.loc["No Finding", ["n_images", "n_patients"]].tolist() == [2, 2]
    assert f.loc["Atelectasis", "n_images"] == 0 and len(f) == 15
    assert res.views.to_dict(orient="records") == [
        {"view": "AP", "n_images": 2, "n_patients": 2},
        {"view": "PA", "n_images": 4, "n_patients": 3},
    ]
    assert (res.n_boxes, res.n_boxed_images) == (4, 3)
    assert res.boxes.to_dict(orient="records") == [
        {"finding": "Cardiomegaly", "n_boxes": 2, "n_images": 2, "n_images_labelled": 2},
        {"finding": "Infiltration", "n_boxes": 2, "n_images": 1, "n_images_labelled": 1},
    ]
    s = res.split
    assert s.sizes.to_dict(orient="records") == [
        {"split": "test", "n_studies": 3, "n_patients": 3, "n_unknown": 0},
        {"split": "train_val", "n_studies": 3, "n_patients": 3, "n_unknown": 0},
    ]
    assert s.shared_patients["patient_id"].tolist() == ["1", "3"] and s.leaks


def test_save_writes_the_audit_files(small, tmp_path):
    de, bb, splits = small
    res = audit_chestxray14(path=de, bbox_path=bb, split_dir=splits)
    (tmp_path / "out").mkdir()
    written = res.save(tmp_path / "out")
    assert written["summary"].read_text() == res.summary()
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    for t in ("findings", "views", "boxes", "split_sizes", "split_pairs", "shared_patients"):
        assert f"{t}.csv" in names and f"{t}.parquet" in names
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "out" / f"{t}.parquet"), res.tables()[t], check_dtype=False
        )
    d = json.loads(written["audit"].read_text())
    assert d["n_images"] == 6 and d["split"]["n_shared_patients"] == 2 and d["boxes"]["n_boxes"] == 4
    summary = written["summary"].read_text()
    assert "- images: 6" in summary and "The split **leaks**" in summary


def test_audit_errors(small, tmp_path):
    de, bb, splits = small
    with pytest.raises(SchemaError, match="either split_dir or splits, not both"):
        audit_chestxray14(path=de, bbox_path=bb, split_dir=splits, splits=pd.DataFrame())
    bad = tmp_path / "bad_bbox.csv"
    bad.write_text("Image Index,Finding Label\na.png,Cardiomegaly\nb.png,Lung Opacity\n")
    with pytest.raises(
        SchemaError,
        match=rf"Box label 'Lung Opacity' in file '{re.escape(str(bad))}', row 1, column "
        r"'Finding Label' is not a ChestX-ray14 finding",
    ):
        count_boxes(bad)
    bad.write_text("Image Index,Finding Label\na.png,Nodul\n")
    with pytest.raises(
        SchemaError, match=r"Unknown finding name 'Nodul' in file .*row 0, column 'Finding Label'"
    ):
        count_boxes(bad)
    bad.write_text("Image,Finding Label\na.png,Nodule\n")
    with pytest.raises(SchemaError, match=r"missing required column\(s\) \['Image Index'\]"):
        count_boxes(bad)


def test_boxes_outside_data_entry_are_noted(small, tmp_path):
    de, _, _ = small
    bb = tmp_path / "bb2.csv"
    bb.write_text(BBOX + "99999999_000.png,Mass,1,1,2,2\n")
    res = audit_chestxray14(path=de, bbox_path=bb)
    assert res.n_boxes == 5 and any("1 boxes lie on images absent from Data_Entry" in n for n in res.notes)
    assert res.split is None and res.to_dict()["split"] is None


def test_cli_audit_small(small, tmp_path, capsys):
    de, bb, splits = small
    out = tmp_path / "cli"
    rc = main(
        [
            "data",
            "audit",
            "chestxray14",
            "--data-entry",
            str(de),
            "--bbox-list",
            str(bb),
            "--split-dir",
            str(splits),
            "--json",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((out / "audit.json").read_text())
    assert printed["n_patients"] == 4


def test_cli_audit_unknown_dataset(capsys):
    assert main(["data", "audit", "mimic"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "cxreval: error: cxreval data audit: unknown dataset 'mimic'; expected one of ['chestxray14', 'mimic_cxr']. Did you mean 'mimic_cxr'?"
    ]


# ---- acceptance on the real metadata ---------------------------------------------------------------


@pytest.fixture(scope="module")
def real(metadata_dir, shared_data):
    return audit_chestxray14(split_dir=shared_data / "chestxray14")


@pytest.mark.slow
def test_acceptance_counts_match_independent_pandas(real, metadata_dir):
    de = pd.read_csv(metadata_dir / "Data_Entry_2017_v2020.csv.gz")
    assert real.n_images == 112_120 == len(de)
    assert real.n_patients == 30_805 == de["Patient ID"].nunique()
    # independent count over `Finding Labels`
    ex = de.assign(label=de["Finding Labels"].str.split("|")).explode("label")
    ex["label"] = ex["label"].replace({"Pleural_Thickening": "Pleural Thickening"})
    img = ex.groupby("label")["Image Index"].nunique()
    pat = ex.groupby("label")["Patient ID"].nunique()
    got = real.findings.set_index("finding")
    assert set(got.index) == set(img.index)
    pd.testing.assert_series_equal(
        got["n_images"].sort_index(), img.sort_index(), check_names=False, check_dtype=False
    )
    pd.testing.assert_series_equal(
        got["n_patients"].sort_index(), pat.sort_index(), check_names=False, check_dtype=False
    )
    assert got.loc["No Finding", "n_images"] == (de["Finding Labels"] == "No Finding").sum()
    views = de["View Position"].value_counts().sort_index()
    assert real.views.set_index("view")["n_images"].to_dict() == views.to_dict()
    bb = pd.read_csv(metadata_dir / "BBox_List_2017.csv.gz")
    assert (real.n_boxes, real.n_boxed_images) == (984, 880) == (len(bb), bb["Image Index"].nunique())
    per = bb["Finding Label"].replace({"Infiltrate": "Infiltration"}).value_counts()
    assert real.boxes.set_index("finding")["n_boxes"].to_dict() == per.to_dict()


@pytest.mark.slow
def test_acceptance_official_split_and_random_image_split(real, metadata_dir):
    sizes = real.split.sizes.set_index("split")
    assert sizes.loc["official_train_val", "n_studies"] == 86_524
    assert sizes.loc["official_test", "n_studies"] == 25_596
    assert real.split.n_shared_patients == 0 and not real.split.leaks
    # a random image-level 80/20 split (drawn here, independently of cxreval.datasets.patient_split) leaks patients
    de = pd.read_csv(metadata_dir / "Data_Entry_2017_v2020.csv.gz")
    gen = np.random.default_rng(0)
    test = gen.random(len(de)) < 0.2
    split = pd.DataFrame({"study_id": de["Image Index"], "split": np.where(test, "test", "train")})
    leaky = audit_chestxray14(splits=split).split
    both = set(de.loc[test, "Patient ID"]) & set(de.loc[~test, "Patient ID"])
    assert leaky.leaks and leaky.n_shared_patients == len(both) > 5000


@pytest.mark.slow
def test_acceptance_cli_json(metadata_dir, shared_data, capsys):
    assert (
        main(["data", "audit", "chestxray14", "--json", "--split-dir", str(shared_data / "chestxray14")]) == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert (d["n_images"], d["n_patients"]) == (112_120, 30_805)
    assert (d["boxes"]["n_boxes"], d["boxes"]["n_boxed_images"]) == (984, 880)
    assert sorted(s["n_studies"] for s in d["split"]["sizes"]) == [25_596, 86_524]
    assert d["split"]["n_shared_patients"] == 0


@pytest.mark.parametrize("with_split", [True, False])
def test_dataset_audit_owns_its_files(small, tmp_path, with_split):
    """``save`` writes ``FILES`` (the split tables only with a split); ``summary()`` is ``summary.md``; the
    command writes exactly what ``save`` writes."""
    from cxreval.datasets.audit import DatasetAudit, audit_summary

    de, bb, splits = small
    res = audit_chestxray14(path=de, bbox_path=bb, split_dir=splits if with_split else None)
    (tmp_path / "lib").mkdir()
    paths = res.save(tmp_path / "lib")
    want = (
        dict(DatasetAudit.FILES)
        if with_split
        else {k: v for k, v in DatasetAudit.FILES.items() if k not in DatasetAudit.SPLIT_FILES}
    )
    assert {k: p.name for k, p in paths.items()} == {**want, "summary": "summary.md"}
    assert tuple(pd.read_csv(paths["findings"]).columns) == DatasetAudit.COLUMNS
    assert tuple(pd.read_csv(paths["views"]).columns) == DatasetAudit.VIEW_COLUMNS
    assert tuple(pd.read_csv(paths["boxes"]).columns) == DatasetAudit.BOX_COLUMNS
    assert json.loads(paths["audit"].read_text()) == json.loads(json.dumps(res.to_dict(), default=str))
    assert res.summary() == audit_summary(res)
    out = tmp_path / "cli"
    args = ["--split-dir", str(splits)] if with_split else []
    assert (
        main(
            [
                "data",
                "audit",
                "chestxray14",
                "--data-entry",
                str(de),
                "--bbox-list",
                str(bb),
                *args,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    for p in (tmp_path / "lib").iterdir():
        assert (out / p.name).read_bytes() == p.read_bytes(), p.name
    assert (out / "summary.md").read_text() == res.summary()


# ---- ChestX-ray8's published counts beside the audit -------------------------------------------------------------

# the ChestX-ray8 paper's counts as the ChestX-ray14 article ("Dataset Size") quotes them, typed here from that text
PAPER_TOTALS = {
    "images": 108_948,
    "patients": 32_717,
    "images with one of the 8 findings": 24_636,
    "images with none of the 8 findings": 84_312,
}
PAPER_TABLE_1 = {
    "Atelectasis": 5_789,
    "Cardiomegaly": 1_010,
    "Effusion": 6_331,
    "Infiltration": 10_317,
    "Mass": 6_046,
    "Nodule": 1_971,
    "Pneumonia": 1_062,
    "Pneumothorax": 2_793,
}


def test_published_counts_equal_the_paper():
    from cxreval.datasets.audit import CHESTXRAY8_PUBLISHED as P

    assert (P.n_images, P.n_patients, P.n_abnormal, P.n_normal) == tuple(PAPER_TOTALS.values())
    assert dict(P.images) == PAPER_TABLE_1
    assert sum(P.images.values()) == 35_319  # the article: "These counts sum to 35,319"
    assert P.n_abnormal + P.n_normal == P.n_images
    assert tuple(P.images) == CHESTXRAY14[:8]  # the eight findings, in ChestX-ray14's order


def test_published_counts_beside_the_small_audit(small, tmp_path, capsys):
    from cxreval.datasets._published import PUBLISHED_COLUMNS
    from cxreval.datasets.audit import DatasetAudit

    de, bb, _ = small
    res = audit_chestxray14(path=de, bbox_path=bb)
    pub = res.published
    assert tuple(pub.columns) == PUBLISHED_COLUMNS
    totals = pub[pub["finding"] == ""].set_index("quantity")
    assert totals["published"].to_dict() == PAPER_TOTALS
    # audited by hand from DATA_ENTRY: 6 images, 4 patients; 3 carry one of the eight (Cardiomegaly x2,
    # Infiltration|Hernia), 3 none of them (2 No Finding and the Hernia-only image)
    assert totals["audited"].to_dict() == {
        "images": 6,
        "patients": 4,
        "images with one of the 8 findings": 3,
        "images with none of the 8 findings": 3,
    }
    per = pub[pub["finding"] != ""].set_index("finding")
    assert per["published"].to_dict() == PAPER_TABLE_1
    assert per["audited"].to_dict() == {
        **dict.fromkeys(PAPER_TABLE_1, 0),
        "Cardiomegaly": 2,
        "Infiltration": 1,
    }
    assert set(per["published_in"]) == {
        "Wang et al., ChestX-ray8, CVPR 2017 (doi:10.1109/CVPR.2017.369), Table 1"
    }
    # the command: published_counts.csv, the JSON and summary.md (a table beside the audit's)
    out = tmp_path / "cli"
    assert (
        main(
            [
                "data",
                "audit",
                "chestxray14",
                "--data-entry",
                str(de),
                "--bbox-list",
                str(bb),
                "--json",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert {(r["quantity"], r["finding"]): r["published"] for r in printed["published"]}[
        ("images", "")
    ] == 108_948
    csv = pd.read_csv(out / DatasetAudit.FILES["published_counts"], keep_default_na=False)
    assert (
        csv["published"].tolist() == pub["published"].tolist()
        and csv["audited"].tolist() == pub["audited"].tolist()
    )
    summary = (out / "summary.md").read_text()
    assert "## As published: Wang et al., ChestX-ray8, CVPR 2017" in summary
    assert "108,948" in summary and "32,717" in summary and "10,317" in summary
    assert main(["data", "audit", "chestxray14", "--data-entry", str(de), "--bbox-list", str(bb)]) == 0
    assert "| images with one of the 8 findings |" in capsys.readouterr().out


@pytest.mark.slow
def test_published_counts_beside_the_real_audit(real, metadata_dir):
    per = real.published.set_index(["quantity", "finding"])
    assert per.loc[("images", ""), ["published", "audited"]].tolist() == [108_948, 112_120]
    assert per.loc[("patients", ""), ["published", "audited"]].tolist() == [32_717, 30_805]
    de = pd.read_csv(metadata_dir / "Data_Entry_2017_v2020.csv.gz")  # independent: pandas on the labels
    eight = de["Finding Labels"].str.split("|").map(lambda ls: bool(set(ls) & set(PAPER_TABLE_1)))
    assert per.loc[("images with one of the 8 findings", ""), "audited"] == int(eight.sum())
    assert per.loc[("images with none of the 8 findings", ""), "audited"] == int((~eight).sum())
    audited = real.findings.set_index("finding")["n_images"]
    for f, n in PAPER_TABLE_1.items():
        assert per.loc[("images", f), ["published", "audited"]].tolist() == [n, audited[f]]
