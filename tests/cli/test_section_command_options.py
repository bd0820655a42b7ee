"""The options that let a demo section's tables be written by commands alone: ``data export
chexpert_test_predictions``, ``agree --flow-pairs`` and ``synth --real-boxes ... --images DIR --no-synthetic``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _factories import label_table
from cxreval.agreement import compare_sources
from cxreval.cli.main import main
from cxreval.localization._overlays import boxed_images, overlay_boxes
from cxreval.localization._real_boxes import simulate_localization_on_boxes


def _write_predictions_folder(root: Path) -> Path:
    """A CheXpert-like test-set folder: groundtruth.csv and two wide ``<model>_predictions.csv`` files."""
    findings = ["Atelectasis", "Cardiomegaly"]
    root.mkdir()
    studies = [f"CheXpert-v1.0/test/patient{i:05d}/study1" for i in range(4)]
    (root / "groundtruth.csv").write_text(
        "Study," + ",".join(findings) + "\n" + "".join(f"{s},1,0\n" for s in studies)
    )
    d = root / "example_models" / "predictions" / "standard"
    d.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for model in ("alpha", "beta_v2"):
        pd.DataFrame({"Study": studies, **{f: rng.random(4).round(3) for f in findings}}).to_csv(
            d / f"{model}_predictions.csv", index=False
        )
    return root


def test_export_chexpert_predictions_names_models_by_their_file(tmp_path: Path) -> None:
    root = _write_predictions_folder(tmp_path / "chexpert")
    assert (
        main(["data", "export", "chexpert_test_predictions", "--path", str(root), "-o", str(tmp_path / "p")])
        == 0
    )
    table = pd.read_parquet(tmp_path / "p" / "predictions.parquet")
    assert list(table.columns) == ["study_id", "model", "finding", "score"]
    assert sorted(table["model"].unique()) == ["alpha", "beta_v2"]  # not alpha_predictions
    wide = pd.read_csv(root / "example_models/predictions/standard/beta_v2_predictions.csv")
    got = table[(table["model"] == "beta_v2") & (table["finding"] == "Cardiomegaly")]
    assert got["score"].tolist() == wide["Cardiomegaly"].tolist()
    assert len(table) == 2 * 4 * 2


def _labels(path: Path) -> Path:
    label_table(
        30,
        sources=("CR", "R1", "R2"),
        states=("negative", "positive", "uncertain"),
        studies_per_patient=1,
        seed=1,
    ).to_csv(path, index=False)
    return path


def test_agree_flow_pairs_writes_the_flows_of_other_pairs(tmp_path: Path) -> None:
    lp = _labels(tmp_path / "labels.csv")
    assert (
        main(
            [
                "agree",
                "-l",
                str(lp),
                "--pairs",
                "CR:R1,CR:R2",
                "--flow-pairs",
                "CR:R2",
                "-o",
                str(tmp_path / "both"),
            ]
        )
        == 0
    )
    assert main(["agree", "-l", str(lp), "--pairs", "CR:R1,CR:R2", "-o", str(tmp_path / "all")]) == 0
    assert main(["agree", "-l", str(lp), "--pairs", "CR:R2", "-o", str(tmp_path / "one")]) == 0
    for name in ("agreement.csv", "prevalence.csv"):
        assert (tmp_path / "both" / name).read_bytes() == (tmp_path / "all" / name).read_bytes()
    for name in ("flows.csv", "omissions.csv"):
        assert (tmp_path / "both" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
        assert (tmp_path / "both" / name).read_bytes() != (tmp_path / "all" / name).read_bytes()
    flows = pd.read_csv(tmp_path / "both" / "flows.csv")
    ref = compare_sources(
        pd.read_csv(lp).assign(
            state=lambda t: t["state"].map({"negative": 0, "uncertain": 1, "positive": 2})
        ),
        [("CR", "R2")],
    ).flows.table
    assert set(zip(flows["source_a"], flows["source_b"])) == {("CR", "R2")}
    assert flows["count"].tolist() == ref["count"].tolist()


def test_agree_flow_pairs_refuses_a_bad_pair(tmp_path: Path) -> None:
    lp = _labels(tmp_path / "labels.csv")
    assert (
        main(["agree", "-l", str(lp), "--pairs", "CR:R1", "--flow-pairs", "CR", "-o", str(tmp_path / "o")])
        == 2
    )
    assert not (tmp_path / "o").exists()


def _boxes_and_images(tmp_path: Path) -> tuple[Path, Path]:
    from PIL import Image

    boxes = pd.DataFrame(
        {
            "study_id": ["00000001_000.png", "00000002_000.png", "00000099_000.png"],
            "finding": ["Mass", "Nodule", "Mass"],
            "x_min": [100.0, 400.0, 10.0],
            "y_min": [120.0, 300.0, 10.0],
            "x_max": [300.0, 460.0, 60.0],
            "y_max": [330.0, 350.0, 60.0],
        }
    )
    bp = tmp_path / "boxes.csv"
    boxes.to_csv(bp, index=False)
    img = tmp_path / "images"
    img.mkdir()
    rng = np.random.default_rng(2)
    for name in ("00000001_000.png", "00000002_000.png", "00000003_000.png"):  # 00000003: no box
        Image.fromarray(rng.integers(0, 256, (1024, 1024), dtype=np.uint8), mode="L").save(img / name)
    return bp, img


def test_synth_real_boxes_only_with_overlays_equals_the_library(tmp_path: Path) -> None:
    from cxreval.datasets.boxes import read_box_file

    bp, img = _boxes_and_images(tmp_path)
    out = tmp_path / "out"
    assert (
        main(
            [
                "synth",
                "--no-synthetic",
                "--real-boxes",
                str(bp),
                "--images",
                str(img),
                "--seed",
                "3",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert not (out / "real_boxes").exists() and not (out / "synth_output.txt").exists()
    boxes = read_box_file(bp).table
    lib = tmp_path / "lib"
    lib.mkdir()
    simulate_localization_on_boxes(boxes, rng=3).save(lib)
    files = boxed_images(img, boxes)
    assert [p.name for p in files] == ["00000001_000.png", "00000002_000.png"]
    overlay_boxes(files, boxes, rng=3).save(lib)
    csvs = sorted(p.name for p in lib.glob("*.csv"))
    assert "overlays.csv" in csvs and "localization.csv" in csvs
    for name in csvs:
        assert (out / name).read_bytes() == (lib / name).read_bytes(), name
    assert sorted(p.name for p in (out / "overlays").iterdir()) == ["00000001_000.png", "00000002_000.png"]


@pytest.mark.parametrize(
    "args",
    [
        ["--images", "IMG"],
        ["--no-synthetic"],
        ["--no-synthetic", "--real-boxes", "B"],
        ["--real-boxes", "B", "--images", "EMPTY"],
        ["--real-boxes", "B", "--images", "B"],
    ],
)
def test_synth_refuses_incomplete_real_box_options(args: list[str], tmp_path: Path) -> None:
    bp, img = _boxes_and_images(tmp_path)
    (tmp_path / "empty").mkdir()
    subst = {"IMG": str(img), "B": str(bp), "EMPTY": str(tmp_path / "empty")}
    out = [] if args == ["--no-synthetic", "--real-boxes", "B"] else ["-o", str(tmp_path / "o")]
    assert main(["synth", "--per-size", "2", *[subst.get(a, a) for a in args], *out]) == 2
    assert not (tmp_path / "o").exists()
