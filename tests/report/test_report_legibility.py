"""The report at 1400 x 900 in headless Chromium, one check per way it has been hard to read: key findings 10 and
above numbered in full, no figure title under the Plotly toolbar, the best model's paired differences one interval
per row with legible labels, no legend cut, fusion method names quoted as names ("the worst is “and”"), each audit
table described in its own words, the relabelling plan among the first five key findings with its study list
open near the top of its section, decision curves whose every finding (a rare one as a common one) fills its
axis without running off it, and the subgroup forest plots one marker per row with legible labels beside the
reliability diagrams. The report is built from small result folders written here (10 models, 11 references, a
fusion whose methods are called ``and``/``or``, an audit with its seven tables, a plan, the decision curves of 10
models on findings of 1% to 20% prevalence, and the synthetic results' 10 models' subgroup gaps under two
references with their calibration)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.report import write_report
from cxreval.report._blocks import Unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_FACTS = """
function box(e) { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom, h: r.height}; }
function meets(a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; }
const ol = document.querySelector('#key-findings ol.kf-list');
const olBox = box(ol);
const numbers = Array.from(ol.querySelectorAll('li.kf')).map((li, i) => {
  const n = li.querySelector('.kf-number');
  const b = n ? box(n) : null;
  return {i: i + 1, text: n ? n.textContent : null, inside: !!b && b.l >= olBox.l - 0.5 && b.r <= olBox.r + 0.5,
          kind: li.dataset.kind};
});
const figures = Array.from(document.querySelectorAll('.plotly-graph-div')).map(d => {
  const title = d.querySelector('.g-gtitle text');
  const bar = d.querySelector('.modebar');
  const svg = box(d.querySelector('svg.main-svg'));
  const legend = d.querySelector('g.legend');
  const rows = {};
  d.querySelectorAll('g.trace.scatter path.point').forEach(p => {
    const b = box(p); if (b.h > 0) { const y = Math.round(b.t + b.h / 2); rows[y] = (rows[y] || 0) + 1; }
  });
  const ticks = Array.from(d.querySelectorAll('g.ytick text')).map(box).filter(b => b.h > 0).sort((a, b) => a.t - b.t);
  let overlaps = 0;
  for (let k = 1; k < ticks.length; k++) if (ticks[k].t < ticks[k - 1].b - 1) overlaps++;
  return {id: d.id, title: title ? title.textContent : '',
          under_toolbar: !!(title && bar && meets(box(title), box(bar))),
          legend_scrolls: Array.from(d.querySelectorAll('g.legend rect.scrollbar'))
              .some(r => parseFloat(r.getAttribute('height') || '0') > 0),
          legend_outside: !!legend && (box(legend).r > svg.r + 1 || box(legend).b > svg.b + 1),
          max_points_per_row: Math.max(0, ...Object.values(rows)), tick_overlaps: overlaps, n_ticks: ticks.length};
});
const curves = Array.from(document.querySelectorAll('.plotly-graph-div')).filter(d => {
  const t = d.querySelector('.g-gtitle text'); return t && t.textContent.startsWith('Decision curve'); });
const decision = curves.map(d => {
  d.scrollIntoView();
  const menu = d.querySelector('g.updatemenu-container');
  const title = d.querySelector('.g-gtitle text');
  const buttons = d.layout.updatemenus && d.layout.updatemenus.length ? d.layout.updatemenus[0].buttons : [];
  const panels = buttons.map(b => {
    Plotly.update(d, b.args[0], b.args.length > 1 ? b.args[1] : {});  // what choosing it in the menu does
    const area = box(d.querySelector('g.bglayer rect.bg') || d.querySelector('rect.nsewdrag'));
    const lines = Array.from(d.querySelectorAll('g.trace.scatter')).filter(g => g.style.opacity !== '0'
        && g.getAttribute('visibility') !== 'hidden' && g.querySelector('path.js-line'))
      .map(g => ({name: (g.__data__ && g.__data__[0] && g.__data__[0].trace) ? g.__data__[0].trace.name : '',
                  b: box(g.querySelector('path.js-line'))}));
    const models = lines.filter(l => l.name !== 'treat all' && l.name !== 'treat none');
    const top = Math.min(...models.map(l => l.b.t));
    return {label: b.label, n_lines: lines.length, area_h: area.h, above_area: area.t - top,
            reach: (area.b - top) / area.h};
  });
  return {menu_over_title: !!(menu && title && meets(box(menu.querySelector('rect.updatemenu-header') || menu), box(title))),
          menu_box: menu ? box(menu) : null, title_box: title ? box(title) : null, panels: panels};
});
const plan = document.querySelector('section.report-section[data-kind="relabelling"]');
const first = plan ? plan.querySelector('div.block') : null;
const details = first ? first.querySelector('details.tables') : null;
const shownRows = details ? Array.from(details.querySelectorAll('table.data tbody tr'))
    .filter(r => r.getBoundingClientRect().height > 0).length : 0;
