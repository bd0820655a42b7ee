"""Tests of the VinDr-CXR loader (cxreval.datasets.vindr)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.datasets.vindr import read_vindr, read_vindr_boxes
from cxreval.exceptions import DataUnavailableError, SchemaError
from cxreval.findings import VINDR

HEADER = "image_id,class_name,class_id,rad_id,x_min,y_min,x_max,y_max\n"
ROWS = (
    "a,No finding,14,R1,,,,\n"
    "a,No finding,14,R2,,,,\n"
    "a,Cardiomegaly,3,R10,10,20,110,220\n"
    "a,Cardiomegaly,3,R10,12,22,100,200\n"  # second box, same label
    "a,Nodule/Mass,8,R10,5,5,15,15\n"
    "b,Pleural effusion,10,R9,0,0,50,40\n"
    "b,Aortic enlargement,0,R8,1,1,1,9\n"  # zero width box
    "b,No finding,14,R3,,,,\n"
)


@pytest.fixture()
def small_csv(tmp_path):
    p = tmp_path / "vin.csv"
    p.write_text(HEADER + ROWS)
    return p


def test_labels_hand_worked(small_csv):
    res = read_vindr(small_csv)
    t = res.table
    assert list(t.columns) == ["study_id", "patient_id", "finding", "source", "state"]
    # 6 (image, reader) pairs x 15 findings
    assert len(t) == 6 * len(VINDR)
    assert (t["patient_id"] == t["study_id"]).all()
    pos = t[t["state"] == 2][["study_id", "source", "finding"]].apply(tuple, axis=1).tolist()
    assert sorted(pos) == sorted(
        [
            ("a", "R1", "No Finding"),
            ("a", "R2", "No Finding"),
            ("a", "R10", "Cardiomegaly"),
            ("a", "R10", "Nodule or Mass"),
            ("b", "R9", "Effusion"),
            ("b", "R8", "Aortic Enlargement"),
            ("b", "R3", "No Finding"),
        ]
    )
    assert set(t["state"].astype(int)) == {0, 2}
    # numeric reader order inside each image: R1, R2, R10
    assert list(pd.unique(t.loc[t.study_id == "a", "source"])) == ["R1", "R2", "R10"]
    assert res.report.n_read == 8 and res.report.n_kept == 8
    assert any("1 rows repeat" in n for n in res.report.notes)
    assert any("no patient identifiers" in n for n in res.report.notes)


def test_boxes_hand_worked(small_csv):
    res = read_vindr_boxes(small_csv)
    b = res.table
    assert len(b) == 4
    assert b.iloc[0].to_dict() == {
        "study_id": "a",
        "finding": "Cardiomegaly",
        "source": "R10",
        "x_min": 10.0,
        "y_min": 20.0,
        "x_max": 110.0,
        "y_max": 220.0,
    }
    assert res.report.reasons() == {"no finding (no box)": 3, "non-positive box width or height": 1}
    assert res.report.n_kept + res.report.n_dropped == res.report.n_read


def test_unknown_class(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text(HEADER + "a,Fracture,3,R1,1,1,2,2\n")
    with pytest.raises(SchemaError, match="'Fracture'.*not a VinDr-CXR finding"):
        read_vindr(p)


def test_bad_reader_and_missing(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text(HEADER + "a,No finding,14,rad1,,,,\n")
    with pytest.raises(SchemaError, match="Reader id 'rad1'.*row 0"):
        read_vindr(p)
    p.write_text(HEADER + "a,No finding,14,,,,,\n")
    with pytest.raises(SchemaError, match="Missing value.*row 0, column 'rad_id'"):
        read_vindr(p)
    p.write_text("image_id,class_name,rad_id\na,No finding,R1\n")
    with pytest.raises(SchemaError, match="missing required column"):
        read_vindr(p)
    with pytest.raises(DataUnavailableError, match="does not exist"):
        read_vindr(tmp_path / "absent.csv")


@pytest.mark.slow
def test_real_vindr(metadata_dir):
    res = read_vindr(metadata_dir / "vinbigdata-train.csv.gz")
    t = res.table
    assert t["study_id"].nunique() == 15_000
    assert len(t) == 15_000 * 3 * len(VINDR)
    per_image = t.groupby("study_id")["source"].nunique()
    assert (per_image == 3).all()
    assert sorted(t["source"].unique(), key=lambda r: int(r[1:])) == [f"R{i}" for i in range(1, 18)]
    n_images = t[t.finding == "No Finding"].groupby("source").size()
    assert n_images["R8"] == 6582 and n_images["R10"] == 6467 and n_images["R17"] == 776
    # caveat documented in the module: R1-R7 (almost) never mark a finding
    abn = t[(t.finding != "No Finding") & (t.state == 2)].groupby("source")["study_id"].nunique()
    for r in ("R1", "R3", "R4", "R5", "R6", "R7"):
        assert r not in abn.index
    assert abn.get("R2", 0) == 1
    assert abn["R8"] == abn["R9"] == abn["R10"] == 4146
    # one positive label per (image, reader, class) in the file
    raw = pd.read_csv(metadata_dir / "vinbigdata-train.csv.gz")
    assert int((t.state == 2).sum()) == len(raw.drop_duplicates(["image_id", "rad_id", "class_name"]))
    boxes = read_vindr_boxes(metadata_dir / "vinbigdata-train.csv.gz")
    assert len(boxes.table) == int((raw.class_name != "No finding").sum())
    assert np.all(boxes.table.x_max > boxes.table.x_min)
