"""Key findings are written from the numbers (change an input, the verdict changes), their thresholds are
stated once and configurable, and every line links to its section."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError
from cxreval.report._html import render_report
from cxreval.report._key_findings import key_finding
from cxreval.report._sections import build_sections
from cxreval.report._thresholds import LANDIS_KOCH, Thresholds, load_thresholds


@pytest.fixture()
def classify(synthetic_results: Path, tmp_path: Path) -> Path:
    d = tmp_path / "classify"
    shutil.copytree(synthetic_results / "classify", d)
    return d


def _set_srcc(folder: Path, values: dict[str, float]) -> None:
    """Set the SRCC (all groups, all pairs) of the given findings; the rest to 0.95."""
    rc = pd.read_csv(folder / "rank_correlation.csv")
    srcc = rc["method"] == "SRCC"
    rc.loc[srcc, "statistic"] = 0.95
    for f, v in values.items():
        rc.loc[srcc & (rc["finding"] == f), ["statistic", "ci_low", "ci_high"]] = [
            v,
            v - 0.3,
            min(v + 0.2, 1),
        ]
    rc.to_csv(folder / "rank_correlation.csv", index=False)


def test_ranking_verdict_follows_the_srcc(classify: Path) -> None:
    _set_srcc(classify, {})
    kf = key_finding("ranking", classify)
    assert kf.verdict == "stable at worst"
    assert (
        "Least stable of 8 comparisons" in kf.text
        and "all 8: 8 stable, 0 moderately stable, 0 unstable" in kf.text
    )
    _set_srcc(classify, {"Effusion": 0.29})
    kf = key_finding("ranking", classify)
    assert kf.verdict == "unstable at worst"
    assert (
        "Least stable of 8 comparisons, Effusion alone (one finding, not the macro average): the model ranking "
        "under CR barely predicts the ranking under"
    ) in kf.text
    assert "SRCC 0.29 (95% CI −0.01 to 0.49)" in kf.text
    assert kf.text.count(". ") == 1  # a sentence of verdict, one of numbers
    _set_srcc(classify, {"Effusion": 0.8})
    assert key_finding("ranking", classify).verdict == "moderately stable at worst"


def test_ranking_best_model_rank_is_read_from_rankings(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    models = ["a", "b", "c", "d"]
    pd.DataFrame(
        {
            "finding": ["Pneumothorax"] * 8,
            "reference": ["text"] * 4 + ["expert"] * 4,
            "model": models * 2,
            "rank": [1, 2, 3, 4, 4, 3, 2, 1],
        }
    ).to_csv(d / "rankings.csv", index=False)
    pd.DataFrame(
        {
            "finding": ["Pneumothorax"],
            "reference_a": ["text"],
            "reference_b": ["expert"],
            "method": ["SRCC"],
            "statistic": [-1.0],
            "ci_low": [-1.0],
            "ci_high": [-0.4],
        }
    ).to_csv(d / "rank_correlation.csv", index=False)
    kf = key_finding("ranking", d)
    assert kf.text == (
        "Pneumothorax alone (one finding, not the macro average): the model ranking under expert "
        "barely predicts the ranking under text; the best model under text, a, ranks 4th of 4 under "
        "expert. SRCC −1.00 (95% CI −1.00 to −0.40)."
    )
    rc = pd.read_csv(d / "rank_correlation.csv")
    rc.rename(columns={"reference_a": "reference_b", "reference_b": "reference_a"}).to_csv(
        d / "rank_correlation.csv", index=False
    )
    assert key_finding("ranking", d) == kf  # the same words whichever reference comes first
    assert kf.verdict == "unstable"


def test_kappa_bands_are_landis_and_koch(synthetic_results: Path, tmp_path: Path) -> None:
    d = tmp_path / "agree"
    shutil.copytree(synthetic_results / "agree", d)
    ag = pd.read_csv(d / "agreement.csv")
    for k, band in [
        (0.85, "almost perfect"),
        (0.5, "moderate"),
        (0.3, "fair"),
        (0.1, "slight"),
        (-0.2, "poor"),
        (0.7, "substantial"),
    ]:
        ag.loc[ag["finding"] == "micro", ["kappa_w", "kappa_low", "kappa_high"]] = [k, k - 0.1, k + 0.05]
        ag.to_csv(d / "agreement.csv", index=False)
        kf = key_finding("agreement", d)
        assert kf.verdict == f"{band} agreement at worst", (k, kf)
        assert f"κ {k:.2f}".replace("-", "−") in kf.text
    t = Thresholds()
    assert [t.kappa_band(v) for v in (-0.01, 0, 0.2, 0.21, 0.4, 0.41, 0.6, 0.61, 0.8, 0.81, 1)] == [
        "poor",
        "slight",
        "slight",
        "fair",
        "fair",
        "moderate",
        "moderate",
        "substantial",
        "substantial",
        "almost perfect",
        "almost perfect",
    ]
    assert "Landis & Koch (1977)" in t.describe()


def test_classification_verdict_when_best_model_changes(classify: Path) -> None:
    auc = pd.read_csv(classify / "auc.csv")
    macro = auc["finding"] == "macro"
    auc.loc[macro, "auc"] = 0.7
    auc.loc[macro & (auc["model"] == "m3"), "auc"] = 0.9  # m3 best under every reference
    auc.to_csv(classify / "auc.csv", index=False)
    kf = key_finding("classification", classify)
    assert kf.verdict == "same best model under every reference"
    assert re.match(
        r"Macro AUC \(the mean of the \d per-finding AUCs\): m3 is the best of 4 models under every "
        r"reference \(CR, Rep1 and Rep2\)\. CR: m3 AUC 0\.900 \(95% CI",
        kf.text,
    ), kf.text
    auc.loc[macro & (auc["model"] == "m1") & (auc["reference"] == "Rep2"), "auc"] = 0.95
    auc.to_csv(classify / "auc.csv", index=False)
    kf = key_finding("classification", classify)
    assert kf.verdict == "best model changes with the reference"
    assert "the best of 4 models changes with the reference (m3 under CR and Rep1; m1 under Rep2)" in kf.text


def test_thresholds_file_changes_the_wording(classify: Path, tmp_path: Path) -> None:
    _set_srcc(classify, {"Effusion": 0.93})
    assert key_finding("ranking", classify).verdict == "stable at worst"
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"srcc": {"robust": 0.97, "shaky": -1}}))
    th = load_thresholds(f)
    kf = key_finding("ranking", classify, th)
    assert kf.verdict == "shaky at worst" and "barely predicts" in kf.text
    page, _, _ = render_report([classify], thresholds=th)
    assert page.count("≥ 0.97 robust, below 0.97 shaky") == 1  # stated once, in the panel
    assert str(f) in page
    for bad, msg in [
        ({"srcc": {"a": 0.5}}, "must start at -1"),
        ({"srcc": {"a": 2, "b": -1}}, r"in \[-1, 1\]"),
        ({"kapa": {}}, r"unknown key\(s\) \['kapa'\]"),
        ([], "expected a JSON object"),
    ]:
        f.write_text(json.dumps(bad))
        with pytest.raises(InvalidParameterError, match=msg):
            load_thresholds(f)
    assert dict(LANDIS_KOCH)["moderate"] == 0.41


def test_panel_is_first_and_links_to_sections(synthetic_results: Path) -> None:
    page, sections, _ = render_report([synthetic_results])
    body = page.split("<main>", 1)[1]
    assert body.lstrip().startswith('<section id="key-findings"')
    assert page.split("<header>", 1)[1].split("</header>")[0].strip().startswith("<h1>")
    lines = re.findall(
        r'<li class="kf" data-kind="(\w+)"><span class="kf-number">\d+\.</span> <a class="kf-link" href="#([^"]+)">',
        page,
    )
    # the headline comparison's lines first, then page order
    from cxreval.report.headline import headline

    top = headline(sections)
    assert top is not None and top.section.kind == "classification"
    head = [s.kind for s in sections if s.folder == top.section.folder]
    assert len(lines) == len(sections) and sorted(k for k, _ in lines) == sorted(s.kind for s in sections)
    assert [k for k, _ in lines][: len(head)] == head
    ids = set(re.findall(r'<section class="report-section" id="([^"]+)"', page))
    assert all(sid in ids for _, sid in lines)
    assert page.index('id="methods"') > page.index(
        'id="not-available"' if 'id="not-available"' in page else "<main>"
    )
    assert page.rstrip().endswith("</html>") and page.count("Methods and provenance</h2>") == 1
    # every section: figure before its sentence, tables collapsed after it
    for blk in re.findall(
        r'<div class="block">(.*?)</div>(?=<div class="block">|<p class="folder">)', page, re.S
    ):
        if 'class="figure"' in blk and 'class="how"' in blk:
            assert blk.index('class="figure"') < blk.index('class="how"')
        if "<table" in blk:
            assert blk.index("<details") < blk.index("<table")


def test_audit_without_split_says_so(tmp_path: Path) -> None:
    d = tmp_path / "audit"
    d.mkdir()
    (d / "audit.json").write_text(
        json.dumps({"dataset": "chestxray14", "n_images": 10, "n_patients": 4, "split": None})
    )
    (sec,) = build_sections(d)
    assert sec.key.verdict == "split and leakage not checked" and "leakage" not in sec.key.verdict.replace(
        "leakage not checked", ""
    )
    assert "no split lists were available" in sec.key.text
    assert 'audit.json has "split": null' in sec.blocks[0].missing
    (d / "audit.json").write_text(
        json.dumps({"dataset": "x", "n_images": 10, "split": {"n_shared_patients": 2}})
    )
    assert build_sections(d)[0].key.verdict == "patient leakage"


def test_cli_report_thresholds_option(
    classify: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "t.json"
    f.write_text("{not json")
    out = tmp_path / "r.html"
    assert main(["report", str(classify), "--out", str(out), "--thresholds", str(f)]) == 2
    assert "--thresholds" in capsys.readouterr().err and not out.exists()
    f.write_text(json.dumps({"srcc": {"fine": -1}}))
    assert main(["report", str(classify), "--out", str(out), "--thresholds", str(f), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert {s["kind"]: s["key_finding"]["verdict"] for s in res["sections"]}["ranking"] == "fine at worst"


def _labeller_table(folder: Path, micro: tuple[float, float, float]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"finding": "Mass", "f1": 0.79, "f1_low": 0.66, "f1_high": 0.92, "nih_f1": 0.52},
        {"finding": "Nodule", "f1": 0.88, "f1_low": 0.83, "f1_high": 0.92, "nih_f1": None},
        {"finding": "micro", "f1": micro[0], "f1_low": micro[1], "f1_high": micro[2], "nih_f1": 0.90},
    ]
    pd.DataFrame(rows).to_csv(folder / "labeller_validation.csv", index=False)
    return folder


@pytest.mark.parametrize(
    ("micro", "verdict"),
    [
        ((0.94, 0.92, 0.95), "better than the published labeller"),
        ((0.91, 0.88, 0.93), "comparable to the published labeller"),
        ((0.80, 0.75, 0.85), "worse than the published labeller"),
    ],
)
def test_report_labeller_verdict_follows_its_f1(tmp_path: Path, micro, verdict) -> None:
    kf = key_finding("report_labels", _labeller_table(tmp_path / "lab", micro))
    assert kf.verdict == verdict
    assert f"micro F1 {micro[0]:.2f}" in kf.text and "weakest finding Mass (F1 0.79)" in kf.text
    sections = build_sections(tmp_path / "lab")
    assert [s.kind for s in sections] == ["report_labels"] and sections[0].n_figures == 1


def test_agreement_summary_rows_of_several_finding_sets_are_not_counted_as_pairs(tmp_path: Path) -> None:
    d = tmp_path / "agree"
    d.mkdir()
    rows = [
        {
            "pair": "A:B",
            "finding": f,
            "kappa_w": k,
            "kappa_low": k - 0.05,
            "kappa_high": k + 0.05,
            "finding_set": fs,
        }
        for f, k, fs in [
            ("Edema", 0.5, ""),
            ("Effusion", 0.7, ""),
            ("micro", 0.55, "selected"),
            ("micro", 0.61, "all"),
        ]
    ]
    pd.DataFrame(rows).to_csv(d / "agreement.csv", index=False)
    kf = key_finding("agreement", d)
    assert kf.text.startswith("Weighted κ (micro over all findings), A:B: κ 0.61")
    assert "source pairs" not in kf.text and kf.verdict == "substantial agreement"


def test_circular_fusion_reference_is_flagged(synthetic_results: Path, tmp_path: Path) -> None:
    d = tmp_path / "fuse"
    shutil.copytree(synthetic_results / "fuse", d)
    kf = key_finding("fusion", d)
    assert (
        kf.verdict != "circular reference" and "Circular" not in kf.text
    )  # no method reproduces the reference
    fa = pd.read_csv(d / "fusion_agreement.csv")
    fa.loc[fa["method"] == "MV", ["kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high"]] = 1.0
    fa.to_csv(d / "fusion_agreement.csv", index=False)  # MV reproduces the reference on every finding
    kf = key_finding("fusion", d)
    assert kf.verdict == "circular reference"
    assert kf.text.startswith(
        "Circular reference: “MV” reproduces the reference exactly on every finding (κ 1.00)"
    )
    assert "closeness to that rule, not accuracy" in kf.text
    # one finding short of exact agreement: not flagged
    fa.loc[(fa["method"] == "MV") & (fa["finding"] == "Effusion"), "kappa_w"] = 0.97
    fa.to_csv(d / "fusion_agreement.csv", index=False)
    assert key_finding("fusion", d).verdict != "circular reference"


def test_reference_that_is_one_of_the_fused_readers_is_circular(
    synthetic_results: Path, tmp_path: Path
) -> None:
    from cxreval.outputs import output_folder

    d = tmp_path / "fuse_run"
    with output_folder(
        d, argv=["cxreval", "fuse", "-l", "L.csv", "--readers", "r1,r2,r3", "--adjudicated", "r2"]
    ) as tmp:
        for f in ("fusion_agreement.csv", "fused_labels.csv"):
            shutil.copy(synthetic_results / "fuse" / f, tmp / f)
    kf = key_finding("fusion", d)
    assert kf.verdict == "circular reference" and "the reference r2 is one of the fused readers" in kf.text


def _separability_folder(classify: Path, lo: float, hi: float) -> None:
    """auc.csv with m3 best under CR and m1 best under Rep2 (macro), and an auc_comparison.csv for them."""
    auc = pd.read_csv(classify / "auc.csv")
    macro = auc["finding"] == "macro"
    auc.loc[macro, "auc"] = 0.7
    auc.loc[macro & (auc["model"] == "m3"), "auc"] = 0.9
    auc.loc[macro & (auc["model"] == "m2"), "auc"] = 0.89
    auc.loc[macro & (auc["model"] == "m1") & (auc["reference"] == "Rep2"), "auc"] = 0.95
    auc.to_csv(classify / "auc.csv", index=False)
    rows = [
        ("macro", "CR", "m3", "m2", "runner-up", 0.9, 0.89, 0.01, lo, hi),
        ("macro", "Rep2", "m1", "m3", "runner-up; best under CR", 0.95, 0.9, 0.05, 0.02, 0.08),
        ("macro", "CR", "m3", "m1", "best under Rep2", 0.9, 0.95, -0.05, -0.08, -0.02),
        ("macro", "Rep1", "m3", "m1", "best under Rep2", 0.9, 0.89, 0.01, lo, hi),
        ("macro", "Rep2", "m1", "m3", "best under Rep1", 0.95, 0.9, 0.05, 0.02, 0.08),
    ]
    pd.DataFrame(
        rows,
        columns=[
            "finding",
            "reference",
            "model_a",
            "model_b",
            "comparison",
            "auc_a",
            "auc_b",
            "difference",
            "ci_low",
            "ci_high",
        ],
    ).assign(
        confidence_level=0.95,
        n_comparisons=4,
        pvalue=0.3,
        pvalue_holm=0.6,
        method="bootstrap",
        separable=lambda t: (t["ci_low"] > 0) | (t["ci_high"] < 0),
    ).to_csv(classify / "auc_comparison.csv", index=False)


def test_best_model_lines_state_separability(classify: Path) -> None:
    _separability_folder(classify, -0.004, 0.02)
    kf = key_finding("classification", classify)
    verdict, numbers = kf.text.split(". ", 1)
    assert verdict == (
        "Macro AUC (the mean of the 3 per-finding AUCs): the best of 4 models changes with the "
        "reference (m3 under CR and Rep1; m1 under Rep2); the two are separable under CR and Rep2, "
        "not under Rep1"
    )
    assert numbers.startswith("CR: m3 AUC 0.900 (95% CI")
    assert "Rep2: m1 AUC 0.950" in numbers and "ΔAUC vs m3 0.050, 95% CI 0.020 to 0.080" in numbers
    assert "CR: m3 AUC 0.900" in numbers and "ΔAUC vs m1 −0.050, 95% CI −0.080 to −0.020" in numbers
    assert kf.text.count(". ") == 1  # two sentences: the verdict, the numbers


def test_best_model_sentences_do_not_depend_on_the_order_of_references(classify: Path) -> None:
    """The same key finding whatever the order of the references in auc.csv and auc_comparison.csv."""
    _separability_folder(classify, -0.004, 0.02)
    before = key_finding("classification", classify)
    for name in ("auc.csv", "auc_comparison.csv"):
        t = pd.read_csv(classify / name)
        order = {r: k for k, r in enumerate(reversed(list(dict.fromkeys(t["reference"]))))}
        t.sort_values("reference", key=lambda c: c.map(order), kind="stable").to_csv(
            classify / name, index=False
        )
    assert pd.read_csv(classify / "auc.csv")["reference"].iloc[0] != "CR"
    assert key_finding("classification", classify) == before


def test_without_comparisons_the_line_says_separability_was_not_assessed(classify: Path) -> None:
    # a point-AUC table (no counts.csv: not the files of a bootstrap run), e.g. published AUCs
    assert (
        "(published or point AUCs: separability cannot be assessed)"
        in key_finding("classification", classify).text
    )
    pd.DataFrame(
        {"finding": ["macro"], "reference": ["CR"], "n_pos": [1], "n_neg": [1], "n_dropped": [0]}
    ).to_csv(
        classify / "counts.csv", index=False
    )  # the files of `cxreval classify`, but no auc_comparison.csv
    assert "separability not assessed: no auc_comparison.csv" in key_finding("classification", classify).text


def test_kappa_outside_its_low_high_range_is_named_as_a_different_measure(
    synthetic_results: Path, tmp_path: Path
) -> None:
    d = tmp_path / "agree"
    shutil.copytree(synthetic_results / "agree", d)
    ag = pd.read_csv(d / "agreement.csv")
    ag.loc[ag["finding"] == "micro", ["kappa_w", "kappa_low", "kappa_high"]] = [0.56, 0.64, 0.64]
    ag.to_csv(d / "agreement.csv", index=False)
    kf = key_finding("agreement", d)
    assert "binary κ 0.64 to 0.64 (Low–High" in kf.text and "a different measure, is 0.56" in kf.text
    assert "κ 0.56, " not in kf.text  # never a headline κ outside the range printed beside it


def test_a_plan_folder_is_a_relabelling_section_not_a_classification(synthetic_results: Path) -> None:
    # its auc.csv is the two-phase estimate (no reference column): shown in the plan's own section
    sections = build_sections(synthetic_results / "plan")
    assert [s.kind for s in sections] == ["relabelling"]
    assert "relabelling" not in {
        s.kind for s in build_sections(synthetic_results / "classify")
    }  # auc.csv alone
    blocks = {b.heading: b for b in sections[0].blocks}
    assert all(not b.missing for b in blocks.values())
    assert blocks["How many relabelled studies are enough?"].figure is not None
    assert blocks["Is the best model separable now?"].figure is not None
    assert "relabel.csv" in blocks["Studies to relabel, in priority order"].html


def test_the_power_chart_says_why_its_curves_wobble_or_fall(synthetic_results: Path, tmp_path: Path) -> None:
    """Beside the power chart (its ``how``, shown under the figure): the bars as Monte Carlo error, a fall at small
    budgets as the two-phase interval's overconfidence, and this plan's own reading (draws in effect, each fall),
    the sentence of its summary.md; a fall planted in power.csv is read there."""
    from cxreval.planning._verdict import curve_falls

    d = _plan_copy(synthetic_results, tmp_path)
    power = pd.read_csv(d / "power.csv")
    first = power["finding"].iloc[0]
    rows = power["finding"] == first
    p = np.where(power.loc[rows, "budget"] == power.loc[rows, "budget"].min(), 0.0, 0.1)
    p[1] = 0.9  # up at the first budget, down after: beyond its Monte Carlo error
    power.loc[rows, "p_right"] = p
    power.loc[rows, "mc_se"] = 0.01
    power.to_csv(d / "power.csv", index=False)
    (d / "power.parquet").unlink(missing_ok=True)
    (sec,) = build_sections(d)
    how = {b.heading: b for b in sec.blocks}["How many relabelled studies are enough?"].how
    assert "±2 of its standard errors" in how and "overconfidence" in how
    assert "In this plan, the draws in effect once weighted:" in how
    assert " ".join(curve_falls(power)) in how and f"{first} falls from 0.90" in how
    assert "the interval's variance is estimated from few residuals" in how


def _plan_copy(synthetic_results: Path, tmp_path: Path) -> Path:
    d = tmp_path / "plan"
    shutil.copytree(synthetic_results / "plan", d)
    return d


def test_relabelling_finding_reads_the_comparison_and_the_power(
    synthetic_results: Path, tmp_path: Path
) -> None:
    d = _plan_copy(synthetic_results, tmp_path)
    comp = pd.read_csv(d / "comparison.csv")
    power = pd.read_csv(d / "power.csv")
    settled = comp[(comp["ci_low"] > 0) | (comp["ci_high"] < 0)]["finding"].tolist()
    assert settled == ["Edema"]  # Edema's models far apart, Effusion's close: the simulation's design
    kf = key_finding("relabelling", d)
    top = power["budget"].max()
    p = power[(power["finding"] == "Effusion") & (power["budget"] == top)]["p_right"].iloc[0]
    row = comp[comp["finding"] == "Effusion"].iloc[0]
    assert "for 1 of 2 findings (Edema)" in kf.text
    assert f"After {top} studies of the plan's sample are relabelled" in kf.text
    assert (
        f"the right decision on Effusion ({row['model_a']} against {row['model_b']}, now ΔAUC "
        f"{row['delta']:.3f}" in kf.text
    )
    assert kf.verdict == f"P(right decision) {p:.2f} at {top} studies"
    # every finding settled: no budget is needed
    comp.loc[comp["finding"] == "Effusion", ["ci_low", "ci_high"]] = [0.01, 0.2]
    comp.to_csv(d / "comparison.csv", index=False)
    (d / "comparison.parquet").unlink()
    kf = key_finding("relabelling", d)
    assert kf.verdict == "settled now" and "for 2 of 2 findings (Edema, Effusion)" in kf.text
