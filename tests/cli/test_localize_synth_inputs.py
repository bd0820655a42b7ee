"""`cxreval localize` and `cxreval synth` refuse boxes and heatmaps they cannot score, in one line, exit 2, with nothing
written: a header-only box file, heatmaps that are not square, the same box given twice.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cxreval.cli.main import main

from .conftest import command_args, one_error_line


def test_synth_real_boxes_header_only(tmp_path, capsys):
    p = tmp_path / "bbox.csv"
    p.write_text("Image Index,Finding Label,Bbox [x,y,w,h],,,\n")
    assert main(["synth", "--per-size", "1", "--real-boxes", str(p), "-o", str(tmp_path / "o")]) == 2
    assert f"{p} has no rows" in one_error_line(capsys)
    assert not (tmp_path / "o").exists()


def test_localize_refuses_non_square_heatmaps_and_duplicated_boxes(tmp_path, capsys):
    args = command_args("localize", tmp_path)
    npz, bbox = Path(args[args.index("--heatmaps") + 1]), Path(args[args.index("--boxes") + 1])
    np.savez(
        tmp_path / "rect.npz", **{"im1.png/Atelectasis": np.ones((8, 16)), "im2.png/Nodule": np.ones((8, 8))}
    )
    rect = [*args]
    rect[rect.index("--heatmaps") + 1] = str(tmp_path / "rect.npz")
    assert main([*rect, "-o", str(tmp_path / "o")]) == 2
    assert "is 8 x 16 but the image is 1024 x 1024" in one_error_line(capsys)
    bbox.write_text(bbox.read_text() + "im2.png,Nodule,600,600,40,50\n")
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert "repeats the same box in rows [1, 2]" in one_error_line(capsys)
    assert npz.exists() and not (tmp_path / "o").exists()
