"""Tests of cxreval.labels: long/wide round trips, binarisation policies, validation."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import SchemaError
from cxreval.labels import read_labels, read_predictions, read_wide_labels, validate_label_table, write_labels
from cxreval.labels._long import label_matrix, write_predictions
from cxreval.labels._wide import read_wide_predictions, to_wide, write_wide_labels
from cxreval.schema import LabelState, binarize
from cxreval.schema._states import parse_states, state_names

SMALL_WIDE = (
    "Study,Sex,No Finding,Cardiomegaly,Pleural Effusion,Edema,Lung Opacity\n"
    "CheXpert-v1.0/valid/patient00001/study1,Female,,1.0,0.0,-1.0,\n"
    "CheXpert-v1.0/valid/patient00001/study2,Female,1.0,0.0,,,0.0\n"
    "CheXpert-v1.0/valid/patient00007/study1,Male,,-1.0,1.0,1.0,1.0\n"
)


def _long() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "study_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
            "patient_id": ["p1", "p1", "p1", "p1", "p2", "p2"],
            "finding": ["Effusion", "Edema"] * 3,
            "source": ["CR"] * 6,
            "state": ["positive", "uncertain", "negative", "not_mentioned", None, "positive"],
        }
    )


def test_small_wide_csv_round_trips_byte_for_byte(tmp_path):
    src = tmp_path / "small.csv"
    src.write_text(SMALL_WIDE)
    res = read_wide_labels(src, source="chexpert")
    t = res.table
    assert len(t) == 3 * 5 and res.report.n_read == 3 and res.report.n_kept == 3
    assert res.report.n_dropped == 0
    assert "renamed findings: Pleural Effusion -> Effusion" in res.report.notes
    assert any("Sex" in n for n in res.report.notes)
    # study 1: Cardiomegaly 1.0 -> positive, Effusion 0.0 -> negative, Edema -1 -> uncertain, blank -> not mentioned
    s1 = t[t.study_id == "CheXpert-v1.0/valid/patient00001/study1"].set_index("finding")["state"]
    assert s1["Cardiomegaly"] == LabelState.POS and s1["Effusion"] == LabelState.NEG
    assert s1["Edema"] == LabelState.UNC and s1["Lung Opacity"] == LabelState.NOT_MENTIONED
    assert set(t["patient_id"]) == {"patient00001", "patient00007"}
    out = write_wide_labels(t, tmp_path / "back.csv", layout=res.layout)
    assert out.read_text() == SMALL_WIDE


def test_chexpert_test_labeler_round_trips(shared_data, tmp_path):
    path = shared_data / "chexpert_test" / "labeler" / "chexpert_labels.csv"
    res = read_wide_labels(path, source="chexpert_labeler")
    assert res.table["study_id"].nunique() == 500 and res.table["patient_id"].nunique() == 500
    assert len(res.table) == 500 * 14
    pd.testing.assert_frame_equal(to_wide(res.table, layout=res.layout), pd.read_csv(path))
    back = write_wide_labels(res.table, tmp_path / "back.csv", layout=res.layout)
    assert back.read_bytes() == path.read_bytes()


@pytest.mark.slow
def test_chexpert_train_metadata_round_trips_with_extra_columns(metadata_dir):
    path = metadata_dir / "chexpert_train.csv.gz"
    res = read_wide_labels(path, source="chexpert", id_column="Path")
    assert res.report.n_read == res.report.n_kept == 223_414
    assert res.layout.extra.columns.tolist() == ["Path", "Sex", "Age", "Frontal/Lateral", "AP/PA"]
    buf = io.StringIO()
    to_wide(res.table, layout=res.layout).to_csv(buf, index=False)
    with gzip.open(path, "rt") as fh:
        assert buf.getvalue() == fh.read()


def test_long_table_round_trips_through_wide(tmp_path):
    src = tmp_path / "small.csv"
    src.write_text(SMALL_WIDE)
    res1 = read_wide_labels(src, source="chexpert")
    long1 = res1.table
    # the long table, written and read back, is unchanged and rebuilds the same wide frame
    for suffix in (".csv", ".parquet"):
        p = write_labels(long1, tmp_path / f"long{suffix}")
        long2 = read_labels(p).table
        pd.testing.assert_frame_equal(long2, long1.reset_index(drop=True), check_dtype=False)
        assert long2["state"].dtype == "Int8"
        wide = to_wide(long2, finding_columns=res1.layout.finding_columns, extra=res1.layout.extra)
        buf = io.StringIO()
        wide.to_csv(buf, index=False)
        assert buf.getvalue() == SMALL_WIDE


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_long_round_trip_keeps_missing_states_and_names(tmp_path, suffix):
    t = validate_label_table(_long())
    p = write_labels(t, tmp_path / f"labels{suffix}")
    back = read_labels(p)  # a missing label is written 'missing', never a blank
    assert back.report.n_read == back.report.n_kept == 6
    pd.testing.assert_frame_equal(back.table, t, check_dtype=False)
    assert back.table["state"].isna().sum() == 1
    if suffix == ".csv":
        text = p.read_text().splitlines()
        assert text[0] == "study_id,patient_id,finding,source,state"
        assert (
            text[2].endswith(",uncertain")
            and text[4].endswith(",not_mentioned")
            and text[5].endswith(",missing")
        )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_blank_state_cell_is_refused_unless_read_as_missing(tmp_path, suffix):
    t = _long()
    t["state"] = t["state"].astype(object)
    t.loc[4, "state"] = "" if suffix == ".csv" else None
    p = tmp_path / f"labels{suffix}"
    (t.to_parquet if suffix == ".parquet" else t.to_csv)(p, index=False)
    with pytest.raises(
        SchemaError, match=r"Blank state in file .*labels.*, row 4, column 'state'.*blank_state='missing'"
    ):
        read_labels(p)
    back = read_labels(p, blank_state="missing")
    assert back.table["state"].isna().tolist() == [False, False, False, False, True, False]
    assert (
        read_labels(p, state_encoding="cxreval").table["state"].isna().sum() == 1
    )  # blank = missing (cxreval codes)


def test_validate_canonicalises_and_casts():
    df = _long()
    df["finding"] = ["Pleural Effusion", "edema"] * 3
    df["patient_id"] = [1, 1, 1, 1, 2, 2]
    t = validate_label_table(df)
    assert set(t["finding"]) == {"Effusion", "Edema"}
    assert t["patient_id"].tolist() == ["1", "1", "1", "1", "2", "2"]
    assert t["state"].tolist()[:4] == [2, 1, 0, -1]


def test_float_patient_ids_with_missing_lose_the_dot_zero():
    df = _long()
    df["patient_id"] = [1.0, 1.0, 1.0, 1.0, np.nan, np.nan]
    t = validate_label_table(df, require_patient=False)
    assert t["patient_id"].iloc[0] == "1" and t["patient_id"].isna().sum() == 2


@pytest.mark.parametrize(
    "policy, expected",
    [
        ("exclude", [1.0, np.nan, 0.0, 0.0, np.nan, 1.0]),
        ("zeros", [1.0, 0.0, 0.0, 0.0, np.nan, 1.0]),
        ("ones", [1.0, 1.0, 0.0, 0.0, np.nan, 1.0]),
    ],
)
def test_binarisation_policies(policy, expected):
    t = validate_label_table(_long())
    np.testing.assert_array_equal(binarize(t["state"], policy=policy), expected)
    # same answer from state names and from integer codes
    np.testing.assert_array_equal(binarize(_long()["state"], policy=policy), expected)
    np.testing.assert_array_equal(binarize([2, 1, 0, -1, None, 2], policy=policy), expected)


def test_binarise_not_mentioned_exclude():
    y = binarize(["not_mentioned", "positive"], not_mentioned="exclude")
    np.testing.assert_array_equal(y, [np.nan, 1.0])


def test_binarise_default_is_exclude():
    np.testing.assert_array_equal(binarize(["uncertain"]), [np.nan])


def test_parse_states_and_names_are_inverse():
    names = pd.Series(["negative", "uncertain", "positive", "not_mentioned", None])
    codes = parse_states(names)
    assert codes.tolist()[:4] == [0, 1, 2, -1] and codes.isna().tolist() == [False] * 4 + [True]
    assert state_names(codes).tolist() == ["negative", "uncertain", "positive", "not_mentioned", "missing"]
    assert parse_states([" Positive ", "", np.nan, 1.0]).tolist()[0] == 2


def test_label_matrix_pivots_one_source():
    t = validate_label_table(_long())
    m = label_matrix(t, source="CR", findings=["Edema", "Effusion", "Atelectasis"], study_ids=["s3", "s1"])
    assert m.loc["s1", "Effusion"] == 2 and pd.isna(m.loc["s3", "Effusion"])
    assert m["Atelectasis"].isna().all()


def test_predictions_long_and_wide(tmp_path):
    wide = pd.DataFrame(
        {
            "Image Index": ["a.png", "b.png"],
            "prob_Atelectasis": [0.1, 0.9],
            "prob_Pleural_Thickening": [0.3, 0.2],
            "fold": [1, 2],
        }
    )
    wide.to_csv(tmp_path / "w.csv", index=False)
    res = read_wide_predictions(tmp_path / "w.csv", model="m1", prefix="prob_")
    assert sorted(res.table["finding"].unique()) == ["Atelectasis", "Pleural Thickening"]
    assert res.report.notes == ("ignored non-finding columns: ['fold']",)
    for suffix in (".csv", ".parquet"):
        p = write_predictions(res.table, tmp_path / f"p{suffix}")
        pd.testing.assert_frame_equal(read_predictions(p).table, res.table, check_dtype=False)
