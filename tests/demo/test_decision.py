"""The demo's NIH decision section: every model (the logit one too, mapped through the sigmoid by the export) has
both operating points per finding and a decision curve beside treat all / treat none; the mapping is stated in
summary.md and run.json (test_recorded_commands.py reruns its commands)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from cxreval.classification import OperatingPointResult
from cxreval.demo.data import NIH_MODELS


def test_nih_decision_operating_points_and_curves(demo_section):
    demo = demo_section("nih_decision")
    ops = pd.read_csv(demo / OperatingPointResult.FILES["operating_points"])
    assert set(ops["model"]) == set(NIH_MODELS)
    assert set(ops["operating_point"]) == {"specificity=0.9", "youden"}
    assert ops.groupby(["model", "finding"]).size().eq(2).all()
    assert ops["threshold"].between(0, 1).all()  # the logit model's thresholds are probabilities too
    curve = pd.read_csv(demo / OperatingPointResult.FILES["decision_curve"])
    assert set(curve["model"]) == {*NIH_MODELS, "treat all", "treat none"}
    assert curve["finding"].nunique() == 14
    per = curve.groupby(["model", "finding"])["threshold"].agg(["min", "max", "size"])
    assert (per["size"] == 50).all() and np.allclose(per["min"], 0.01) and np.allclose(per["max"], 0.5)
    summary = (demo / "summary.md").read_text()
    assert "dd_densenet121_v2_logits holds logits" in summary and "1/(1 + exp(-x))" in summary
    commands = json.loads((demo / "run.json").read_text())["commands"]
    assert any("nih_predictions" in c and "--logits sigmoid" in c for c in commands)
    assert "--decision-curve 0.01:0.5:0.01" in commands[-1]
