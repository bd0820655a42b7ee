"""The demo's NIH subgroup section: the 10 models' gaps by sex, age band, view and sex × view on every fold image
(nih_textmined) and on Google's images under both references, with verdicts; the calibration of the 10
models, the logit model's sigmoid mapping stated (test_recorded_commands.py reruns its commands)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from cxreval.demo._subgroup_sections import BY, N_RESAMPLES
from cxreval.demo.data import NIH_MODELS
from cxreval.report._html import find_result_folders
from cxreval.subgroups import SubgroupResult

_FILES = SubgroupResult.FILES


def test_nih_subgroups_under_both_references_and_calibration(demo_section):
    demo = demo_section("nih_subgroups")
    assert not list(demo.glob("*.csv"))  # the section's folder: its summary, each run in a folder of its own
    gaps = pd.read_csv(demo / "nih_textmined" / _FILES["subgroups"])
    assert set(gaps["model"]) == set(NIH_MODELS) and gaps["finding"].nunique() == 14
    assert set(gaps["attribute"]) == set(BY) and set(gaps["reference"]) == {"nih_textmined"}
    auc = gaps[gaps["metric"] == "auc"]
    # every fold image is in one group of each attribute (or its "(no value)" row): none dropped
    per_attribute = auc.groupby(["model", "finding", "attribute"])["n_studies"].sum()
    assert (per_attribute == 22433).all(), per_attribute[per_attribute != 22433]
    assert auc["estimable"].any() and (~auc["estimable"]).any()  # 80+ and small groups: kept, with a reason
    assert auc.loc[~auc["estimable"], "reason"].str.len().gt(0).all()

    both = pd.read_csv(demo / "google_expert" / _FILES["subgroups"])
    assert set(both["reference"]) == {"nih_textmined", "google_expert"} and set(both["model"]) == set(
        NIH_MODELS
    )
    v = pd.read_csv(demo / "google_expert" / _FILES["verdicts"])
    assert {"gap_nih_textmined", "gap_google_expert"} <= set(v.columns)
    assert v["verdict"].isin(["significance changes", "sign changes"]).any()
    images = both[both["metric"] == "auc"].groupby(["model", "finding", "reference", "attribute"])[
        "n_studies"
    ]
    assert images.sum().max() <= 935  # Google's images, both references on the same ones

    cal = pd.read_csv(demo / "calibration" / _FILES["calibration"])
    assert set(cal["model"]) == set(NIH_MODELS) and cal["finding"].nunique() == 14
    every = cal[cal["attribute"] == "all"]
    assert len(every) == 10 * 14
    assert (
        np.isfinite(every[["ece_l2_debiased_ci_low", "ece_l2_debiased_ci_high", "brier", "slope"]])
        .all()
        .all()
    )
    rel = pd.read_csv(demo / "calibration" / _FILES["reliability"])
    assert set(rel["model"]) == set(NIH_MODELS)

    summary = (demo / "summary.md").read_text()
    assert (
        "dd_densenet121_v2_logits holds logits" in summary
        and "sigmoid" in summary
        and "patient-bootstrap resamples" in summary
    )
    # a report of the section shows each run as a section of its own (the demo's report, `cxreval report`)
    assert [p.name for p in find_result_folders([demo])] == ["calibration", "google_expert", "nih_textmined"]
    meta = json.loads((demo / "run.json").read_text())
    assert meta["logit_models"] == ["dd_densenet121_v2_logits"] and "logits" in meta["calibration"]
    assert meta["n_resamples"] == min(20, N_RESAMPLES)
