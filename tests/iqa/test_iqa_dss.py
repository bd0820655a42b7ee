"""DSS: DCT basis, identity, 16-bit input, errors (values vs piq: test_peer_values_synthetic_and_nih.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa._dct_subband_similarity import _dct_matrix, dss


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