const audits = Array.from(document.querySelectorAll('section.report-section[data-kind="audit"]'));
return {numbers: numbers, figures: figures,
        fusion_texts: Array.from(document.querySelectorAll('li.kf[data-kind="fusion"] .kf-text')).map(e => e.textContent),
        audit_how: audits.map(a => Array.from(a.querySelectorAll('p.how')).map(p => p.textContent)),
        plan_first_heading: first ? first.querySelector('h3').textContent : '',
        plan_list_open: !!details && details.open, plan_rows_shown: shownRows,
        plan_list_offset: details ? box(details.querySelector('table.data')).t - box(plan).t : -1,
        missing: Array.from(document.querySelectorAll('#key-findings .note.missing li'))
            .map(li => ({text: li.textContent, bottom: box(li).b})),
        viewport: window.innerHeight, decision: decision};
"""


def _fusion_with_method_names(d: Path) -> None:
    """A fusion folder whose methods are called as the demo calls them, ``and`` the worst."""
    rows = []
    for m, k in (("mv", 0.9), ("or", 0.5), ("and", 0.26), ("ds", 0.8)):
        for f in ("Atelectasis", "Edema", "macro"):
            rows.append((m, f, k, k - 0.1, k + 0.05, k, k - 0.1, k + 0.1, 500))
    pd.DataFrame(
        rows,
        columns=["method", "finding", "kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high", "n"],
    ).to_csv(d / "fusion_agreement.csv", index=False)


def _audit_with_its_tables(d: Path) -> None:
    """audit.json and the seven tables DatasetAudit writes beside it (small, in their columns)."""
    from cxreval.datasets.audit import DatasetAudit

    (d / "audit.json").write_text(json.dumps({"dataset": "chestxray14", "n_images": 120, "n_patients": 40}))
    tables = {
        "findings": pd.DataFrame(
            {"finding": ["Effusion"], "n_images": [10], "n_patients": [5], "image_fraction": [0.1]}
        ),
        "views": pd.DataFrame({"view": ["PA", "AP"], "n_images": [70, 50], "n_patients": [30, 20]}),
        "boxes": pd.DataFrame(
            {"finding": ["Effusion"], "n_boxes": [3], "n_images": [3], "n_images_labelled": [3]}
        ),
        "split_sizes": pd.DataFrame(
            {
                "split": ["test", "train_val"],
                "n_studies": [20, 100],
                "n_patients": [8, 32],
                "n_unknown": [0, 0],
            }
        ),
        "split_pairs": pd.DataFrame(
            {
                "split_a": ["test"],
                "split_b": ["train_val"],
                "n_shared_patients": [0],
                "n_studies_a": [0],
                "n_studies_b": [0],
            }
        ),
        "shared_patients": pd.DataFrame(
            {"patient_id": ["p1"], "n_splits": [2], "splits": ["test,train_val"], "n_studies": [2]}
        ),
        "published_counts": pd.DataFrame(
            {
                "quantity": ["images"],
                "finding": [""],
                "published": [108948],
                "audited": [120],
                "published_in": ["Wang et al. 2017"],
            }
        ),
    }
    assert set(tables) == set(DatasetAudit.FILES) - {"audit"}
    for key, df in tables.items():
        df.to_csv(d / DatasetAudit.FILES[key], index=False)


DECISION_MODELS = (
    "dd_densenet121_v2_logits",
    "dd_densenet201",
    "dd_mobilenet_v2",
    "dd_resnet152",
    "dd_resnet50",
    "hy_densenet121_nih25",
    "hy_densenet121_nih25_lrdecay033",
    "hy_densenet121_results",
    "hy_densenet121_test1",
    "jrzech_densenet121",
)
"""The NIH fold's model names (the demo's decision curves), long enough to test the legend."""


def _decision_curves(d: Path) -> None:
    """What ``cxreval classify --operating-point youden --decision-curve 0.01:0.5:0.01`` writes for 10 models on a
    rare finding (1%, the first panel), a common one (20%) and one between (6%)."""
    from cxreval.cli.main import main

    g = np.random.default_rng(0)
    n = 3000
    studies = [f"s{i:05d}" for i in range(n)]
    labels, preds = [], []
    for finding, prevalence in (("Hernia", 0.01), ("Infiltration", 0.20), ("Nodule", 0.06)):
        y = g.random(n) < prevalence
        state = np.where(y, "positive", "negative")
        labels.append(
            pd.DataFrame(
                {
                    "study_id": studies,
                    "patient_id": studies,
                    "finding": finding,
                    "source": "R0",
                    "state": state,
                }
            )
        )
        logit0 = np.log(prevalence / (1 - prevalence))
        for k, model in enumerate(DECISION_MODELS):
            x = logit0 + (1.0 + 0.15 * k) * (y - prevalence) * 3 + g.normal(size=n)
            preds.append(
                pd.DataFrame(
                    {"study_id": studies, "model": model, "finding": finding, "score": 1 / (1 + np.exp(-x))}
                )
            )
    pd.concat(labels).to_csv(d.parent / "dc_labels.csv", index=False)
    pd.concat(preds).to_csv(d.parent / "dc_preds.csv", index=False)
    args = ["-p", str(d.parent / "dc_preds.csv"), "-l", str(d.parent / "dc_labels.csv"), "--n-resamples", "0"]
    args += ["--operating-point", "youden", "--decision-curve", "0.01:0.5:0.01"]
    assert main(["classify", *args, "-o", str(d)]) == 0


def _browser():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_cxreval_browser", Path(__file__).with_name("test_report_browser.py")
    )
    assert spec is not None and spec.loader is not None
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    return browser


def _facts_of(folders: list[Path], page: Path, unavailable: Sequence = ()) -> dict:
    """The report of ``folders`` written to ``page``, opened at 1400 x 900: what :data:`_FACTS` finds there."""
    res = write_report(folders, page, title="legibility", unavailable=unavailable)
    out = _browser().open_in_chromium(res.path, None, size=(1400, 900), script=_FACTS)
    assert [m for m in out["logs"] if m.get("level") == "SEVERE"] == []
    return out["script"]


@pytest.fixture(scope="module")
def page_facts(synthetic_results: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from _factories import classify_and_rank_folders

    root = classify_and_rank_folders(
        tmp_path_factory.mktemp("legibility"), n_models=10, n_refs=11, n_resamples=50, n_studies=150
    )
    for name, fill in (("fuse_named", _fusion_with_method_names), ("audit", _audit_with_its_tables)):
        (root / name).mkdir()
        fill(root / name)
    folders = [root / "auc", root / "rank", synthetic_results, root / "fuse_named", root / "audit"]
    missing = [
        Unavailable("Image quality assessment", "not built: no radiographs", "cxreval data fetch --all")
    ]
    return _facts_of(folders, root / "report.html", unavailable=missing)


@pytest.fixture(scope="module")
def decision_facts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The report of one classify folder with the decision curves of 10 models (its own page: one reference)."""
    root = tmp_path_factory.mktemp("legibility-decision")
    _decision_curves(root / "decision")
    return _facts_of([root / "decision"], root / "report.html")


