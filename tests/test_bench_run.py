"""bench/run.py: suites listed, one real part run end to end (results JSON, generated RESULTS.md), its
deterministic figures compared with stored ones (an altered figure fails, naming it), a missing peer recorded.

The bench is run as a subprocess (no test imports a bench script); the part run for real is the XQA agreement
cases (well under a second of computation).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "bench" / "run.py"
PART = "agreement:xqa_cases"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CXREVAL_PEER_PYTHON": "", **(env or {})}
    return subprocess.run(
        [sys.executable, str(RUN), *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600
    )


def _paths(tmp_path: Path) -> list[str]:
    return [
        "--results",
        str(tmp_path / "results"),
        "--markdown",
        str(tmp_path / "RESULTS.md"),
        "--expected",
        str(tmp_path / "expected"),
    ]


def test_list_names_every_suite_and_part_and_bad_targets_exit_2():
    r = _run("--list")
    assert r.returncode == 0, r.stderr
    for suite in (
        "classification",
        "ranking",
        "agreement",
        "fusion",
        "localization",
        "iqa",
        "labeller",
        "reader",
        "predict",
        "scale",
        "cli",
    ):
        assert f"\n{suite}: " in f"\n{r.stdout}", suite
    assert "  agreement:xqa_cases" in r.stdout
    for bad in ("no_such_suite", "agreement:no_such_part"):
        r = _run(bad)
        assert r.returncode == 2 and "no_such" in r.stderr, (bad, r.stderr)


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A run of the part that stores its figures (``--update-expected``) in a scratch folder."""
    tmp = tmp_path_factory.mktemp("bench")
    r = _run(PART, "--quick", "--update-expected", *_paths(tmp))
    assert r.returncode == 0, r.stdout + r.stderr
    return tmp


def test_a_part_writes_structured_results_and_the_generated_markdown(stored):
    doc = json.loads((stored / "results" / "agreement.json").read_text())
    assert doc["suite"] == "agreement" and [p["part"] for p in doc["parts"]] == ["xqa_cases"]
    part = doc["parts"][0]
    assert (
        part["status"] == "ok"
        and part["quick"] is True
        and part["command"] == f"python bench/run.py {PART} --quick"
    )
    assert part["peak_rss_mib"] > 10 and part["wall_s"] > 0 and len(part["load_average"]) == 6
    table = part["tables"][0]
    assert (
        table["columns"][0] == "both_uncertain" and table["rows"][0][1:] == ["1.000"] * 5
    )  # identical labels
    assert part["checked"]["Table 30 | agree"] == "1.000 1.000 1.000 1.000 1.000"
    md = (stored / "RESULTS.md").read_text()
    assert "## Agreement: label sources and readers" in md and f"### {PART}" in md
    assert f"Re-run: `python bench/run.py {PART} --quick`" in md
    assert "| agree (default) | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |" in md
    assert "issue" not in md.lower()


def test_check_passes_on_the_same_figures_and_names_an_altered_one(stored, tmp_path):
    (tmp_path / "expected").mkdir()
    expected = json.loads((stored / "expected" / "agreement.json").read_text())
    assert expected["quick"]["xqa_cases"]
    (tmp_path / "expected" / "agreement.json").write_text(json.dumps(expected))
    r = _run(PART, "--quick", "--check", *_paths(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "DIFFERENT" not in r.stdout

    key = "Table 30 | disagree"
    right = expected["quick"]["xqa_cases"][key]
    expected["quick"]["xqa_cases"][key] = "0.999 " + right.split(" ", 1)[1]
    (tmp_path / "expected" / "agreement.json").write_text(json.dumps(expected))
    r = _run(PART, "--quick", "--check", *_paths(tmp_path))
    assert r.returncode == 1
    assert f"DIFFERENT {PART}: {key}: expected '0.999 " in r.stdout and f"got {right!r}" in r.stdout


@pytest.mark.skipif(importlib.util.find_spec("crowdkit") is not None, reason="crowd-kit is installed here")
def test_a_missing_peer_is_recorded_not_a_failure(tmp_path):
    r = _run(
        "fusion:vindr_crowdkit", "--quick", "--peer-python", str(tmp_path / "no-python"), *_paths(tmp_path)
    )
    assert r.returncode == 0, r.stdout + r.stderr
    part = json.loads((tmp_path / "results" / "fusion.json").read_text())["parts"][0]
    assert part["status"] == "unavailable" and part["peer"]["name"] == "crowd-kit"
    assert part["peer"]["unavailable"].startswith("peer unavailable: no interpreter imports crowdkit")
    assert "peer unavailable" in (tmp_path / "RESULTS.md").read_text()
