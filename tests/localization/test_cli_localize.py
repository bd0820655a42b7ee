"""`cxreval localize` / `cxreval synth` via main(argv); the BBox_List_2017 reader; Table 4 arithmetic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.nih_boxes import read_nih_boxes
from cxreval.exceptions import SchemaError
from cxreval.localization import LocalizationProtocol, evaluate_heatmaps, score_images
from cxreval.localization._synthetic import coverage
from cxreval.localization._table4 import TABLE4_ACC, denominators, table4_denominators

HEADER = "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"


def _csv(tmp_path, rows, name="bbox.csv"):
    p = tmp_path / name
    p.write_text(HEADER + "".join(rows))
    return p


def _map_for(box):
    from scipy import ndimage

    m = ndimage.gaussian_filter(coverage(box), 0.8, mode="constant")
    return m / m.max()


def test_reader(tmp_path):
    p = _csv(tmp_path, ["a.png,Infiltrate,10,20,30.5,40\n", "b.png,Nodule,0,0,5,5,,,\n"])
    r = read_nih_boxes(p)
    assert r.table.columns.tolist() == ["study_id", "finding", "x_min", "y_min", "x_max", "y_max"]
    assert r.table.iloc[0].tolist() == ["a.png", "Infiltration", 10.0, 20.0, 40.5, 60.0]
    assert r.report.n_read == r.report.n_kept == 2 and "Infiltrate" in r.report.notes[0]
    with pytest.raises(SchemaError, match=r"data row 0 \(image 'a.png'\) has a box of non-positive size"):
        read_nih_boxes(_csv(tmp_path, ["a.png,Mass,1,1,0,5\n"], "z.csv"))
    with pytest.raises(SchemaError, match=r"outside the 1024 x 1024 image"):
        read_nih_boxes(_csv(tmp_path, ["a.png,Mass,1000,1,50,5\n"], "o.csv"))
    with pytest.raises(SchemaError, match=r"Unknown finding name 'Nodul'"):
        read_nih_boxes(_csv(tmp_path, ["a.png,Nodul,1,1,5,5\n"], "u.csv"))


def test_real_file(metadata_dir):
    r = read_nih_boxes(metadata_dir / "BBox_List_2017.csv.gz")
    counts = r.table.finding.value_counts().to_dict()
    assert len(r.table) == 984 and r.table.study_id.nunique() == 880
    t4 = table4_denominators(box_counts=counts)
    assert t4.n_boxes_fits.all()  # Table 4's truncation denominators are the public box counts


def test_table4_arithmetic():
    assert denominators(TABLE4_ACC["Atelectasis"]) == [180]
    assert denominators(TABLE4_ACC["Mass"]) == [85, 170]
    assert all(not denominators(v, mode="round") for v in TABLE4_ACC.values())


def test_multiple_reference_boxes_per_image():
    # one detected box hits two references; a second detected box hits none
    preds = [np.array([[0, 0, 10, 10], [50, 50, 60, 60]])]
    refs = [np.array([[0, 0, 10, 20], [0, 0, 20, 10], [100, 100, 110, 110]])]
    sc = score_images(preds, refs, rule="IoBB", T_values=["0.5"])
    assert sc.hits.tolist() == [[2]] and sc.false_positives.tolist() == [[1]]
    assert sc.acc().tolist() == [2 / 3] and sc.afp().tolist() == [1.0]


def test_evaluate_and_cli(tmp_path):
    boxes = [(100, 200, 300, 500), (600, 600, 640, 650)]
    p = _csv(tmp_path, ["im1.png,Atelectasis,100,200,200,300\n", "im2.png,Nodule,600,600,40,50\n"])
    maps = {"im1.png/Atelectasis": _map_for(boxes[0]), "im2.png/Nodule": _map_for(boxes[1])}
    npz = tmp_path / "maps.npz"
    np.savez(npz, **maps)
    res = evaluate_heatmaps(maps, read_nih_boxes(p).table, protocol=LocalizationProtocol(rules=("IoBB",)))
    s = res.table
    assert s[(s.finding == "Atelectasis") & (s.threshold == "180") & (s["T"] == 0.9)].acc.item() == 1.0
    out = tmp_path / "out"
    assert main(["localize", "--heatmaps", str(npz), "--boxes", str(p), "--out", str(out)]) == 0
    loc = pd.read_csv(out / "localization.csv")
    assert loc.columns[:8].tolist() == [
        "finding",
        "T",
        "threshold",
        "rule",
        "acc",
        "afp",
        "n_boxes",
        "n_images",
    ]
    assert len(loc) == 2 * 2 * 3 * 5 and (out / "boxes.csv").exists() and (out / "summary.md").exists()
    # an unknown finding key and a missing map are clear errors (exit 2)
    np.savez(
        npz, **{"im1.png/Atelectasis": maps["im1.png/Atelectasis"], "im2.png/Nodulez": maps["im2.png/Nodule"]}
    )
    assert main(["localize", "--heatmaps", str(npz), "--boxes", str(p), "--out", str(out)]) == 2
    with pytest.raises(SchemaError, match=r"Unknown finding name 'Nodulez' in heatmap key 'im2.png/Nodulez'"):
        evaluate_heatmaps({"im2.png/Nodulez": maps["im2.png/Nodule"]}, read_nih_boxes(p).table)
    with pytest.raises(
        SchemaError, match=r"1 \(image, finding\) pair\(s\) with reference boxes have no heatmap"
    ):
        evaluate_heatmaps({"im1.png/Atelectasis": maps["im1.png/Atelectasis"]}, read_nih_boxes(p).table)
    r2 = evaluate_heatmaps(
        {"im1.png/Atelectasis": maps["im1.png/Atelectasis"]}, read_nih_boxes(p).table, missing_maps="miss"
    )
    assert r2.table[r2.table.finding == "Nodule"].acc.isna().all()  # no Nodule map at all: N/A, not 0
    assert r2.not_scored == ("Nodule",)
    # a Nodule map elsewhere (im1, no Nodule box there): im2's Nodule box has no map and is scored as missed
    r3 = evaluate_heatmaps(
        {"im1.png/Atelectasis": maps["im1.png/Atelectasis"], "im1.png/Nodule": maps["im2.png/Nodule"]},
        read_nih_boxes(p).table,
        missing_maps="miss",
    )
    assert r3.table[r3.table.finding == "Nodule"].acc.max() == 0.0 and r3.not_scored == ()
    with pytest.raises(SchemaError, match=r"must be a 2-D array"):
        evaluate_heatmaps({"im1.png/Atelectasis": np.zeros((2, 2, 2))}, read_nih_boxes(p).table)


def test_synth_cli_small(tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["synth", "--seed", "1", "--per-size", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text == (out / "synth_output.txt").read_text()
    assert "data large : 3 images" in text
    loc = pd.read_csv(out / "localization.csv")
    assert loc.columns[:8].tolist() == [
        "finding",
        "T",
        "threshold",
        "rule",
        "acc",
        "afp",
        "n_boxes",
        "n_images",
    ]
