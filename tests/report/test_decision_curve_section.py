"""The report's operating-point and decision-curve blocks of a classify folder: present only when the folder holds
``operating_points.csv`` / ``decision_curve.csv``, with the rates' intervals, one line per model and strategy per
finding × reference (a menu switches), and the model with the highest net benefit over the range it leads."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from _factories import auc_inputs
from cxreval.classification import evaluate_operating_points
from cxreval.report._decision_curves import best_net_benefit, decision_curve_figure
from cxreval.report._html import render_report
from cxreval.report._sections import build_sections


def _folder(tmp_path: Path, synthetic_results: Path) -> Path:
    d = tmp_path / "classify"
    shutil.copytree(synthetic_results / "classify", d)
    preds, labs = auc_inputs(n_models=3, n_studies=150, rng=0)
    preds["score"] = 1 / (1 + np.exp(-preds["score"]))
    evaluate_operating_points(
        preds,
        labs,
        operating_points=["spec=0.9", "youden"],
        decision_curve="0.05:0.5:0.05",
        n_resamples=50,
        rng=0,
    ).save(d)
    return d


def _section(folder: Path):
    (sec,) = [s for s in build_sections(folder) if s.kind == "classification"]
    return {b.heading: b for b in sec.blocks}


def test_blocks_absent_without_the_files(synthetic_results: Path) -> None:
    blocks = _section(synthetic_results / "classify")
    assert "Operating points" not in blocks and "Decision curves" not in blocks


def test_blocks_show_intervals_curves_and_the_leader(tmp_path: Path, synthetic_results: Path) -> None:
    d = _folder(tmp_path, synthetic_results)
    blocks = _section(d)
    ops, dc = blocks["Operating points"], blocks["Decision curves"]
    assert not ops.missing and not dc.missing
    assert "youden" in ops.html and " [" in ops.html  # estimates with their interval
    curve = pd.read_csv(d / "decision_curve.csv")
    panels = curve.groupby(["finding", "reference"]).ngroups
    fig = dc.figure
    assert fig is not None
    per_panel = curve.groupby(["finding", "reference"])["model"].nunique()
    assert len(fig.data) == per_panel.sum()
    assert len(fig.layout.updatemenus[0].buttons) == panels if panels > 1 else not fig.layout.updatemenus
    assert sum(bool(t.visible) for t in fig.data) == per_panel.iloc[0] or panels == 1
    assert "Net benefit counts the true positives" in dc.html
    html = render_report([d]).page
    assert "Decision curves" in html and "Operating points" in html


def test_best_net_benefit_by_brute_force() -> None:
    t = np.round(np.arange(0.1, 0.6, 0.1), 2)
    rows = []
    nb = {"a": [0.30, 0.20, 0.05, -0.1, -0.2], "b": [0.25, 0.22, 0.10, 0.02, -0.1]}
    strat = {"treat all": [0.2, 0.1, -0.05, -0.2, -0.4], "treat none": [0.0] * 5}
    for m, v in {**nb, **strat}.items():
        rows += [
            {"model": m, "finding": "F", "reference": "r", "threshold": x, "net_benefit": y}
            for x, y in zip(t, v)
        ]
    best = best_net_benefit(pd.DataFrame(rows))
    got = [(r.model, r.lowest, r.highest) for r in best.itertuples()]
    assert got == [("a", 0.1, 0.1), ("b", 0.2, 0.4)]  # 0.5: no model beats treat none
    fig = decision_curve_figure(pd.DataFrame(rows).assign(prevalence=0.3))
    assert fig is not None and len(fig.data) == 4
