"""GMSD and MDSI: identity, scale invariance, 16-bit input, options, errors (values vs piq:
test_peer_values_synthetic_and_nih.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa._gradient import gmsd, mdsi


@pytest.mark.parametrize("func", [gmsd, mdsi])
def test_identity_and_scale_invariance(func):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (64, 64))
    y = np.clip(x + rng.normal(0, 0.05, x.shape), 0, 1)
    assert func(x, x, data_range=1.0) == pytest.approx(0.0, abs=1e-12)
    assert func(x, y, data_range=1.0) == pytest.approx(
        func(x * 65535, y * 65535, data_range=65535), rel=1e-10
    )


def test_sixteen_bit_precision():
    rng = np.random.default_rng(1)
    x = np.round(rng.uniform(1000, 60000, (64, 64)))
    y = x.copy()
    y[20:40, 20:40] += 100  # 100/65535 < 1/255 of the range: lost by 8-bit rounding, seen here
    assert gmsd(x, y, data_range=65535) > 0
    assert mdsi(x, y, data_range=65535) > 0
    x8, y8 = np.round(x / 65535 * 255), np.round(y / 65535 * 255)
    assert gmsd(x, y, data_range=65535) != gmsd(x8, y8, data_range=255)


def test_mdsi_is_not_symmetric_reference_first():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 255, (64, 64))
    y = x * 0.7
    assert mdsi(x, y, data_range=255) != mdsi(y, x, data_range=255)


def test_mdsi_achromatic_option_differs():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 255, (64, 64))
    y = x * 0.5
    assert mdsi(x, y, data_range=255, grey="achromatic") != mdsi(x, y, data_range=255)


def test_errors():
    x = np.zeros((32, 32))
    with pytest.raises(InvalidParameterError, match="same shape"):
        gmsd(x, np.zeros((32, 30)), data_range=1.0)
    with pytest.raises(InvalidParameterError, match="data_range"):
        gmsd(x, x, data_range=0)
    with pytest.raises(InvalidParameterError, match="'combination' parameter of mdsi"):
        mdsi(x, x, data_range=1.0, combination="max")
    with pytest.raises(InvalidParameterError, match="'grey' parameter of mdsi"):
        mdsi(x, x, data_range=1.0, grey="rgb")
