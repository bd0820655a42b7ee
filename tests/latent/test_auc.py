"""The pair-weighted AUC of cxreval.latent._auc against scikit-learn and a brute-force double sum."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.exceptions import InvalidParameterError
from cxreval.latent import latent_auc_score
from cxreval.latent._auc import latent_auc_rows


def _brute(s, p, c):
    """sum_{i != j} c_i c_j p_i (1 - p_j) H(s_i - s_j) / sum_{i != j} c_i c_j p_i (1 - p_j), with every pair of
    distinct study copies (copies of one study never paired)."""
    num = den = 0.0
    for i in range(len(s)):
        for j in range(len(s)):
            if i == j:
                continue
            w = c[i] * c[j] * p[i] * (1 - p[j])
            den += w
            num += w * (1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0)
    return num / den


def test_hard_posteriors_give_the_ordinary_auc():
    rng = np.random.default_rng(0)
    y = rng.random(300) < 0.3
    s = np.round(rng.normal(size=300) + y, 1)  # many ties
    assert latent_auc_score(s, y.astype(float)) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    w = rng.integers(0, 4, size=300).astype(float)
    assert latent_auc_score(s, y.astype(float), sample_weight=w) == pytest.approx(
        roc_auc_score(y, s, sample_weight=w), abs=1e-12
    )


def test_soft_posteriors_match_the_double_sum():
    rng = np.random.default_rng(1)
    s = np.round(rng.normal(size=40), 1)
    p = rng.random(40)
    c = rng.integers(0, 3, size=40).astype(float)
    assert latent_auc_score(s, p) == pytest.approx(_brute(s, p, np.ones(40)), abs=1e-12)
    assert latent_auc_score(s, p, sample_weight=c) == pytest.approx(_brute(s, p, c), abs=1e-12)


def test_rows_equal_one_call_each():
    rng = np.random.default_rng(2)
    s = rng.normal(size=50)
    p = rng.random((3, 50))
    c = rng.integers(0, 3, size=(3, 50)).astype(float)
    got = latent_auc_rows(s, p, c)
    for b in range(3):
        assert got[b] == pytest.approx(latent_auc_score(s, p[b], sample_weight=c[b]), abs=1e-14)


def test_undefined_without_pairs_is_nan():
    assert np.isnan(latent_auc_score([0.1, 0.2], [1.0, 1.0]))


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"score": [0.1, np.nan], "posterior": [0.5, 0.5]}, "'score' must be finite; found nan at 1"),
        (
            {"score": [0.1, 0.2], "posterior": [0.5, 1.5]},
            r"'posterior' must be probabilities in \[0, 1\]; found 1.5 at 1",
        ),
        ({"score": [0.1, 0.2], "posterior": [0.5]}, "must be 1-D of one length"),
        (
            {"score": [0.1, 0.2], "posterior": [0.5, 0.5], "sample_weight": [1, -1]},
            "'sample_weight' must be finite",
        ),
    ],
)
def test_bad_input_is_refused(kwargs, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        latent_auc_score(**kwargs)
