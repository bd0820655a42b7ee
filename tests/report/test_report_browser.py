"""Open the report in headless Chromium (Debian chromium + chromium-driver; no browser download):
no JavaScript console errors, every figure rendered as a non-empty SVG, a screenshot saved."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from cxreval.report import write_report

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def _chromium() -> tuple[str, str]:
    binary = next((b for b in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                   if b and Path(b).exists()), None)
    driver = next((d for d in (shutil.which("chromedriver"), "/usr/bin/chromedriver") if d and Path(d).exists()), None)
    if binary is None or driver is None:
        pytest.skip("Debian chromium and chromium-driver are not installed "
                    "(apt-get install -y chromium chromium-driver); .ci/run installs them")
    return binary, driver


def open_in_chromium(page: Path, screenshot: Path | None = None) -> dict[str, object]:
    """Load ``page`` headless; return console messages and, per figure, what it drew."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = _chromium()
    profile = tempfile.mkdtemp(prefix="cxreval-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,1600"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
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
        logs = drv.get_log("browser")
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            height = drv.execute_script("return document.body.scrollHeight")
            drv.set_window_size(1280, min(int(height) + 100, 16000))
            drv.save_screenshot(str(screenshot))
        return {"figures": figures, "logs": logs, "title": drv.title}
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_report_renders_in_headless_chromium(synthetic_results: Path, tmp_path: Path) -> None:
    res = write_report([synthetic_results], tmp_path / "report.html", title="synthetic report")
    assert res.n_figures >= 10
    out = open_in_chromium(res.path, ARTIFACTS / "report_synthetic.png")
    severe = [m for m in out["logs"] if m.get("level") == "SEVERE"]
    assert severe == [], severe
    figs = out["figures"]
    assert len(figs) == res.n_figures
    for f in figs:
        assert f["width"] > 100 and f["height"] > 100, f
        assert f["n_elements"] > 20 and f["n_traces"] > 0, f
    assert out["title"] == "synthetic report"
    assert (ARTIFACTS / "report_synthetic.png").stat().st_size > 10_000
