"""FSIM against piq 0.8.0 (tests/iqa/data/reference_values_iqa2.csv, bench/iqa_reference_values_2.py)."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa.fsim import fsim, phase_congruency

ROOT = Path(__file__).resolve().parents[2]
CSV = Path(__file__).parent / "data" / "reference_values_iqa2.csv"
# relative tolerance: 1e-5 with piq's conventions (settings column; differences seen < 1e-6)
TOL = {"fsim": 1e-5}
FUNCS = {"fsim": fsim}


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


def test_defaults_follow_matlab_and_stay_close_to_piq():
    ref, dist = _refmod().synthetic_pairs()["synthetic512_noise"]
    row = [r for r in _rows(FUNCS) if r["pair"] == "synthetic512_noise"][0]
    # f = 2 at 512 px: MATLAB's conv2 alignment equals avg_pool; only median/epsilon differ
    assert fsim(ref, dist, data_range=255) == pytest.approx(float(row["value"]), rel=1e-4)


def test_identity_and_phase_congruency_range():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (64, 64))
    assert fsim(x, x, data_range=1.0) == pytest.approx(1.0, abs=1e-12)
    pc = phase_congruency(x * 255)
    assert pc.shape == x.shape and pc.min() >= 0 and pc.max() <= 1


def test_sixteen_bit_precision():
    rng = np.random.default_rng(1)
    x = np.round(rng.uniform(1000, 60000, (64, 64)))
    y = x.copy()
    y[10:50, 10:50] += 100
    assert fsim(x, y, data_range=65535) < 1.0


def test_errors():
    x = np.zeros((32, 32))
    with pytest.raises(InvalidParameterError, match="'downsample' parameter of fsim"):
        fsim(x, x, data_range=1.0, downsample="avg")
    with pytest.raises(InvalidParameterError, match="'median' parameter of fsim"):
        fsim(x, x, data_range=1.0, median="upper")
