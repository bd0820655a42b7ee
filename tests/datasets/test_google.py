"""Tests of cxreval.datasets.google (Google 2019 expert labels for NIH images)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from cxreval.datasets.google import SOURCE, load_labels, map_nih_to_google
from cxreval.exceptions import SchemaError
from cxreval.finding_maps import NIH_TO_GOOGLE
from cxreval.findings import GOOGLE_NIH

HEADER = "Image Index,Patient ID,Fracture,Pneumothorax,Airspace opacity,Nodule or mass,Set Id\n"


def _write(tmp_path, text):
    p = tmp_path / "google.csv"
    p.write_text(text)
    return p


def test_small_file(tmp_path):
    p = _write(
        tmp_path,
        HEADER + "00000013_008.png,013,NO,NO,YES,NO,test\n"
        "00000013_026.png,013,NO,yes,NO,NO,test\n"
        "00000020_000.png,20,YES,NO,NO,YES,val\n",
    )
    res = load_labels(p)
    t = res.table
    assert len(t) == 12 and (t["source"] == SOURCE).all() and SOURCE == "google_expert"
    assert list(pd.unique(t["finding"])) == list(GOOGLE_NIH)
    pos = t[t.state == 2][["study_id", "finding"]].values.tolist()
    assert pos == [
        ["00000013_008.png", "Airspace Opacity"],
        ["00000013_026.png", "Pneumothorax"],
        ["00000020_000.png", "Fracture"],
        ["00000020_000.png", "Nodule or Mass"],
    ]
    assert set(t["state"].unique()) == {0, 2}
    assert t.drop_duplicates("study_id")["patient_id"].tolist() == ["13", "13", "20"]
    assert t.drop_duplicates("study_id").set_index("study_id")["split"].to_dict() == {
        "00000013_008.png": "test",
        "00000013_026.png": "test",
        "00000020_000.png": "val",
    }
    assert not t.attrs  # no metadata hidden in DataFrame.attrs


def test_bad_value_names_file_row_column(tmp_path):
    p = _write(tmp_path, HEADER + "a.png,1,NO,NO,YES,NO,test\nb.png,1,NO,MAYBE,NO,NO,test\n")
    with pytest.raises(
        SchemaError,
        match=rf"Label 'MAYBE' outside the domain in file '{re.escape(str(p))}', row 1, "
        r"column 'Pneumothorax'; expected YES or NO",
    ):
        load_labels(p)


def test_missing_column(tmp_path):
    p = _write(tmp_path, "Image Index,Patient ID,Fracture\na.png,1,NO\n")
    with pytest.raises(SchemaError, match=r"is missing required column\(s\) \['Set Id', 'Pneumothorax', "):
        load_labels(p)


def test_map_nih_to_google_is_any_of_sources():
    nih = pd.DataFrame(
        {
            "study_id": ["a"] * 4 + ["b"] * 4,
            "patient_id": ["1"] * 8,
            "finding": ["Nodule", "Mass", "Pneumothorax", "Consolidation"] * 2,
            "source": "nih_textmined",
            "state": pd.array([0, 2, 0, 0, 0, 0, 2, 0], dtype="Int8"),
        }
    )
    # complete the airspace sources
    extra = pd.DataFrame(
        {
            "study_id": ["a", "a", "b", "b"],
            "patient_id": "1",
            "finding": ["Pneumonia", "Infiltration"] * 2,
            "source": "nih_textmined",
            "state": pd.array([0, 2, 0, 0], dtype="Int8"),
        }
    )
    out = map_nih_to_google(pd.concat([nih, extra], ignore_index=True))
    got = out.set_index(["study_id", "finding"])["state"].to_dict()
    assert got == {
        ("a", "Pneumothorax"): 0,
        ("b", "Pneumothorax"): 2,
        ("a", "Nodule or Mass"): 2,
        ("b", "Nodule or Mass"): 0,
        ("a", "Airspace Opacity"): 2,
        ("b", "Airspace Opacity"): 0,
    }
    assert not out.attrs and NIH_TO_GOOGLE.to_dict()["unmapped"] == ["Fracture"]
    assert "Fracture" not in set(out["finding"])
    with pytest.raises(
        SchemaError,
        match=r"Mapping 'nih_to_google' needs NIH finding\(s\) \['Pneumonia', "
        r"'Infiltration'\] absent from the label table",
    ):
        map_nih_to_google(nih)
    assert NIH_TO_GOOGLE.targets["Nodule or Mass"] == ("Nodule", "Mass")


def test_real_google_labels(metadata_dir):
    path = metadata_dir / "google2019_nih-chest-xray-labels.csv.gz"
    res = load_labels(path)
    raw = pd.read_csv(path)
    assert res.report.n_read == res.report.n_kept == len(raw) == 4376
    t = res.table
    for raw_name, canon in zip(
        ("Fracture", "Pneumothorax", "Airspace opacity", "Nodule or mass"), GOOGLE_NIH
    ):
        assert (
            t[(t.finding == canon) & (t.state == 2)]["study_id"].nunique() == (raw[raw_name] == "YES").sum()
        )
    split = t.drop_duplicates("study_id")["split"]
    assert split.value_counts().to_dict() == raw["Set Id"].value_counts().to_dict()
