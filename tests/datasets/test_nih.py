"""Tests of cxreval.datasets.nih (ChestX-ray14 Data_Entry labels and metadata)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from cxreval.datasets.nih import SOURCE, finding_matrix, load_labels, load_metadata
from cxreval.exceptions import SchemaError
from cxreval.findings import CHESTXRAY14
from cxreval.labels import validate_label_table

HEADER = "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position\n"
ROWS = (
    "00000001_000.png,Cardiomegaly,0,00001,57,M,PA\n"
    "00000001_001.png,Cardiomegaly|Pleural_Thickening,1,00001,58,M,PA\n"
    "00000002_000.png,No Finding,0,00002,81,F,AP\n"
    "00000100_000.png,Infiltration|Hernia|Effusion,0,100,40,F,AP\n"
)


def _write(tmp_path, text, name="Data_Entry.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_small_file_labels_and_metadata(tmp_path):
    p = _write(tmp_path, HEADER + ROWS)
    res = load_labels(p)
    t = res.table
    assert len(t) == 4 * 14 and res.report.n_read == res.report.n_kept == 4 and res.report.n_dropped == 0
    assert (t["source"] == SOURCE).all() and SOURCE == "nih_textmined"
    pos = t[t.state == 2].groupby("study_id")["finding"].apply(sorted).to_dict()
    assert pos == {
        "00000001_000.png": ["Cardiomegaly"],
        "00000001_001.png": ["Cardiomegaly", "Pleural Thickening"],
        "00000100_000.png": ["Effusion", "Hernia", "Infiltration"],
    }
    assert (t[t.study_id == "00000002_000.png"]["state"] == 0).all()
    assert set(t["state"].unique()) == {0, 2}  # no uncertain / not mentioned in NIH labels
    assert t.groupby("study_id")["patient_id"].first().tolist() == ["1", "1", "2", "100"]
    # the table is a valid long label table
    pd.testing.assert_frame_equal(validate_label_table(t), t, check_dtype=False)
    meta = load_metadata(p)
    assert meta["study_id"].tolist()[0] == "00000001_000.png" and meta["view"].tolist() == [
        "PA",
        "PA",
        "AP",
        "AP",
    ]
    assert meta["age"].tolist() == [57, 58, 81, 40] and meta["sex"].tolist() == ["M", "M", "F", "F"]
    assert meta["follow_up"].tolist() == [0, 1, 0, 0]
    assert meta["age_band"].tolist() == ["40-59", "40-59", "80+", "40-59"]


def test_finding_matrix_against_string_membership():
    s = pd.Series(["Mass|Nodule", "No Finding", "Infiltrate", "Hernia"])
    m = finding_matrix(s)
    assert m.columns.tolist() == list(CHESTXRAY14)
    assert m.sum(axis=1).tolist() == [2, 0, 1, 1] and m.loc[2, "Infiltration"]


def test_unknown_label_names_row(tmp_path):
    p = _write(tmp_path, HEADER + ROWS + "00000003_000.png,Cardiomegaly|Pneumonitis,0,3,1,M,PA\n")
    with pytest.raises(
        SchemaError,
        match=rf"Unknown finding name 'Pneumonitis' in file '{re.escape(str(p))}', "
        r"column 'Finding Labels', row 4",
    ):
        load_labels(p)


def test_non_chestxray14_finding(tmp_path):
    p = _write(tmp_path, HEADER + "00000003_000.png,Fracture,0,3,1,M,PA\n")
    with pytest.raises(
        SchemaError,
        match=r"Label 'Fracture' in file .*column 'Finding Labels', row 0 is not a "
        r"ChestX-ray14 finding",
    ):
        load_labels(p)


def test_missing_values_columns_and_duplicates(tmp_path):
    p = _write(tmp_path, HEADER + "00000003_000.png,Mass,0,,1,M,PA\n")
    with pytest.raises(
        SchemaError, match=rf"Missing value in file '{re.escape(str(p))}', row 0, column 'Patient ID'"
    ):
        load_labels(p)
    p = _write(tmp_path, "Image Index,Finding Labels,Patient ID\na.png,Mass,1\n")
    with pytest.raises(SchemaError, match=r"is missing required column\(s\) \['View Position'\]"):
        load_metadata(p)
    p = _write(tmp_path, HEADER + ROWS + ROWS.splitlines()[1] + "\n")
    with pytest.raises(
        SchemaError, match=r"Duplicate image '00000001_001.png' in file .*column 'Image Index'"
    ):
        load_labels(p)


@pytest.mark.slow
def test_real_data_entry_against_independent_count(metadata_dir):
    path = metadata_dir / "Data_Entry_2017_v2020.csv.gz"
    res = load_labels(path)
    t = res.table
    assert len(t) == 112_120 * 14 and t["patient_id"].nunique() == 30_805
    de = pd.read_csv(path)
    ex = de["Finding Labels"].str.split("|").explode().replace({"Pleural_Thickening": "Pleural Thickening"})
    expect = ex[ex != "No Finding"].value_counts()
    got = t[t.state == 2]["finding"].value_counts()
    pd.testing.assert_series_equal(got.sort_index(), expect.sort_index(), check_names=False)
    # patient ids are the Data_Entry ids as text
    meta = load_metadata(path)
    assert np.array_equal(meta["patient_id"].astype(int).to_numpy(), de["Patient ID"].to_numpy())
