"""PIQE, NIQE and SNR: model files, 16-bit input, SNR by hand, errors (values vs pyiqa:
test_peer_values_synthetic_and_nih.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import CxrevalError, DataUnavailableError, InvalidParameterError
from cxreval.iqa._no_reference import load_niqe_model, niqe, piqe, snr


def test_niqe_needs_model(tmp_path):
    x = np.random.default_rng(0).uniform(0, 255, (192, 192))
    with pytest.raises(DataUnavailableError, match="pristine model parameters"):
        niqe(x, data_range=255)
    with pytest.raises(DataUnavailableError, match="does not exist"):
        niqe(x, data_range=255, model=tmp_path / "missing.mat")
    bad = tmp_path / "bad.npz"
    np.savez(bad, something=np.zeros(3))
    with pytest.raises(CxrevalError, match="must hold 'mu_prisparam' and 'cov_prisparam'"):
        load_niqe_model(bad)


def test_niqe_mat_file_and_16_bit(tmp_path, niqe_test_model, niqe_model_file, synthetic_pairs):
    from scipy.io import savemat

    mu, cov = niqe_test_model
    p = tmp_path / "modelparameters.mat"
    savemat(p, {"mu_prisparam": mu[None], "cov_prisparam": cov})
    ref, _ = synthetic_pairs["synthetic512_blur"]
    a = niqe(ref, data_range=255, model=p)
    assert a == pytest.approx(niqe(ref * 257, data_range=65535, model=niqe_model_file), rel=1e-9)


def test_piqe_16_bit_precision_and_range(synthetic_pairs):
    _, dist = synthetic_pairs["synthetic512_noise"]
    v = piqe(dist, data_range=255)
    assert 0 <= v <= 100
    x = np.round(dist * 257)
    y = x + np.random.default_rng(5).normal(0, 60, x.shape)  # std below 1/255 of the range
    assert piqe(x, data_range=65535) != piqe(y, data_range=65535)


def test_snr_definition():
    x = np.array([[1.0, 3.0], [1.0, 3.0]])
    assert snr(x, data_range=255) == pytest.approx(20 * np.log10(2.0 / 1.0))
    mask = np.array([[True, False], [True, True]])
    vals = x[mask]
    assert snr(x, data_range=255, mask=mask) == pytest.approx(20 * np.log10(vals.mean() / vals.std()))
    assert snr(np.full((4, 4), 7.0), data_range=255) == float("inf")
    with pytest.raises(InvalidParameterError, match="'mask' must have the image's shape"):
        snr(x, data_range=255, mask=np.ones((3, 3), bool))


def test_piqe_errors():
    with pytest.raises(InvalidParameterError, match="'normalize' parameter of piqe"):
        piqe(np.ones((32, 32)), data_range=1.0, normalize="minmax")
    with pytest.raises(InvalidParameterError, match="at least 16x16"):
        piqe(np.ones((8, 8)), data_range=1.0)
