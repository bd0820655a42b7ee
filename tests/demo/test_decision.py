"""The demo's NIH decision section: every model (the logit one too) has both operating points per finding; the missing
decision curve is stated, in summary.md and run.json (test_recorded_commands.py reruns its commands)."""

from __future__ import annotations

import json

import pandas as pd

from cxreval.classification import OperatingPointResult
from cxreval.demo.data import NIH_MODELS


def test_nih_decision_operating_points_and_stated_curve(demo_section):
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
