"""HaarPSI and HaarPSImed: identity, symmetry, errors (values vs piq:
test_peer_values_synthetic_and_nih.py; 16-bit precision: test_iqa_metrics.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa._haar_wavelet_similarity import haarpsi, haarpsi_med


def test_identity_symmetry_and_med_parameters():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (64, 64))
    y = np.clip(x + rng.normal(0, 10, x.shape), 0, 255)
    assert haarpsi(x, x, data_range=255) == pytest.approx(1.0, abs=1e-12)
    assert haarpsi(x, y, data_range=255) == pytest.approx(haarpsi(y, x, data_range=255), rel=1e-12)
    assert haarpsi_med(x, y, data_range=255) == pytest.approx(haarpsi(x, y, data_range=255, c=5.0, alpha=4.9))
    assert haarpsi(x / 255, y / 255, data_range=1.0) == pytest.approx(
        haarpsi(x, y, data_range=255), rel=1e-10
    )


def test_errors():
    with pytest.raises(InvalidParameterError, match="at least 16x16"):
        haarpsi(np.zeros((8, 8)), np.zeros((8, 8)), data_range=1.0)
    with pytest.raises(InvalidParameterError, match="'c' and 'alpha' parameters of haarpsi_med"):
        haarpsi_med(np.zeros((32, 32)), np.zeros((32, 32)), data_range=1.0, c=-1.0)
