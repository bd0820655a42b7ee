"""Open the report in headless Chromium (Debian chromium + chromium-driver; no browser download):
the key-findings panel is the first content and each of its lines links to an existing section, no
JavaScript console errors, every figure rendered as a non-empty SVG with PNG and SVG download buttons,
long tables paginated; screenshots of the first screen and of each section saved in test-artifacts/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from browser_support import chromium_and_driver, launch_chromium
from cxreval.report import write_report

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


_chromium = chromium_and_driver


_PAGE_FACTS = """
    const main = document.querySelector('main');
    const kf = document.getElementById('key-findings');
    const links = Array.from(document.querySelectorAll('#key-findings a.kf-link')).map(a => {
        const id = decodeURIComponent(a.getAttribute('href').slice(1));
        const el = document.getElementById(id);
        return {href: a.getAttribute('href'), exists: !!el,
                is_section: !!el && el.tagName === 'SECTION' && el.classList.contains('report-section'),
                text: a.textContent};
    });
    const kfTop = kf ? kf.getBoundingClientRect().top : -1;
    const before = Array.from(document.body.querySelectorAll('h1, h2, h3, p, table, .plotly-graph-div, nav, ol, ul'))
        .filter(e => !kf.contains(e) && (e.compareDocumentPosition(kf) & Node.DOCUMENT_POSITION_FOLLOWING))
        .map(e => e.tagName + ':' + e.textContent.slice(0, 40));
    return {first_child: main.firstElementChild.id, key_lines: document.querySelectorAll('#key-findings li.kf').length,
            links: links, content_before_panel: before, panel_top: kfTop,
            sections: Array.from(document.querySelectorAll('section.report-section')).map(s => s.id),
            svg_buttons: document.querySelectorAll('.modebar-btn[data-title="Download plot as SVG"]').length,
            png_buttons: document.querySelectorAll('.modebar-btn[data-title^="Download plot"]').length
                         - document.querySelectorAll('.modebar-btn[data-title="Download plot as SVG"]').length,
            paged: document.querySelectorAll('table.paged').length, pagers: document.querySelectorAll('.pager').length,
            max_rows_shown: Math.max(0, ...Array.from(document.querySelectorAll('table.paged')).map(
                t => Array.from(t.tBodies[0].rows).filter(r => r.style.display !== 'none').length))};
"""


_SEARCH = """
    // open the first paginated table, type the first cell of its 25th row into its search box
    const t = document.querySelector('table.paged');
    if (!t) return null;
    t.closest('details').open = true;
    const rows = Array.from(t.tBodies[0].rows);
    const needle = rows[Math.min(24, rows.length - 1)].cells[0].textContent;
    const box = t.closest('.table-block').querySelector('.pager input');
    box.value = needle;
    box.dispatchEvent(new Event('input'));
    const visible = rows.filter(r => r.style.display !== 'none');
    return {needle: needle, n_rows: rows.length, n_visible: visible.length,
            all_match: visible.every(r => r.textContent.toLowerCase().includes(needle.toLowerCase())),
            n_matching: rows.filter(r => r.textContent.toLowerCase().includes(needle.toLowerCase())).length,
            info: t.closest('.table-block').querySelector('.pager-info').textContent};
"""


def open_in_chromium(
    page: Path,
    screenshot: Path | None = None,
    *,
    section_shots: Path | None = None,
    size: tuple[int, int] = (1280, 1000),
    script: str = "",
) -> dict[str, object]:
    """Load ``page`` headless; return console messages, page facts and, per figure, what it drew.

    ``screenshot``: the first screen (``size``, default 1280 x 1000) is saved there; ``section_shots``: a folder
    that receives one screenshot per section (``<section id>.png``); ``script``: JavaScript run once every figure
    is drawn, its return value under ``"script"``.
    """
    pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
    from selenium.webdriver.common.by import By

    drv, profile = launch_chromium(size, scrollbars=True)
    try:
        drv.set_page_load_timeout(120)
        drv.get(page.resolve().as_uri())
        drv.set_script_timeout(60)
        # wait until every Plotly div has finished its first draw
        figures = drv.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const t0 = Date.now();
            function check() {
              const divs = Array.from(document.querySelectorAll('.plotly-graph-div'));
              const ready = divs.every(d => d._fullLayout && d.querySelector('svg.main-svg'));
              if (!ready && Date.now() - t0 < 45000) { setTimeout(check, 200); return; }
              done(divs.map(d => {
                const svg = d.querySelector('svg.main-svg');
                const r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
                return {id: d.id, width: r.width, height: r.height,
                        n_elements: d.querySelectorAll('svg *').length,
                        n_traces: d.querySelectorAll('g.trace, g.hm, g.sankey, g.imagelayer image, '
                                                     + 'g.heatmaplayer image').length};
              }));
            }
            check();""")
        extra = drv.execute_script(script) if script else None
        facts = drv.execute_script(_PAGE_FACTS)
        facts["search"] = drv.execute_script(_SEARCH)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            drv.save_screenshot(str(screenshot))  # the first screen, as a reader opens the page
        shots = []
        if section_shots is not None:
            section_shots.mkdir(parents=True, exist_ok=True)
            for sid in facts["sections"]:
                el = drv.find_element(By.ID, sid)
                drv.execute_script("arguments[0].scrollIntoView();", el)
                path = section_shots / f"{sid}.png"
                drv.save_screenshot(str(path))  # the section's first screen
                shots.append(path)
        logs = drv.get_log("browser")
        return {
            "figures": figures,
            "logs": logs,
            "title": drv.title,
            "facts": facts,
            "shots": shots,
            "script": extra,
        }
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def check_page(out: dict[str, object], n_figures: int) -> None:
    """The acceptance checks shared by the synthetic and the demo report."""
    severe = [m for m in out["logs"] if m.get("level") == "SEVERE"]
    assert severe == [], severe
    facts = out["facts"]
    assert facts["first_child"] == "key-findings" and facts["content_before_panel"] == [
        "H1:" + out["title"][:40]
    ]
    assert 0 <= facts["panel_top"] < 200  # on the first screen, right under the title
    assert facts["key_lines"] == len(facts["links"]) >= 1
    for link in facts["links"]:
        assert link["exists"] and link["is_section"], link
    assert facts["svg_buttons"] == facts["png_buttons"] == n_figures
    assert facts["pagers"] == facts["paged"] and facts["max_rows_shown"] <= 20
    search = facts["search"]
    if search is not None:  # typing in the search box keeps exactly the matching rows (up to a page)
        assert search["all_match"] and search["n_visible"] == min(search["n_matching"], 20) >= 1, search
        assert search["info"].endswith(f"of {search['n_matching']}"), search
    figs = out["figures"]
    assert len(figs) == n_figures
    for f in figs:
        assert f["width"] > 100 and f["height"] > 100, f
        assert f["n_elements"] > 20 and f["n_traces"] > 0, f


