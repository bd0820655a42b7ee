"""pairs.csv written by `iqa degrade` names images inside its own folder (the sources copied to references/)
by paths relative to it, so `iqa score --pairs` works from any working directory (score reads relative paths
against the pairs file's folder, never the working directory), and the folder can be moved."""

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
    (work / "plan.yaml").write_text(
        "seed: 1\ndegradations:\n  - {transform: gaussian_blur, params: {sigma: 1.0}}\n"
    )
    monkeypatch.chdir(work)
    assert main(["iqa", "degrade", "--images", "src", "--plan", "plan.yaml", "-o", "deg"]) == 0
    pairs = pd.read_csv(work / "deg" / "pairs.csv")
    assert list(pairs.columns) == ["image", "reference", "test", "degradation"]
    assert pairs.loc[0, "reference"] == "references/a.png"
    assert (work / "deg" / "references" / "a.png").read_bytes() == (work / "src" / "a.png").read_bytes()
    assert all(
        not Path(p).is_absolute() and (work / "deg" / p).is_file()
        for p in pairs[["reference", "test"]].to_numpy().ravel()
    )
    monkeypatch.chdir(tmp_path)
    (work / "deg").rename(tmp_path / "moved")  # self-contained: still scores after a move
    assert main(["iqa", "score", "--pairs", "moved/pairs.csv", "--metrics", "psnr", "-o", "scores"]) == 0
    scores = pd.read_csv(tmp_path / "scores" / "scores.csv")
    assert len(scores) == 1 and scores.loc[0, "degradation"] == "gaussian_blur_sigma1.0"
