"""bench part latent:dependence in its quick mode: one row per case and method, the acceptance column filled, the
declared case numbers or "not available", and the independent case's latent estimate nearly unbiased (far less
biased than hard Dawid-Skene labels, which the readers' errors attenuate).

The bench is run as a subprocess (no test imports a bench script); the full sizes and their numbers are in
bench/RESULTS.md.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cxreval.latent import evaluate_latent_auc

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CASES = (
    "independent",
    "dependent pair, declared",
    "dependent pair, not declared",
    "hard cases, strong",
    "hard cases, mild",
    "prevalence 0.02-0.05",
    "one expert, two weak readers",
)
METHODS = ("latent (default)", "Dawid-Skene (hard)", "majority vote (hard)", "best single reader")
#: The cases that also fit with dependent='none' (every reader independent), and that row's method.
INDEPENDENT_CASES = ("dependent pair, not declared",)
INDEPENDENT = "latent (dependent='none')"


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("bench")
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "latent:dependence",
            "--quick",
            "--results",
            str(tmp / "results"),
            "--markdown",
            str(tmp / "RESULTS.md"),
            "--expected",
            str(tmp / "expected"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "CXREVAL_PEER_PYTHON": ""},
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    part = json.loads((tmp / "results" / "latent.json").read_text())["parts"][0]
    assert part["part"] == "dependence" and part["status"] == "ok", part.get("error")
    assert "latent:dependence" in (tmp / "RESULTS.md").read_text()
    return part["tables"][0]


def test_one_row_per_case_and_method_with_the_acceptance_filled(table):
    cols = table["columns"]
    assert cols[:2] == ["case", "method"] and cols[-1] == "acceptance"
    rows = {(r[0], r[1]): dict(zip(cols, r)) for r in table["rows"]}
    declared = "dependent pair, declared"
    takes_dependent = "dependent" in inspect.signature(evaluate_latent_auc).parameters
    for case in CASES:
        methods = METHODS if case != declared or takes_dependent else METHODS[:1]
        if case in INDEPENDENT_CASES:  # every reader independent, beside the default
            methods = (METHODS[0], INDEPENDENT, *METHODS[1:])
        assert [m for c, m in rows if c == case] == list(methods), case
        verdict = rows[(case, METHODS[0])]["acceptance"]
        assert verdict == "pass" or verdict.startswith(("fail: ", "not available")), verdict
    if not takes_dependent:
        assert rows[(declared, METHODS[0])]["mean bias"].startswith("not available in this version")
    assert len(table["rows"]) == sum(len(METHODS) for _ in CASES) + len(INDEPENDENT_CASES) - (
        0 if takes_dependent else 3
    )


def test_independent_readers_leave_the_latent_estimate_nearly_unbiased(table):
    cols = table["columns"]
    rows = {r[1]: dict(zip(cols, r)) for r in table["rows"] if r[0] == "independent"}
    latent = float(rows["latent (default)"]["mean bias"])
    ds = float(rows["Dawid-Skene (hard)"]["mean bias"])
    assert abs(latent) <= 0.03
    assert ds < -0.04 and abs(latent) < abs(ds) / 2
    assert float(rows["latent (default)"]["95% coverage"].rstrip("%")) >= 75
