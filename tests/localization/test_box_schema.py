"""One box schema and one localization table: readers, `localize`, `synth` and the demo agree.

- NIH and VinDr readers return the box schema (``study_id, finding, [source,] x_min, y_min, x_max, y_max``);
- ``cxreval localize`` scores a VinDr-CXR-format file (the registered ``vindr_boxes`` dataset) and a box table;
- a box table spelled with the old ``image_id`` is refused with "did you mean 'study_id'";
- every localization result writes exactly its ``FILES`` and every ``localization.csv`` has the same columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import ndimage

from cxreval.cli.main import main
from cxreval.datasets import load_dataset
from cxreval.datasets.boxes import box_file_format, read_box_file
from cxreval.datasets.nih_boxes import read_nih_boxes
from cxreval.datasets.vindr import read_vindr_boxes
from cxreval.exceptions import SchemaError
from cxreval.localization import (
    LocalizationProtocol,
    LocalizationResult,
    SynthResult,
    evaluate_heatmaps,
    simulate_localization,
)
from cxreval.localization._real_boxes import RealBoxesResult, simulate_localization_on_boxes
from cxreval.localization._synthetic import coverage
from cxreval.report._sections import detect_kinds
from cxreval.schema._boxes import BOX_COLUMNS, LOCALIZATION_COLUMNS, SOURCED_BOX_COLUMNS

VINDR = (
    "image_id,class_name,class_id,rad_id,x_min,y_min,x_max,y_max\n"
    "a,Cardiomegaly,3,R8,100,200,300,500\n"
    "a,Cardiomegaly,3,R9,110,210,290,480\n"  # a second reader's box of the same finding
    "a,No finding,14,R1,,,,\n"
    "b,Nodule/Mass,8,R8,600,600,640,650\n"
    "b,Nodule/Mass,8,R10,700,100,760,160\n"  # a box no map covers: missed
    "c,No finding,14,R2,,,,\n"
)
NIH = "Image Index,Finding Label,Bbox [x,y,w,h],,,\na.png,Mass,10,20,30,40\n"


def _map_for(box):
    m = ndimage.gaussian_filter(coverage(box), 0.8, mode="constant")
    return m / m.max()


@pytest.fixture()
def vindr_case(tmp_path):
    p = tmp_path / "vinbigdata-train.csv"
    p.write_text(VINDR)
    maps = {
        "a/Cardiomegaly": _map_for((100, 200, 300, 500)),
        "b/Nodule or Mass": _map_for((600, 600, 640, 650)),
    }
    npz = tmp_path / "maps.npz"
    np.savez(npz, **maps)
    return p, npz, maps


def test_readers_share_the_box_schema(tmp_path, vindr_case):
    nih = tmp_path / "bbox.csv"
    nih.write_text(NIH)
    assert (
        tuple(read_nih_boxes(nih).table.columns)
        == BOX_COLUMNS
        == ("study_id", "finding", "x_min", "y_min", "x_max", "y_max")
    )
    vin = read_vindr_boxes(vindr_case[0]).table
    assert (
        tuple(vin.columns)
        == SOURCED_BOX_COLUMNS
        == ("study_id", "finding", "source", "x_min", "y_min", "x_max", "y_max")
    )
    # the registered dataset is the same table, and read_box_file recognises each format
    pd.testing.assert_frame_equal(load_dataset("vindr_boxes", vindr_case[0]).table, vin)
    assert [box_file_format(p) for p in (nih, vindr_case[0])] == ["nih", "vindr"]
    pd.testing.assert_frame_equal(read_box_file(vindr_case[0]).table, vin)
    table = tmp_path / "boxes.csv"
    vin.to_csv(table, index=False)
    assert box_file_format(table) == "table"
    pd.testing.assert_frame_equal(read_box_file(table).table, vin)


def test_localize_scores_vindr_boxes(tmp_path, vindr_case):
    p, npz, maps = vindr_case
    out = tmp_path / "loc"
    assert (
        main(["localize", "--heatmaps", str(npz), "--boxes", str(p), "--rule", "IoBB", "-o", str(out)]) == 0
    )
    loc = pd.read_csv(out / "localization.csv", dtype={"threshold": str})
    assert tuple(loc.columns) == LOCALIZATION_COLUMNS
    at = loc[(loc.threshold == "180") & (loc["T"] == 0.5)].set_index("finding")
    # every reader's box is a reference: both Cardiomegaly boxes are found (IoBB of the detected box with R9's
    # box is 180 * 270 / (200 * 300) = 0.81); of the two Nodule or Mass boxes only R8's is
    assert at.loc["Cardiomegaly", ["hits", "n_boxes", "n_images"]].tolist() == [2, 2, 1]
    assert at.loc["Nodule or Mass", ["hits", "n_boxes", "acc"]].tolist() == [1, 2, 0.5]
    # the command == the library on the registered dataset's table
    lib = evaluate_heatmaps(
        maps, load_dataset("vindr_boxes", p).table, protocol=LocalizationProtocol(rules=("IoBB",))
    )
    pd.testing.assert_frame_equal(
        loc, pd.read_csv(pd.io.common.StringIO(lib.table.to_csv(index=False)), dtype={"threshold": str})
    )
    det = pd.read_csv(out / "boxes.csv")
    assert tuple(det.columns[:6]) == BOX_COLUMNS
    assert "vinbigdata-train.csv" in (out / "summary.md").read_text()


def test_old_image_id_spelling_is_refused(tmp_path, vindr_case, capsys):
    _, npz, maps = vindr_case
    old = pd.DataFrame(
        {
            "image_id": ["a"],
            "finding": ["Cardiomegaly"],
            "x_min": [100.0],
            "y_min": [200.0],
            "x_max": [300.0],
            "y_max": [500.0],
        }
    )
    with pytest.raises(SchemaError, match=r"Column 'image_id': did you mean 'study_id'\?"):
        evaluate_heatmaps(maps, old)
    with pytest.raises(SchemaError, match=r"Column 'image_id': did you mean 'study_id'\?"):
        simulate_localization_on_boxes(old)
    f = tmp_path / "old.csv"
    old.to_csv(f, index=False)
    assert main(["localize", "--heatmaps", str(npz), "--boxes", str(f), "-o", str(tmp_path / "o")]) == 2
    assert "did you mean 'study_id'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_results_own_their_files(tmp_path, vindr_case):
    p, _, maps = vindr_case
    results = {
        "localize": evaluate_heatmaps(maps, read_box_file(p), protocol=LocalizationProtocol(rules=("IoBB",))),
        "synth": simulate_localization(1, per_size=2),
        "real": simulate_localization_on_boxes(read_vindr_boxes(p).table, rng=0),
    }
    assert {type(r) for r in results.values()} == {LocalizationResult, SynthResult, RealBoxesResult}
    for name, res in results.items():
        d = tmp_path / name
        d.mkdir()
        written = res.save(d)
        extra = set(getattr(res, "TEXT_FILES", {}).values())
        assert {q.name for q in written.values()} == set(res.FILES.values()) | extra
        assert {q.name for q in d.iterdir()} == (
            set(res.FILES.values()) | extra | {f.replace(".csv", ".parquet") for f in res.FILES.values()}
        )
        assert tuple(pd.read_csv(d / "localization.csv").columns) == res.COLUMNS == LOCALIZATION_COLUMNS
        assert isinstance(res.summary(), str) and res.summary()
    assert len({r.FILES["localization"] for r in results.values()}) == 1
    assert [[k.name for k in detect_kinds(tmp_path / name)] for name in results] == [["localization"]] * 3
    assert "vinbigdata-train.csv" in results["localize"].summary()
    assert (tmp_path / "synth" / "synth_output.txt").read_text() == results["synth"].text
