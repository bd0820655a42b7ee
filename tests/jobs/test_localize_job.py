"""`cxreval localize` writes what its job writes: the command's folder equals
``evaluate_localization_files(...).save()``, byte for byte (``run.json`` aside), and so does
``evaluate_heatmap_files`` of the boxes read; ``evaluate_heatmap_files`` takes a ``ReadResult`` and a list of box
tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import ndimage

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.datasets.boxes import read_box_file
from cxreval.jobs import evaluate_localization_files
from cxreval.localization import LocalizationProtocol, evaluate_heatmap_files
from cxreval.localization._synthetic import coverage

HEADER = "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
BOXES = {
    "im1.png/Atelectasis": (100, 200, 300, 500),
    "im2.png/Nodule": (600, 600, 640, 650),
    "im3.png/Mass": (300, 300, 500, 420),
}


def _map(box: tuple[int, int, int, int], noise: np.random.Generator) -> np.ndarray:
    m = ndimage.gaussian_filter(coverage(box), 0.8, mode="constant") + 0.05 * noise.random((32, 32))
    return m / m.max()


@pytest.fixture()
def inputs(tmp_path):
    noise = np.random.default_rng(0)
    bbox = tmp_path / "bbox.csv"
    bbox.write_text(
        HEADER
        + "".join(
            f"{k.split('/')[0]},{k.split('/')[1]},{x0},{y0},{x1 - x0},{y1 - y0}\n"
            for k, (x0, y0, x1, y1) in BOXES.items()
        )
    )
    npz = tmp_path / "maps.npz"
    np.savez(npz, **{k: _map(b, noise) for k, b in BOXES.items()})
    return npz, bbox


def test_localize_folder_is_the_jobs_save(inputs, tmp_path):
    npz, bbox = inputs
    cli = tmp_path / "cli"
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(npz),
                "--boxes",
                str(bbox),
                "-t",
                "0.1",
                "-t",
                "1/3",
                "--rule",
                "IoBB",
                "--rule",
                "IoU",
                "--afp-denominator",
                "boxes",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = evaluate_heatmap_files(
        [npz],
        read_box_file(bbox),
        executor="serial",
        protocol=LocalizationProtocol(
            T_values=("0.1", "1/3"), rules=("IoBB", "IoU"), afp_denominator="boxes"
        ),
    )
    res.save(tmp_path / "job")
    assert_same_files(cli, tmp_path / "job")
    assert {"localization.csv", "localization.parquet", "boxes.csv", "boxes.parquet", "summary.md"} <= {
        p.name for p in (tmp_path / "job").iterdir()
    }
    files = evaluate_localization_files(
        [npz], bbox, T_values=("0.1", "1/3"), rules=("IoBB", "IoU"), afp_denominator="boxes"
    )
    files.save(tmp_path / "files")
    assert_same_files(cli, tmp_path / "files")


def test_localize_folder_on_the_real_boxes_is_the_jobs_save(metadata_dir, tmp_path):
    """The real BBox_List_2017 file, maps for 12 of its images (--studies-from-maps)."""
    bbox = metadata_dir / "BBox_List_2017.csv.gz"
    boxes = read_box_file(bbox).table
    first = boxes.drop_duplicates("study_id").head(12)
    noise = np.random.default_rng(1)
    maps = {
        f"{r.study_id}/{r.finding}": _map((int(r.x_min), int(r.y_min), int(r.x_max), int(r.y_max)), noise)
        for r in first.itertuples()
    }
    npz = tmp_path / "maps.npz"
    np.savez(npz, **maps)
    cli = tmp_path / "cli"
    assert (
        main(
            ["localize", "--heatmaps", str(npz), "--boxes", str(bbox), "--studies-from-maps", "-o", str(cli)]
        )
        == 0
    )
    evaluate_heatmap_files(npz, read_box_file(bbox), studies_from_maps=True).save(tmp_path / "job")
    assert_same_files(cli, tmp_path / "job")
    evaluate_localization_files(npz, bbox, studies_from_maps=True).save(tmp_path / "files")
    assert_same_files(cli, tmp_path / "files")


def test_localize_job_takes_a_read_result_and_a_list_of_tables(inputs):
    npz, bbox = inputs
    read = read_box_file(bbox)
    whole = evaluate_heatmap_files(npz, read.table)
    split = evaluate_heatmap_files(npz, [read.table.iloc[:1], read, read.table.iloc[1:]][::2])
    pd.testing.assert_frame_equal(whole.table, split.table)
    pd.testing.assert_frame_equal(whole.table, evaluate_heatmap_files(npz, read).table)
    assert evaluate_heatmap_files(npz, read).boxes == bbox.name  # a ReadResult keeps its file's name


def test_files_job_refuses_bad_inputs_naming_them(inputs, tmp_path, capsys):
    from cxreval.exceptions import InvalidParameterError, SchemaError

    npz, bbox = inputs
    with pytest.raises(InvalidParameterError, match="'image_size' parameter .* positive number of pixels"):
        evaluate_localization_files(npz, bbox, image_size=0)
    with pytest.raises(SchemaError, match="boxes=.* is a folder; a file is expected"):
        evaluate_localization_files(npz, tmp_path)
    argv = ["localize", "--heatmaps", str(npz), "--boxes", str(bbox), "-o", str(tmp_path / "o")]
    assert main([*argv, "--image-size", "0"]) == 2
    assert (
        "cxreval: error: --image-size must be a positive number of pixels. Got 0." in capsys.readouterr().err
    )
