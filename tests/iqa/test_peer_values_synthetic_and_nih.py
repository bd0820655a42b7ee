"""GMSD, MDSI, HaarPSI, HaarPSImed, FSIM, VSI and DSS against piq 0.8.0, PIQE and NIQE against pyiqa 0.1.16.

The values are in tests/iqa/data/reference_values_iqa2.csv, made by tests/iqa/make_reference_values_iqa2.py in a
separate venv (never in CI) on two synthetic 512x512 pairs and an NIH radiograph degraded three ways
(fixtures ``synthetic_pairs`` and ``nih_pairs`` of tests/iqa/conftest.py). Each row's ``settings`` holds
the cxreval options that reproduce the peer's convention; full-reference metrics compare ``(reference,
test)``, no-reference rows name the image as ``pair:ref`` or ``pair:test``. NIQE uses the generator's made-up
model (``niqe_model_file``), not the published one. Images are on the 0..255 scale (``data_range=255``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from cxreval.iqa import get_metric

CSV = Path(__file__).parent / "data" / "reference_values_iqa2.csv"

# metric -> relative tolerance; the comment gives the largest relative difference seen and why
TOL = {
    "gmsd": 1e-6,  # conventions match piq exactly; seen < 1e-12
    "mdsi": 1e-6,  # conventions match piq exactly; seen < 1e-12
    "haarpsi": 1e-6,  # conventions match piq; seen < 1e-12
    "haarpsi_med": 1e-6,  # conventions match piq; seen < 1e-12
    "fsim": 1e-5,  # piq's conventions via settings; seen < 1e-6
    "vsi": 1e-6,  # piq's conventions via settings; seen < 1e-14
    "dss": 1e-6,  # same conventions as piq; seen < 2e-8 (piq keeps subband scores in float32)
    "piqe": 1e-5,  # pyiqa's conventions via settings; seen < 2e-6
    "niqe": 1e-3,  # the AGGD shape is picked on a 0.001 grid, so float differences can move it one
    # step; seen < 3e-4
}

with open(CSV, newline="") as _fh:
    ROWS = list(csv.DictReader(_fh))
SLOW_ON_NIH = {"piqe", "niqe"}  # no-reference rows score both 1024x1024 images of each pair


def _params(prefix: str) -> list[object]:
    return [
        pytest.param(
            r,
            id=f"{r['metric']}-{r['pair']}",
            marks=[pytest.mark.slow] if prefix == "nih" and r["metric"] in SLOW_ON_NIH else [],
        )
        for r in ROWS
        if r["pair"].startswith(prefix)
    ]


def _score(row: dict[str, str], pairs: dict[str, tuple[np.ndarray, np.ndarray]], niqe_model: Path) -> float:
    """cxreval's value for a CSV row: the registered metric, with the row's settings, on the row's pair."""
    pair, _, which = row["pair"].partition(":")
    ref, test = pairs[pair]
    spec = get_metric(row["metric"])
    settings = json.loads(row["settings"])
    if spec.reference == "full":
        return spec(ref, test, data_range=255, **settings)
    if row["metric"] == "niqe":
        settings["model"] = niqe_model
    return spec(ref if which == "ref" else test, data_range=255, **settings)


def test_every_metric_has_a_tolerance():
    assert {r["metric"] for r in ROWS} == set(TOL)
    assert sum(r["pair"].startswith("synthetic") for r in ROWS) == 7 * 2 + 2 * 4
    assert sum(r["pair"].startswith("nih") for r in ROWS) == 7 * 3 + 2 * 6


@pytest.mark.parametrize("row", _params("synthetic"))
def test_matches_peer_on_synthetic_pairs(row, synthetic_pairs, niqe_model_file):
    got = _score(row, synthetic_pairs, niqe_model_file)
    assert got == pytest.approx(float(row["value"]), rel=TOL[row["metric"]])


@pytest.mark.shared_data
@pytest.mark.parametrize("row", _params("nih"))
def test_matches_peer_on_nih_radiograph(row, nih_pairs, niqe_model_file):
    got = _score(row, nih_pairs, niqe_model_file)
    assert got == pytest.approx(float(row["value"]), rel=TOL[row["metric"]])
