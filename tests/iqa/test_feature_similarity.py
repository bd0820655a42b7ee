"""FSIM: MATLAB-convention defaults, identity, errors (values vs piq:
test_peer_values_synthetic_and_nih.py; 16-bit precision: test_iqa_metrics.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa._feature_similarity import fsim, log_gabor_bank, phase_congruency


def test_defaults_follow_matlab_and_stay_close_to_piq(synthetic_pairs, iqa2_values):
    ref, dist = synthetic_pairs["synthetic512_noise"]
    # f = 2 at 512 px: MATLAB's conv2 alignment equals avg_pool; only median/epsilon differ
    assert fsim(ref, dist, data_range=255) == pytest.approx(
        iqa2_values["fsim", "synthetic512_noise"], rel=1e-4
    )


def test_identity_and_phase_congruency_range():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (64, 64))
    assert fsim(x, x, data_range=1.0) == pytest.approx(1.0, abs=1e-12)
    pc = phase_congruency(x * 255, log_gabor_bank(64, 64, 4, 4, 6, 2, 0.55, 1.2))
    assert pc.shape == x.shape and pc.min() >= 0 and pc.max() <= 1


def test_errors():
    x = np.zeros((32, 32))
    with pytest.raises(InvalidParameterError, match="'downsample' parameter of fsim"):
        fsim(x, x, data_range=1.0, downsample="avg")
    with pytest.raises(InvalidParameterError, match="'median' parameter of fsim"):
        fsim(x, x, data_range=1.0, median="upper")
