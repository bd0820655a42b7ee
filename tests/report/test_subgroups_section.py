"""The report's section of a subgroup folder (what ``cxreval subgroups`` writes): the forest plots of the AUC and
FNR gaps (a panel per finding and attribute, a row per group and model, a marker per reference, filled where
significant), the gaps that change with the reference, the reliability diagrams with the calibration table, each
with its plain sentence, and the key finding."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from _factories import subgroup_folder
from cxreval.report._sections import build_sections, detect_kinds
from cxreval.report._subgroups import calibration_sentence, gap_sentence
from cxreval.subgroups import SubgroupResult

_FILES = SubgroupResult.FILES


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return subgroup_folder(tmp_path_factory.mktemp("subgroups") / "sub")


def _blocks(folder: Path):
    (sec,) = build_sections(folder)
    assert sec.kind == "subgroups"
    return sec, {b.heading: b for b in sec.blocks}


def test_a_subgroup_folder_is_its_own_kind(folder: Path) -> None:
    assert [k.name for k in detect_kinds(folder)] == ["subgroups"]


def test_forest_plot_rows_markers_and_panels(folder: Path) -> None:
    _, blocks = _blocks(folder)
    b = blocks["Subgroup gaps of the AUC"]
    fig = b.figure
    assert fig is not None and not b.missing
    table = pd.read_csv(folder / _FILES["subgroups"])
    auc = table[(table["metric"] == "auc") & table["estimable"]]
    menu = [btn.label for btn in fig.layout.updatemenus[0].buttons]
    assert menu == ["Edema · group", "Edema · site"]
    for btn in fig.layout.updatemenus[0].buttons:  # each group's models together, every row once
        rows = list(btn.args[1]["yaxis.ticktext"])
        assert len(rows) == len(set(rows)) == 2 * 3 and [r.split(" · ")[0] for r in rows][::3] in (
            ["A", "B"],
            ["X", "Y"],
        )
    # one marker per estimable gap, filled where significant after Holm, open where not
    n_points = sum(len(t.x) for t in fig.data)
    assert n_points == len(auc)
    filled = sum(len(t.x) for t in fig.data if t.marker.symbol == "circle")
    assert filled == int(auc["significant"].sum()) > 0
    assert {t.name.split(":")[0] for t in fig.data} == {"truth", "labeller"}
    assert "Under labeller," in b.html and "significant after Holm" in b.html


def test_fnr_forest_verdicts_and_calibration(folder: Path) -> None:
    sec, blocks = _blocks(folder)
    assert "Under-diagnosis: gaps of the false-negative rate" in blocks
    v = blocks["Gaps that change with the reference"]
    verdicts = pd.read_csv(folder / _FILES["verdicts"])
    changed = verdicts["verdict"].isin(["sign changes", "significance changes"]).sum()
    assert f"{changed} change sign or significance with the reference" in v.html and v.shown
    cal = blocks["Calibration: reliability diagrams"]
    assert cal.figure is not None and "debiased ECE" in cal.html and "the worst" in cal.html
    rel = pd.read_csv(folder / _FILES["reliability"])
    every = rel[rel["attribute"] == "all"]
    panels = every.groupby(["finding", "reference"]).ngroups
    assert len(cal.figure.data) == panels * every["model"].nunique() + 1  # + the diagonal
    assert sec.key is not None and "Significant subgroup AUC gaps" in sec.key.text
    assert "gaps change with the reference" in sec.key.text


def test_no_calibration_block_without_calibration(tmp_path: Path, folder: Path) -> None:
    res_cal = pd.read_csv(folder / _FILES["calibration"], keep_default_na=False)
    assert not res_cal.empty and (res_cal["reason"] == "").all()  # every column estimated
    d = tmp_path / "nocal"
    d.mkdir()
    for key in ("subgroups", "verdicts"):
        pd.read_csv(folder / _FILES[key]).to_csv(d / _FILES[key], index=False)
    pd.DataFrame(columns=res_cal.columns).to_csv(d / _FILES["calibration"], index=False)
    _, blocks = _blocks(d)
    assert "Calibration: reliability diagrams" not in blocks and "Subgroup gaps of the AUC" in blocks


def test_sentences() -> None:
    t = pd.DataFrame(
        {
            "model": ["m", "m", "m"],
            "finding": ["Edema"] * 3,
            "reference": ["r"] * 3,
            "attribute": ["sex"] * 3,
            "group": ["F", "M", "(no value)"],
            "metric": ["auc"] * 3,
            "gap": [-0.08, 0.08, float("nan")],
            "gap_ci_low": [-0.12, 0.04, float("nan")],
            "gap_ci_high": [-0.04, 0.12, float("nan")],
            "estimable": [True, True, False],
            "significant": [True, True, False],
        }
    )
    text = gap_sentence(t, "auc")
    assert (
        text.startswith("Under r, 2 of 2 estimable AUC gaps are significant")
        and "1 rows not estimable" in text
    )
    assert "m, Edema, sex = F: −0.080 [−0.120, −0.040]" in text
    cal = pd.DataFrame(
        {
            "model": ["a", "b"],
            "finding": ["Edema"] * 2,
            "attribute": ["all"] * 2,
            "ece_l2_debiased": [0.01, 0.2],
            "ece_l2_debiased_ci_low": [0.0, 0.15],
            "ece_l2_debiased_ci_high": [0.02, 0.25],
            "slope": [1.0, 0.5],
        }
    )
    s = calibration_sentence(cal)
    assert "the best calibrated is a on Edema (debiased ECE 0.010" in s and "the worst b on Edema" in s
