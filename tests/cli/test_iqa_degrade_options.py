"""`cxreval iqa degrade --plan demo --sample N --max-size PX`: the packaged plan, the spread sample of the sorted
names and the block-averaged references; a bad value is one line and exit 2, with nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from cxreval.cli.main import main
from cxreval.io.images import read_image

DEMO_DEGRADATIONS = ["blur_s1.5", "noise_g0.02", "jpeg_q20", "resample_x2", "gamma_1.3", "unsharp_s1.5_a0.8"]
"""The packaged demo plan's entries (src/cxreval/data/iqa_plans/demo.yaml), as the demo's IQA section lists them."""


def _folder(tmp: Path, n: int = 5) -> Path:
    """``n`` 8-bit 16 x 20 PNGs img0..img{n-1} of distinct content."""
    d = tmp / "imgs"
    d.mkdir()
    rng = np.random.default_rng(3)
    for i in range(n):
        Image.fromarray(rng.integers(0, 256, (16, 20), dtype=np.uint8)).save(d / f"img{i}.png")
    return d


def test_sample_and_max_size_with_the_demo_plan(tmp_path: Path) -> None:
    imgs = _folder(tmp_path)
    out = tmp_path / "deg"
    assert (
        main(
            [
                "iqa",
                "degrade",
                "--images",
                str(imgs),
                "--plan",
                "demo",
                "--sample",
                "2",
                "--max-size",
                "8",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    man = pd.read_csv(out / "manifest.csv")
    # 5 names, 2 wanted: every (5 // 2)-th from the first -> img0, img2
    assert sorted(man["source"].unique()) == ["references/img0.png", "references/img2.png"]
    assert sorted(man["degradation"].unique()) == sorted(DEMO_DEGRADATIONS)
    # longest side 20 > 8: factor ceil(20 / 8) = 3, 3 x 3 block means of the 15 x 18 crop, stored as 16-bit
    src = np.asarray(Image.open(imgs / "img2.png"), dtype=np.float64)
    want = src[:15, :18].reshape(5, 3, 6, 3).mean(axis=(1, 3))
    ref = read_image(out / "references" / "img2.png")
    assert ref.image.shape == (5, 6)
    np.testing.assert_allclose(ref.image / ref.data_range, want / 255, atol=0.5 / 65535)


def test_without_sample_every_image_is_copied(tmp_path: Path) -> None:
    imgs = _folder(tmp_path, 3)
    out = tmp_path / "deg"
    assert main(["iqa", "degrade", "--images", str(imgs), "--plan", "demo", "-o", str(out)]) == 0
    assert (out / "references" / "img1.png").read_bytes() == (imgs / "img1.png").read_bytes()
    assert len(pd.read_csv(out / "manifest.csv")) == 3 * len(DEMO_DEGRADATIONS)


@pytest.mark.parametrize(
    "args",
    [
        ["--sample", "0"],
        ["--max-size", "0"],
        ["--sample", "-2"],
        ["--sample", "two"],
        ["--plan", "no_such_plan"],
    ],
)
def test_bad_value_is_exit_2_and_writes_nothing(tmp_path: Path, args: list[str]) -> None:
    imgs = _folder(tmp_path)
    out = tmp_path / "deg"
    cmd = [
        "iqa",
        "degrade",
        "--images",
        str(imgs),
        *(["--plan", "demo"] if "--plan" not in args else []),
        *args,
        "-o",
        str(out),
    ]
    assert main(cmd) == 2
    assert not out.exists()
