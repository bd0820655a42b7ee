"""The demo's NIH decision section: the recorded commands write the same operating points, byte for byte; every
model (the logit one too) has both operating points per finding; the missing decision curve is stated."""

from __future__ import annotations

import json

import pandas as pd

from cxreval.classification import OperatingPointResult
from cxreval.demo.data import NIH_MODELS

from .conftest import assert_same_bytes, run_recorded_commands


def test_nih_decision_equals_its_commands(demo_section, metadata_dir, tmp_path, monkeypatch):
    demo = demo_section("nih_decision")
    ops = pd.read_csv(demo / OperatingPointResult.FILES["operating_points"])
    assert set(ops["model"]) == set(NIH_MODELS)
    assert set(ops["operating_point"]) == {"specificity=0.9", "youden"}
    assert ops.groupby(["model", "finding"]).size().eq(2).all()
    assert not (demo / OperatingPointResult.FILES["decision_curve"]).exists()
    summary = (demo / "summary.md").read_text()
    assert "dd_densenet121_v2_logits holds logits" in summary
    meta = json.loads((demo / "run.json").read_text())
    assert "logits" in json.dumps(meta)
    cli = run_recorded_commands(demo, tmp_path / "cli", metadata_dir.parent, monkeypatch)
    assert_same_bytes(demo, cli, [OperatingPointResult.FILES["operating_points"], "auc.csv"])
