"""HaarPSI and HaarPSImed against piq 0.8.0 (tests/iqa/data/reference_values_iqa2.csv, bench/iqa_reference_values_2.py)."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa.haarpsi import haarpsi, haarpsi_med

ROOT = Path(__file__).resolve().parents[2]
CSV = Path(__file__).parent / "data" / "reference_values_iqa2.csv"
# relative tolerance per metric (conventions match piq; differences seen < 1e-12)
TOL = {"haarpsi": 1e-6, "haarpsi_med": 1e-6}
FUNCS = {"haarpsi": haarpsi, "haarpsi_med": haarpsi_med}


def _refmod():
    spec = importlib.util.spec_from_file_location("iqa_ref2", ROOT / "bench" / "iqa_reference_values_2.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(metrics):
    with open(CSV) as fh:
        return [r for r in csv.DictReader(fh) if r["metric"] in metrics]


@pytest.mark.parametrize("row", [r for r in _rows(FUNCS) if r["pair"].startswith("synthetic")],
                         ids=lambda r: f"{r['metric']}-{r['pair']}")
def test_matches_piq_synthetic(row):
    ref, dist = _refmod().synthetic_pairs()[row["pair"]]
    got = FUNCS[row["metric"]](ref, dist, data_range=255, **json.loads(row["settings"]))
    assert got == pytest.approx(float(row["value"]), rel=TOL[row["metric"]])


@pytest.mark.shared_data
def test_matches_piq_nih(shared_data):
    pairs = _refmod().nih_pairs()
    for row in _rows(FUNCS):
        if row["pair"] in pairs:
            ref, dist = pairs[row["pair"]]
            got = FUNCS[row["metric"]](ref, dist, data_range=255, **json.loads(row["settings"]))
            assert got == pytest.approx(float(row["value"]), rel=TOL[row["metric"]]), row


def test_identity_symmetry_and_med_parameters():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (64, 64))
    y = np.clip(x + rng.normal(0, 10, x.shape), 0, 255)
    assert haarpsi(x, x, data_range=255) == pytest.approx(1.0, abs=1e-12)
    assert haarpsi(x, y, data_range=255) == pytest.approx(haarpsi(y, x, data_range=255), rel=1e-12)
    assert haarpsi_med(x, y, data_range=255) == pytest.approx(haarpsi(x, y, data_range=255, c=5.0, alpha=4.9))
    assert haarpsi(x / 255, y / 255, data_range=1.0) == pytest.approx(haarpsi(x, y, data_range=255), rel=1e-10)


def test_sixteen_bit_precision():
    rng = np.random.default_rng(1)
    x = np.round(rng.uniform(1000, 60000, (64, 64)))
    y = x.copy()
    y[10:50, 10:50] += 100  # below 1/255 of the range
    assert haarpsi(x, y, data_range=65535) < 1.0


def test_errors():
    with pytest.raises(InvalidParameterError, match="at least 16x16"):
        haarpsi(np.zeros((8, 8)), np.zeros((8, 8)), data_range=1.0)
    with pytest.raises(InvalidParameterError, match="'c' and 'alpha' parameters of haarpsi_med"):
        haarpsi_med(np.zeros((32, 32)), np.zeros((32, 32)), data_range=1.0, c=-1.0)
