"""`cxreval iqa score`, `iqa agree` and `iqa degrade` refuse unusable inputs in one line, exit 2, before writing:
empty or header-only pairs, scores and ratings files; float images outside 0..1 (never clipped); degradations that
do nothing or take a negative parameter; an image that fails midway leaves no partial output.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cxreval.cli.main import main

from .conftest import command_args, one_error_line


def _float_tiff(path: Path, scale: float) -> None:
    import tifffile

    rng = np.random.default_rng(0)
    tifffile.imwrite(path, (rng.random((16, 16)) * scale).astype(np.float32))


@pytest.mark.parametrize("content", ["", "reference,test\n"])
def test_iqa_score_empty_or_header_only_pairs(tmp_path, capsys, content):
    p = tmp_path / "pairs.csv"
    p.write_text(content)
    assert main(["iqa", "score", "--pairs", str(p), "--metrics", "psnr", "-o", str(tmp_path / "o")]) == 2
    assert str(p) in one_error_line(capsys)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "which, content", [("scores", ""), ("ratings", ""), ("ratings", "image,rater,rating\n")]
)
def test_iqa_agree_empty_or_header_only_inputs(tmp_path, capsys, which, content):
    args = command_args("iqa-agree", tmp_path)
    (tmp_path / f"{which}.csv").write_text(content)
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert f"--{which} file" in one_error_line(capsys)


def test_iqa_degrade_refuses_float_images_outside_0_1(tmp_path, capsys):
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    _float_tiff(imgs / "a.tif", 4000.0)  # e.g. raw detector values: clipping would saturate ~every pixel
    plan = tmp_path / "plan.yaml"
    plan.write_text("degradations:\n  - {transform: gaussian_blur, params: {sigma: 1.0}}\n")
    assert (
        main(["iqa", "degrade", "--images", str(imgs), "--plan", str(plan), "-o", str(tmp_path / "o")]) == 2
    )
    line = one_error_line(capsys)
    assert "outside the data range 0..1" in line and "a.tif" in line
    assert not (tmp_path / "o").exists()
    _float_tiff(imgs / "a.tif", 1.0)  # in range: accepted
    assert (
        main(["iqa", "degrade", "--images", str(imgs), "--plan", str(plan), "-o", str(tmp_path / "o")]) == 0
    )


@pytest.mark.parametrize(
    "entry",
    [
        "{transform: gaussian_blur, params: {sigma: -1}}",
        "{transform: gaussian_blur, params: {sigma: 0}}",
        "{transform: gaussian_noise, params: {sigma: -0.1}}",
        "{transform: unsharp_mask, params: {sigma: 1, amount: 0}}",
    ],
)
def test_iqa_degrade_refuses_no_op_or_negative_parameters_before_writing(tmp_path, capsys, entry):
    args = command_args("iqa-degrade", tmp_path)
    plan = Path(args[args.index("--plan") + 1])
    plan.write_text("degradations:\n  - {transform: gamma, params: {gamma: 0.5}}\n  - " + entry + "\n")
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert "must be a number > 0" in one_error_line(capsys)
    assert not (tmp_path / "o").exists()


def test_iqa_degrade_failing_midway_leaves_no_partial_output(tmp_path, capsys):
    args = command_args("iqa-degrade", tmp_path)
    imgs = Path(args[args.index("--images") + 1])
    (imgs / "zz_broken.png").write_bytes(b"not a png")  # sorted last: the first images are written first
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    one_error_line(capsys)
    assert not (tmp_path / "o").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".o.")] == []