def test_key_findings_ten_and_above_are_numbered_in_full(page_facts: dict) -> None:
    numbers = page_facts["numbers"]
    assert len(numbers) >= 12
    for n in numbers:
        assert n["text"] == f"{n['i']}." and n["inside"], n  # "10." whole, inside the scrolled list


def test_no_figure_title_under_the_toolbar(page_facts: dict) -> None:
    figs = page_facts["figures"]
    assert figs[0]["id"] == "fig-headline"
    assert [f["id"] for f in figs if f["under_toolbar"]] == []


def test_best_model_differences_one_interval_per_row(page_facts: dict) -> None:
    """11 references x 3 findings of comparisons: one panel per finding (menu), each comparison its own row, the
    row labels clear of each other."""
    sep = [
        f for f in page_facts["figures"] if f["title"].startswith("Paired AUC differences of the best model")
    ]
    assert sep  # classify's folder and rank's each hold auc_comparison.csv
    for f in sep:
        assert f["max_points_per_row"] == 1 and f["tick_overlaps"] == 0 and f["n_ticks"] >= 11, f


def test_no_legend_is_cut(page_facts: dict) -> None:
    """The bump chart of 10 models lists all ten without a scroll bar; no legend runs off its figure."""
    bump = [f for f in page_facts["figures"] if f["title"].startswith("Model ranks across references")]
    assert bump
    assert [f["id"] for f in page_facts["figures"] if f["legend_scrolls"] or f["legend_outside"]] == []


