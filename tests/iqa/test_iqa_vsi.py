"""VSI: MATLAB-convention defaults, identity, saliency range, errors (values vs piq:
test_peer_values_synthetic_and_nih.py; 16-bit precision: test_iqa_metrics.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa._visual_saliency_similarity import sdsp, vsi


def test_default_alignment_close_to_piq(synthetic_pairs, iqa2_values):
    ref, dist = synthetic_pairs["synthetic512_blur"]
    assert vsi(ref, dist, data_range=255) == pytest.approx(iqa2_values["vsi", "synthetic512_blur"], rel=1e-3)


def test_identity_and_saliency_range():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (64, 64))
    assert vsi(x, x, data_range=1.0) == pytest.approx(1.0, abs=1e-12)
    assert vsi(x, x, data_range=1.0, grey="achromatic") == pytest.approx(1.0, abs=1e-12)
    s = sdsp(x * 255)
    assert s.shape == x.shape and s.min() == 0 and s.max() == pytest.approx(1.0)


def test_errors():
    x = np.zeros((32, 32))
    with pytest.raises(InvalidParameterError, match="'grey' parameter of vsi"):
        vsi(x, x, data_range=1.0, grey="rgb")
    with pytest.raises(InvalidParameterError, match="'downsample' parameter of vsi"):
        vsi(x, x, data_range=1.0, downsample="pool")
