"""The demo's localization sections write the same files as the commands.

- ``localization_synthetic`` == ``cxreval synth --seed 0 --per-size 60 -o OUT``: every file of
  ``SynthResult.FILES`` (CSV + Parquet) and ``synth_output.txt`` (``SynthResult.TEXT_FILES``), exactly.
- ``localization_real_boxes``: its ``localization.csv`` / ``localization_by_finding.csv`` (``RealBoxesResult.FILES``)
  == ``cxreval synth --real-boxes BBox_List_2017.csv.gz --seed 0 -o OUT``'s ``OUT/real_boxes/``. No command draws
  the box overlays (they need the data mirror's radiographs, and only the demo has them), so the demo's
  ``overlays.csv``, ``overlay_heatmaps.npz`` and PNGs are compared with the library call the demo makes
  (:func:`cxreval.demo.images.overlay_boxes` on the boxes ``read_box_file`` reads, the reader ``synth`` uses),
  saved with the same ``OverlayResult.save``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cxreval.cli.main import main
from cxreval.localization import SynthResult
from cxreval.localization._overlays import OverlayResult
from cxreval.localization._real_boxes import RealBoxesResult

from .conftest import assert_same_tables


def _same_files(a: Path, b: Path) -> None:
    """Every file under ``a`` but run.json is under ``b`` with the same bytes (npz: the same arrays)."""
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "run.json")
    assert names
    for rel in names:
        pa, pb = a / rel, b / rel
        assert pb.is_file(), f"{rel} missing in {b}"
        if rel.suffix == ".npz":
            with np.load(pa) as za, np.load(pb) as zb:
                assert za.files == zb.files
                for k in za.files:
                    np.testing.assert_array_equal(za[k], zb[k])
        elif rel.suffix != ".md":
            assert pa.read_bytes() == pb.read_bytes(), rel


def test_demo_synthetic_equals_cxreval_synth(demo_section, tmp_path):
    demo = demo_section("localization")
    cli = tmp_path / "synth"
    assert main(["synth", "--seed", "0", "--per-size", "60", "-o", str(cli)]) == 0
    assert_same_tables(demo, cli, SynthResult.FILES.values())
    for name in (*SynthResult.FILES.values(), *SynthResult.TEXT_FILES.values()):
        assert (demo / name).read_bytes() == (cli / name).read_bytes(), name


def test_demo_real_boxes_equal_cxreval_synth_real_boxes(demo_section, shared_data, metadata_dir, tmp_path):
    demo = demo_section("localization_real")
    cli = tmp_path / "synth"
    bbox = metadata_dir / "BBox_List_2017.csv.gz"
    assert main(["synth", "--seed", "0", "--per-size", "1", "--real-boxes", str(bbox), "-o", str(cli)]) == 0
    assert_same_tables(demo, cli / RealBoxesResult.FOLDER, RealBoxesResult.FILES.values())
    # the overlays: no command draws them; the demo's files == the library call it makes, saved by the result
    from cxreval.datasets.boxes import read_box_file
    from cxreval.localization._overlays import boxed_images, overlay_boxes

    boxes = read_box_file(bbox).table
    res = overlay_boxes(boxed_images(shared_data / "images" / "nih", boxes), boxes, rng=0)
    lib = tmp_path / "overlays"
    lib.mkdir()
    res.save(lib)
    assert len(res.images) == 12 and set(res.table.columns) == set(OverlayResult.COLUMNS)
    assert_same_tables(demo, lib, OverlayResult.FILES.values())
    _same_files(lib, demo)