def test_fusion_method_names_are_quoted(page_facts: dict) -> None:
    text = next(t for t in page_facts["fusion_texts"] if "“and”" in t)
    assert "is “mv” (κ" in text and "the worst is “and” (κ 0.26: fair)" in text, text


def test_each_audit_table_is_described_in_its_own_words(page_facts: dict) -> None:
    how = max(page_facts["audit_how"], key=len)  # the folder with all seven tables
    assert len(how) == 8 and len(set(how)) == len(how), how  # audit.json's counts and its seven tables
    assert not any("as written beside" in h for h in how)


def test_what_to_relabel_comes_early_and_open(page_facts: dict) -> None:
    kinds = [n["kind"] for n in page_facts["numbers"]]
    assert "relabelling" in kinds[:5], kinds
    assert page_facts["plan_first_heading"] == "Studies to relabel, in priority order"
    assert page_facts["plan_list_open"] and page_facts["plan_rows_shown"] >= 10
    assert 0 < page_facts["plan_list_offset"] < 900, page_facts[
        "plan_list_offset"
    ]  # on the section's first screen


def test_decision_curves_fill_their_axis_for_a_rare_and_a_common_finding(decision_facts: dict) -> None:
    """Each finding chosen in the menu draws 10 models and the two strategies; the models' curves start inside the
    plot area (none runs off its top, the common finding's neither) and reach its upper third (the rare finding's
    are no flat line at 0); the menu is clear of the title."""
    (curve,) = decision_facts["decision"]
    assert not curve["menu_over_title"]
    assert [p["label"] for p in curve["panels"]] == [
        f"{f} · R0" for f in ("Hernia", "Infiltration", "Nodule")
    ]
    for p in curve["panels"]:
        assert p["n_lines"] == len(DECISION_MODELS) + 2, p
        assert p["above_area"] <= 1 and p["reach"] >= 2 / 3, p


def test_separability_figure_has_a_panel_per_finding() -> None:
    """Without a browser: the figure of ``auc_comparison.csv`` has one menu entry per finding, every row label
    once per panel, each comparison's reference in its row label."""
    from cxreval.classification import SeparabilityResult

    rng = np.random.default_rng(0)
    rows = [
        (f, f"R{r}", "M0", f"M{k}", d, d - 0.03, d + 0.03)
        for f in ("macro", "Edema", "Effusion")
        for r in range(11)
        for k, d in ((1, float(rng.normal(0.02, 0.01))), (2, 0.05))
    ]
    table = pd.DataFrame(
        rows, columns=["finding", "reference", "model_a", "model_b", "difference", "ci_low", "ci_high"]
    )
    fig = SeparabilityResult.figure(table)
    menu = fig.layout.updatemenus[0].buttons
    assert [b.label for b in menu] == ["finding: macro", "finding: Edema", "finding: Effusion"]
    for b in menu:
        labels = list(b.args[1]["yaxis.ticktext"])
        assert len(labels) == len(set(labels)) == 22 and labels[0] == "R0: M0 − M1", labels[:3]
    assert fig.layout.height >= 190 + 24 * 22


def test_what_is_missing_is_on_the_first_screen(page_facts: dict) -> None:
    """A part not available is named, with the command that brings it, above the fold of a 1400 x 900 window
    (above the headline figure)."""
    (item,) = page_facts["missing"]
    assert item["text"] == "cxreval data fetch --all brings: Image quality assessment"
    assert 0 < item["bottom"] <= page_facts["viewport"], item


def test_subgroup_forests_one_marker_per_row_and_reliability_diagrams(page_facts: dict) -> None:
    """10 models x 2 groups under two references: each reference's marker on its own line of the row, the row labels
    clear of each other; the reliability diagram drawn with its legend whole (test_no_legend_is_cut)."""
    figs = page_facts["figures"]
    forests = [f for f in figs if f["title"].startswith("Subgroup gaps of the")]
    assert len(forests) == 2, [f["title"] for f in figs]  # AUC and FNR
    for f in forests:
        assert f["max_points_per_row"] == 1 and f["tick_overlaps"] == 0 and f["n_ticks"] >= 20, f
    assert [f for f in figs if f["title"].startswith("Reliability diagram: Edema")]