def test_report_renders_in_headless_chromium(synthetic_results: Path, tmp_path: Path) -> None:
    res = write_report([synthetic_results], tmp_path / "report.html", title="synthetic report")
    assert res.n_figures >= 10
    out = open_in_chromium(
        res.path, ARTIFACTS / "report_synthetic.png", section_shots=ARTIFACTS / "report_synthetic_sections"
    )
    assert out["title"] == "synthetic report"
    check_page(out, res.n_figures)
    assert out["facts"]["key_lines"] == len(res.sections)
    assert out["facts"]["paged"] >= 1
    assert (ARTIFACTS / "report_synthetic.png").stat().st_size > 10_000
    assert len(out["shots"]) == len(out["facts"]["sections"]) and all(
        p.stat().st_size > 5_000 for p in out["shots"]
    )


def test_pdf_first_page_is_the_key_findings(synthetic_results: Path, tmp_path: Path) -> None:
    """``cxreval report --pdf`` prints through headless Chromium; page 1 holds the key findings, alone."""
    import subprocess

    from cxreval.cli.main import main

    _chromium()
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed; .ci/run installs it")
    out = tmp_path / "report.html"
    assert main(["report", str(synthetic_results), "--out", str(out), "--pdf", "--title", "pdf check"]) == 0
    pdf = out.with_suffix(".pdf")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    shutil.copy(pdf, ARTIFACTS / "report_synthetic.pdf") if ARTIFACTS.is_dir() else None

    def page(n: int) -> str:
        return subprocess.run(
            ["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(pdf), "-"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    first = " ".join(page(1).split())
    assert first.startswith("pdf check Key findings")
    for title in (
        "Classification: ROC-AUC per model and reference",
        "Label fusion",
        "How the verdicts are worded",
        "Landis & Koch",
    ):
        assert title in first, title
    assert "Contents" not in first and "Methods and provenance" not in first.replace(
        "see Methods and provenance", ""
    )
    second = " ".join(page(2).split())
    assert "Key findings" not in second and len(second) > 100


_LABELS = """
    const sel = 'h1, h2, h3, h4, summary, caption, figcaption, .caption, .kf, th, .plotly-graph-div svg text';
    return {labels: Array.from(document.querySelectorAll(sel)).map(e => e.textContent),
            text: document.body.innerText};
"""

FORBIDDEN = ("(default)", "— cxreval", "Figure rule")
"""What no heading, caption or figure label of the report may carry: a group nobody named, the command that wrote a
folder, the rule that chose a figure."""


def test_report_reads_for_a_clinician_at_1400_by_900(tmp_path: Path) -> None:
    """The report of a plain `classify` and `rank` run (models without a group, summary.md headed by the command):
    at 1400 x 900 no heading, caption or figure label carries (default), '— cxreval' or 'Figure rule', models are
    named as given, and the classification key finding is two sentences (verdict, numbers)."""
    from _factories import classify_and_rank_folders

    classify_and_rank_folders(tmp_path, n_models=4, n_refs=2, n_resamples=100)
    res = write_report(
        [tmp_path / "auc", tmp_path / "rank"], tmp_path / "report.html", title="Two references"
    )
    shot = ARTIFACTS / "report_clinician_1400x900.png"
    out = open_in_chromium(res.path, shot, size=(1400, 900), script=_LABELS)
    check_page(out, res.n_figures)
    labels_shown = out["script"]["labels"]
    assert any("M0" in t for t in labels_shown)  # the models as given, in the figures' labels
    for t in labels_shown:
        assert not any(bad in t for bad in FORBIDDEN), t
    page = res.path.read_text()
    for bad in FORBIDDEN:
        assert bad not in out["script"]["text"] and bad not in page, bad
    kf = next(s.key for s in res.sections if s.kind == "classification" and s.key is not None)
    sentences = [x for x in kf.text.split(". ") if x]
    assert len(sentences) == 2, kf.text
    assert shot.stat().st_size > 10_000
