"""DSS against piq 0.8.0 (tests/iqa/data/reference_values_iqa2.csv, bench/iqa_reference_values_2.py)."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa.dss import _dct_matrix, dss

ROOT = Path(__file__).resolve().parents[2]
CSV = Path(__file__).parent / "data" / "reference_values_iqa2.csv"
# relative tolerance (same conventions as piq; differences seen < 2e-8, piq keeps subband scores in float32)
TOL = {"dss": 1e-6}
FUNCS = {"dss": dss}


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


def test_dct_matrix_is_scipy_orthonormal_dct():
    from scipy.fft import dct

    np.testing.assert_allclose(_dct_matrix(8), dct(np.eye(8), norm="ortho", axis=0), atol=1e-14)


def test_identity_and_16_bit():
    rng = np.random.default_rng(0)
    x = np.round(rng.uniform(1000, 60000, (64, 64)))
    assert dss(x, x, data_range=65535) == pytest.approx(1.0, abs=1e-12)
    y = x.copy()
    y[8:56, 8:56] += 100
    assert dss(x, y, data_range=65535) < 1.0


def test_errors():
    x = np.zeros((32, 32))
    with pytest.raises(InvalidParameterError, match="'percentile' parameter of dss"):
        dss(x, x, data_range=1.0, percentile=0)
    with pytest.raises(InvalidParameterError, match="'dct_size' parameter of dss"):
        dss(x, x, data_range=1.0, dct_size=0)
