"""The user guide runs: every Python code block of every page under ``docs/`` is executed, page by page and in
order (one namespace per page, in a temporary working folder), and every ``cxreval ...`` line of its ``bash``
blocks is run through the CLI's ``main`` and must exit 0. A page that needs ``../shared/data`` says so in a
block starting with ``# needs: shared_data`` and is skipped visibly when the data are absent."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
MAX_JOB_LINES = 5


def _blocks(page: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(page.read_text())]


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if any(lang == "python" for lang, _ in _blocks(p)))


def _commands(code: str) -> list[list[str]]:
    out = []
    for line in code.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line.startswith("cxreval "):
            out.append(shlex.split(line)[1:])
    return out


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_every_code_block_of_the_page_runs(page, tmp_path, monkeypatch, request):
    from cxreval.cli.main import main

    blocks = _blocks(page)
    if any(code.startswith("# needs: shared_data") for _, code in blocks):
        data = request.getfixturevalue("shared_data")  # skips visibly without ../shared/data
        monkeypatch.setenv(
            "CXREVAL_DATA_MIRROR", os.environ.get("CXREVAL_DATA_MIRROR", str(data))
        )  # run in tmp
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"guide_{page.stem}"}
    for i, (lang, code) in enumerate(blocks):
        where = f"{page.name}, code block {i + 1}"
        if lang == "python":
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the guide's own code
        elif lang == "bash":
            for argv in _commands(code):
                assert main(argv) == 0, f"{where}: cxreval {shlex.join(argv)} failed"


def test_the_guide_has_every_page_and_a_python_block_on_each():
    expected = {
        "index.md",
        "getting-started.md",
        "compare-references.md",
        "report-labels.md",
        "reader-study.md",
        "fusion.md",
        "localization.md",
        "iqa.md",
        "dask.md",
        "api.md",
    }
    assert expected <= {p.name for p in DOCS.glob("*.md")}
    assert expected - {"index.md", "api.md"} <= {p.name for p in _pages()}
    nav = (DOCS.parent / "mkdocs.yml").read_text()
    assert all(name in nav for name in expected)


def test_each_main_job_is_at_most_five_lines():
    """Blocks marked ``# job: <name>`` do one of the main jobs from DataFrames in at most five lines."""
    jobs = {}
    for page in _pages():
        for lang, code in _blocks(page):
            first, _, rest = code.partition("\n")
            if lang == "python" and first.startswith("# job: "):
                lines = [ln for ln in rest.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
                jobs[first.removeprefix("# job: ").strip()] = len(lines)
    assert set(jobs) >= {
        "AUC with CIs for many models x references",
        "ranking stability",
        "agreement",
        "fusion",
        "report labels",
        "localization",
        "IQA scores",
        "metric vs expert",
    }
    assert {k: n for k, n in jobs.items() if n > MAX_JOB_LINES} == {}


def test_every_page_is_reachable_from_the_index_and_the_navigation():
    """A reader who opens ``index.md`` (or the site's navigation) finds every page of the guide."""
    index = (DOCS / "index.md").read_text()
    nav = (DOCS.parent / "mkdocs.yml").read_text()
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert not {p for p in pages if f"]({p})" not in index}, "pages not linked from docs/index.md"
    assert not {p for p in pages if f": {p}" not in nav}, "pages not in mkdocs.yml's nav"
