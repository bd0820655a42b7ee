"""RSNA Pneumonia files in their published layout: labels (Lung Opacity / Pneumonia / No Finding, the three
classes), boxes (x, y, width, height -> half-open), consistency checks, `data export` and `localize` on the boxes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets import load_dataset
from cxreval.datasets.boxes import read_box_file
from cxreval.datasets.rsna import load_boxes, load_labels
from cxreval.exceptions import DataUnavailableError, SchemaError

LABELS = """patientId,x,y,width,height,Target
0004cfab-14fd-4e49-80ba-63a80b6bddd6,,,,,0
00436515-870c-4b36-a041-de91049b9ab4,264.0,152.0,213.0,379.0,1
00436515-870c-4b36-a041-de91049b9ab4,562.0,152.0,256.0,453.0,1
00313ee0-9eaa-42f4-b0ab-c148ed3241cd,,,,,0
"""
CLASSES = """patientId,class
0004cfab-14fd-4e49-80ba-63a80b6bddd6,No Lung Opacity / Not Normal
00436515-870c-4b36-a041-de91049b9ab4,Lung Opacity
00436515-870c-4b36-a041-de91049b9ab4,Lung Opacity
00313ee0-9eaa-42f4-b0ab-c148ed3241cd,Normal
"""
OPAQUE, NOT_NORMAL, NORMAL = (
    "00436515-870c-4b36-a041-de91049b9ab4",
    "0004cfab-14fd-4e49-80ba-63a80b6bddd6",
    "00313ee0-9eaa-42f4-b0ab-c148ed3241cd",
)


@pytest.fixture()
def rsna(tmp_path):
    d = tmp_path / "rsna"
    d.mkdir()
    (d / "stage_2_train_labels.csv").write_text(LABELS)
    (d / "stage_2_detailed_class_info.csv").write_text(CLASSES)
    return d


def test_labels_of_the_three_classes(rsna):
    res = load_labels(rsna)
    t = res.table.set_index(["study_id", "finding"])["state"]
    assert set(res.table["source"]) == {"rsna_radiologists"}
    assert (t[(OPAQUE, "Lung Opacity")], t[(OPAQUE, "Pneumonia")], t[(OPAQUE, "No Finding")]) == (2, 2, 0)
    assert (t[(NOT_NORMAL, "Lung Opacity")], t[(NOT_NORMAL, "No Finding")]) == (0, 0)
    assert (t[(NORMAL, "Lung Opacity")], t[(NORMAL, "No Finding")]) == (0, 2)
    assert len(res.table) == 9 and (res.table["patient_id"] == res.table["study_id"]).all()
    assert "No Lung Opacity / Not Normal 1" in res.report.notes[0]


def test_boxes_half_open(rsna):
    res = load_boxes(rsna)
    b = res.table
    assert list(b.columns) == ["study_id", "finding", "x_min", "y_min", "x_max", "y_max"]
    assert b[["x_min", "y_min", "x_max", "y_max"]].to_numpy().tolist() == [
        [264, 152, 477, 531],
        [562, 152, 818, 605],
    ]
    assert set(b["finding"]) == {"Lung Opacity"} and set(b["study_id"]) == {OPAQUE}
    assert res.report.dropped["reason"].tolist() == ["no box", "no box"]


def test_inconsistent_rows_are_refused(rsna):
    p = rsna / "stage_2_train_labels.csv"
    p.write_text(LABELS.replace("264.0,152.0,213.0,379.0,1", "264.0,152.0,213.0,379.0,0"))
    with pytest.raises(SchemaError, match="Row 1 of .*Target 0 with x, y, width, height"):
        load_labels(rsna)
    p.write_text(LABELS)
    (rsna / "stage_2_detailed_class_info.csv").write_text(
        CLASSES.replace(f"{NORMAL},Normal", f"{NORMAL},Lung Opacity")
    )
    with pytest.raises(SchemaError, match=f"Image '{NORMAL}': class 'Lung Opacity' .* but Target 0"):
        load_labels(rsna)
    (rsna / "stage_2_detailed_class_info.csv").write_text(CLASSES.replace(",Normal\n", ",normal\n"))
    with pytest.raises(SchemaError, match="Class 'normal' .* is not one of"):
        load_labels(rsna)


def test_missing_file_names_it_and_export(rsna, tmp_path, capsys):
    out = tmp_path / "boxes"
    assert main(["data", "export", "rsna_pneumonia_boxes", "--path", str(rsna), "-o", str(out)]) == 0
    assert read_box_file(out / "boxes.csv").table[["x_max", "y_max"]].to_numpy().tolist() == [
        [477, 531],
        [818, 605],
    ]
    (rsna / "stage_2_detailed_class_info.csv").unlink()
    with pytest.raises(DataUnavailableError, match="has no 'stage_2_detailed_class_info.csv'.*place it in"):
        load_dataset("rsna_pneumonia", rsna)
    assert main(["data", "export", "rsna_pneumonia", "--path", str(rsna), "-o", str(tmp_path / "x")]) == 2
    assert "stage_2_detailed_class_info.csv" in capsys.readouterr().err
    # a heat map that peaks inside the first box localizes it: the exported boxes are `localize` input
    yy, xx = np.mgrid[0:32, 0:32]
    cy, cx = (152 + 531) / 2 / 32, (264 + 477) / 2 / 32
    maps = {f"{OPAQUE}/Lung Opacity": np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0)}
    np.savez(tmp_path / "maps.npz", **maps)
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(tmp_path / "maps.npz"),
                "--boxes",
                str(out / "boxes.csv"),
                "--rule",
                "IoBB",
                "-o",
                str(tmp_path / "loc"),
            ]
        )
        == 0
    )
    loc = pd.read_csv(tmp_path / "loc" / "localization.csv")
    assert set(loc["n_boxes"]) == {2}


@pytest.mark.slow
def test_real_stage_2_labels_boxes():
    """The challenge's stage_2_train_labels.csv as shipped in torchxrayvision: 30,227 rows, 9,555 boxes on 6,012
    of 26,684 images."""
    resources = pytest.importorskip("importlib.resources")
    try:
        f = resources.files("torchxrayvision") / "data" / "kaggle_stage_2_train_labels.csv.zip"
    except ModuleNotFoundError:
        pytest.skip("torchxrayvision is not installed")
    if not f.is_file():
        pytest.skip("torchxrayvision has no kaggle_stage_2_train_labels.csv.zip")
    res = load_boxes(str(f))
    raw = pd.read_csv(str(f))
    assert (res.report.n_read, len(res.table), res.table["study_id"].nunique()) == (30_227, 9_555, 6_012)
    assert raw["patientId"].nunique() == 26_684
    pos = raw[raw.Target == 1].reset_index(drop=True)
    np.testing.assert_array_equal(res.table["x_max"].to_numpy(), (pos.x + pos.width).to_numpy())
