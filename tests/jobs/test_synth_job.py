"""`cxreval synth` writes what its job writes: the command's folder equals
``simulate_localization_study_files(...).save()``, byte for byte (``run.json`` aside), and so does
``simulate_localization_study`` of the boxes read, for the synthetic study, the error model on real boxes and the
box overlays; ``simulate_localization_study`` takes a ``ReadResult`` and a list of box tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.datasets.boxes import read_box_file
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.jobs import simulate_localization_study_files
from cxreval.localization import simulate_localization_study

BOXES = pd.DataFrame(
    {
        "study_id": ["a.png", "a.png", "b.png"],
        "finding": ["Mass", "Nodule", "Mass"],
        "x_min": [100.0, 500.0, 300.0],
        "y_min": [200.0, 400.0, 300.0],
        "x_max": [400.0, 600.0, 700.0],
        "y_max": [500.0, 520.0, 600.0],
    }
)


def _radiographs(folder):
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name in ("a.png", "b.png", "c.png"):  # c.png carries no box
        x = np.cumsum(rng.random((64, 64)), axis=1)
        Image.fromarray((x / x.max() * 60000).astype(np.uint16)).save(folder / name)
    return folder


def test_synth_folder_is_the_jobs_save(tmp_path):
    assert main(["synth", "--seed", "1", "--per-size", "3", "-o", str(tmp_path / "cli")]) == 0
    simulate_localization_study(rng=1, per_size=3).save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    simulate_localization_study_files(rng=1, per_size=3).save(tmp_path / "files")
    assert_same_files(tmp_path / "cli", tmp_path / "files")
    assert (tmp_path / "job" / "synth_output.txt").exists() and (tmp_path / "job" / "summary.md").exists()


@pytest.mark.parametrize("synthetic", [True, False], ids=["with-synthetic", "no-synthetic"])
def test_synth_real_boxes_and_overlays_folder_is_the_jobs_save(tmp_path, synthetic):
    boxes = tmp_path / "boxes.csv"
    BOXES.to_csv(boxes, index=False)
    images = _radiographs(tmp_path / "radiographs")
    flag = "--synthetic" if synthetic else "--no-synthetic"
    assert (
        main(
            [
                "synth",
                flag,
                "--seed",
                "3",
                "--per-size",
                "2",
                "--real-boxes",
                str(boxes),
                "--images",
                str(images),
                "-o",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    res = simulate_localization_study(
        read_box_file(boxes), rng=3, per_size=2, synthetic=synthetic, images=images
    )
    res.save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    out = tmp_path / "files"
    simulate_localization_study_files(
        boxes, rng=3, per_size=2, synthetic=synthetic, images=images, out=out
    ).save(out)
    assert_same_files(tmp_path / "cli", out)
    top = tmp_path / "job" / ("real_boxes" if synthetic else "")
    assert (top / "overlays" / "a.png").exists() and not (top / "overlays" / "c.png").exists()
    assert (top / "localization_by_finding.csv").exists() and (top / "overlay_heatmaps.npz").exists()


def test_synth_on_the_real_boxes_and_radiographs_is_the_jobs_save(metadata_dir, shared_data, tmp_path):
    """BBox_List_2017's boxes on the shared ChestX-ray14 radiographs that carry one (as the demo's section)."""
    images = shared_data / "images" / "nih"
    read = read_box_file(metadata_dir / "BBox_List_2017.csv.gz")
    names = {p.name for p in images.glob("*.png")}
    boxes = tmp_path / "boxes.csv"
    read.table[read.table.study_id.isin(names)].to_csv(boxes, index=False)
    assert (
        main(
            [
                "synth",
                "--no-synthetic",
                "--seed",
                "0",
                "--real-boxes",
                str(boxes),
                "--images",
                str(images),
                "-o",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    simulate_localization_study(pd.read_csv(boxes), rng=0, synthetic=False, images=images).save(
        tmp_path / "job"
    )
    assert_same_files(tmp_path / "cli", tmp_path / "job")


def test_synth_job_takes_a_read_result_and_a_list_of_tables(tmp_path):
    boxes = tmp_path / "boxes.csv"
    BOXES.to_csv(boxes, index=False)
    read = read_box_file(boxes)
    whole = simulate_localization_study(BOXES, rng=0, synthetic=False)
    for given in (read, [BOXES.iloc[:2], BOXES.iloc[2:]], [read]):
        pd.testing.assert_frame_equal(
            simulate_localization_study(given, rng=0, synthetic=False).table, whole.table
        )
    assert whole.synthetic is None and whole.overlays is None and whole.real_boxes.n_boxes == 3


def test_synth_files_job_refuses_what_it_cannot_run(tmp_path):
    with pytest.raises(InvalidParameterError, match="images= needs real_boxes="):
        simulate_localization_study_files(images=tmp_path)
    with pytest.raises(InvalidParameterError, match="synthetic=False needs real_boxes= and out="):
        simulate_localization_study_files(tmp_path / "boxes.csv", synthetic=False)
    with pytest.raises(SchemaError, match="real_boxes=.* does not exist"):
        simulate_localization_study_files(tmp_path / "boxes.csv", out=tmp_path / "out")


def test_synth_job_refuses_what_it_cannot_run(tmp_path):
    with pytest.raises(InvalidParameterError, match="synthetic=False needs boxes="):
        simulate_localization_study(synthetic=False)
    with pytest.raises(InvalidParameterError, match="images= needs boxes="):
        simulate_localization_study(images=tmp_path)
    with pytest.raises(SchemaError, match="holds no radiograph named by a study_id"):
        simulate_localization_study(BOXES, rng=0, synthetic=False, images=tmp_path)
