"""The ratings table: checks naming the column, row and value; readers' labels read as binary ratings; the arrays
laid out per finding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import SchemaError
from cxreval.labels import validate_label_table
from cxreval.mrmc import labels_to_ratings
from cxreval.mrmc._ratings import read_ratings, reader_arrays, validate_ratings


def _ratings() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "reader": ["r1", "r1", "r2", "r2"],
            "modality": ["A", "B", "A", "B"],
            "study_id": ["s1", "s1", "s2", "s1"],
            "finding": ["Pleural Effusion"] * 4,
            "rating": [1, 5, 3, "4"],
        }
    )


def test_validate_ratings_standardises() -> None:
    out = validate_ratings(_ratings())
    assert list(out.columns) == ["reader", "modality", "study_id", "finding", "rating"]
    assert out["finding"].unique().tolist() == ["Effusion"]
    assert out["rating"].tolist() == [1.0, 5.0, 3.0, 4.0]


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("rating", "high", r"row 2: column 'rating' holds 'high'; expected a finite number"),
        ("rating", float("inf"), r"row 2: column 'rating' holds inf"),
        ("reader", "", r"row 2: column 'reader' is blank"),
    ],
)
def test_validate_ratings_refuses_bad_cells(column: str, value: object, match: str) -> None:
    t = _ratings().astype({column: object})
    t.loc[1, column] = value
    with pytest.raises(SchemaError, match=match):
        validate_ratings(t)


def test_validate_ratings_refuses_duplicates_and_missing_columns(tmp_path) -> None:
    t = pd.concat([_ratings(), _ratings().iloc[[0]]])
    with pytest.raises(
        SchemaError, match=r"reader 'r1' rated study 's1' for 'Effusion' under modality 'A' more"
    ):
        validate_ratings(t)
    path = tmp_path / "r.csv"
    _ratings().drop(columns="modality").to_csv(path, index=False)
    with pytest.raises(SchemaError, match=r"r\.csv is missing required column\(s\) \['modality'\]"):
        read_ratings(path)


def test_labels_to_ratings_binary_and_excluded() -> None:
    labels = validate_label_table(
        pd.DataFrame(
            {
                "study_id": ["s1", "s2", "s3", "s1"],
                "patient_id": ["p1", "p2", "p3", "p1"],
                "finding": ["Edema"] * 4,
                "source": ["bc4", "bc4", "bc4", "gt"],
                "state": ["positive", "negative", "uncertain", "positive"],
            }
        )
    )
    out = labels_to_ratings(labels, sources=["bc4"])
    assert out[["study_id", "rating"]].values.tolist() == [["s1", 1.0], ["s2", 0.0]]  # uncertain excluded
    assert set(out["modality"]) == {"unaided"} and set(out["reader"]) == {"bc4"}
    with pytest.raises(SchemaError, match=r"no source 'bc9'"):
        labels_to_ratings(labels, sources=["bc9"])


def test_reader_arrays_layout_with_missing_readings() -> None:
    t = validate_ratings(_ratings())
    truth = pd.Series([1.0, 0.0], index=["s1", "s2"])
    patients = pd.Series(["p1", "p2"], index=["s1", "s2"])
    arr = reader_arrays(t, truth, patients)
    assert arr.modalities == ("A", "B") and arr.readers == ("r1", "r2")
    np.testing.assert_array_equal(arr.ratings[:, :, 0], [[1, np.nan], [5, 4]])  # s1
    np.testing.assert_array_equal(arr.ratings[:, :, 1], [[np.nan, 3], [np.nan, np.nan]])  # s2
    assert arr.truth.tolist() == [1.0, 0.0] and arr.patient_ids.tolist() == ["p1", "p2"]
