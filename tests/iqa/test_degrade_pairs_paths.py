"""pairs.csv written by `iqa degrade` names images by absolute paths, so `iqa score --pairs` works from any
working directory (before: the reference path stayed relative to where degrade ran, and score - which reads
relative paths against the pairs file's folder - could not find it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from cxreval.cli.main import main


def test_degrade_then_score_from_another_directory(tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    rng = np.random.default_rng(0)
    Image.fromarray((rng.random((32, 32)) * 255).astype(np.uint8)).save(work / "src" / "a.png")
    (work / "plan.yaml").write_text("seed: 1\ndegradations:\n  - {transform: gaussian_blur, params: {sigma: 1.0}}\n")
    monkeypatch.chdir(work)
    assert main(["iqa", "degrade", "--images", "src", "--plan", "plan.yaml", "-o", "deg"]) == 0
    pairs = pd.read_csv(work / "deg" / "pairs.csv")
    assert all(Path(p).is_absolute() and Path(p).is_file() for p in pairs[["reference", "test"]].to_numpy().ravel())
    monkeypatch.chdir(tmp_path)
    assert main(["iqa", "score", "--pairs", "work/deg/pairs.csv", "--metrics", "psnr", "-o", "scores"]) == 0
    assert len(pd.read_csv(tmp_path / "scores" / "scores.csv")) == 1
