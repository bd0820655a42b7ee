"""Figures of merit and covariances against independent references: scikit-learn's AUC, brute-force leave-one-out
AUCs, DeLong's and the unbiased U-statistic estimators written out pair by pair."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.exceptions import InvalidParameterError
from cxreval.mrmc import auc_covariance
from cxreval.mrmc._fom import empirical_auc, jackknife_auc


def _study(seed: int = 0, n_mod: int = 2, n_rdr: int = 3, n_cases: int = 23, levels: int = 5):
    rng = np.random.default_rng(seed)
    truth = (rng.random(n_cases) < 0.4).astype(int)
    truth[:2], truth[2:4] = 1, 0
    latent = truth + rng.normal(size=(n_mod, n_rdr, n_cases))
    return np.clip(np.round(latent * 1.5 + 2), 0, levels - 1), truth  # ordinal ratings: many ties


def _psi(x: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """psi(x_i, y_j) over diseased i (rows) and non-diseased j (columns)."""
    a, b = x[pos][:, None], x[neg][None, :]
    return (a > b) + 0.5 * (a == b)


def test_auc_equals_sklearn_with_ties_and_missing_readings():
    x, y = _study()
    x[1, 2, [0, 5, 9]] = np.nan
    auc = empirical_auc(x, y)
    for t, r in product(range(2), range(3)):
        keep = ~np.isnan(x[t, r])
        assert auc[t, r] == pytest.approx(roc_auc_score(y[keep], x[t, r, keep]), rel=1e-14)


def test_leave_one_out_aucs_equal_brute_force():
    x, y = _study(1)
    x[0, 1, 3] = np.nan
    loo = jackknife_auc(x, y)
    for t, r, k in product(range(2), range(3), range(x.shape[2])):
        keep = ~np.isnan(x[t, r])
        keep[k] = False
        assert loo[t, r, k] == pytest.approx(roc_auc_score(y[keep], x[t, r, keep]), rel=1e-13)


def test_leave_one_cluster_out_aucs_equal_brute_force():
    x, y = _study(2, n_cases=30)
    clusters = np.array([f"p{i // 3}" for i in range(30)])  # ten patients of three images
    loo = jackknife_auc(x, y, clusters=clusters)
    assert loo.shape == (2, 3, 10)
    for t, r, c in product(range(2), range(3), range(10)):
        keep = clusters != f"p{c}"
        assert loo[t, r, c] == pytest.approx(roc_auc_score(y[keep], x[t, r, keep]), rel=1e-13)


def test_jackknife_covariance_is_the_scaled_covariance_of_the_leave_one_out_aucs():
    x, y = _study(3)
    loo = jackknife_auc(x, y).reshape(6, -1)
    n = loo.shape[1]
    expected = (n - 1) ** 2 / n * np.cov(loo)  # RJafroc's cov(...) * (K-1)^2/K
    np.testing.assert_allclose(auc_covariance(x, y).reshape(6, 6), expected, rtol=1e-12)


def test_delong_covariance_equals_the_structural_components_pair_by_pair():
    x, y = _study(4)
    pos, neg = y == 1, y == 0
    n1, n0 = pos.sum(), neg.sum()
    flat = x.reshape(6, -1)
    psis = [_psi(flat[g], pos, neg) for g in range(6)]
    aucs = [p.mean() for p in psis]
    v10 = [p.mean(axis=1) for p in psis]
    v01 = [p.mean(axis=0) for p in psis]
    expected = np.array(
        [
            [
                np.sum((v10[a] - aucs[a]) * (v10[b] - aucs[b])) / ((n1 - 1) * n1)
                + np.sum((v01[a] - aucs[a]) * (v01[b] - aucs[b])) / ((n0 - 1) * n0)
                for b in range(6)
            ]
            for a in range(6)
        ]
    )
    np.testing.assert_allclose(auc_covariance(x, y, method="delong").reshape(6, 6), expected, rtol=1e-12)


def test_clustered_delong_with_one_case_per_cluster_is_delong():
    x, y = _study(5)
    plain = auc_covariance(x, y, method="delong")
    singletons = auc_covariance(x, y, method="delong", clusters=np.arange(x.shape[2])[::-1])
    np.testing.assert_allclose(singletons, plain, rtol=1e-12)


def test_clustered_delong_equals_obuchowski_1997_written_out():
    x, y = _study(6, n_mod=1, n_rdr=1, n_cases=24)
    clusters = np.arange(24) // 4
    pos, neg = y == 1, y == 0
    psi = _psi(x[0, 0], pos, neg)
    auc = psi.mean()
    big_m, big_n = pos.sum(), neg.sum()
    v10_case, v01_case = psi.mean(axis=1), psi.mean(axis=0)
    pos_c, neg_c = clusters[pos], clusters[neg]
    v10 = np.array([v10_case[pos_c == c].sum() for c in range(6)])
    v01 = np.array([v01_case[neg_c == c].sum() for c in range(6)])
    m = np.array([(pos_c == c).sum() for c in range(6)])
    n = np.array([(neg_c == c).sum() for c in range(6)])
    i10, i01, i = (m > 0).sum(), (n > 0).sum(), 6
    s10 = i10 / ((i10 - 1) * big_m) * np.sum((v10 - m * auc) ** 2)
    s01 = i01 / ((i01 - 1) * big_n) * np.sum((v01 - n * auc) ** 2)
    s11 = i / (i - 1) * np.sum((v10 - m * auc) * (v01 - n * auc))
    expected = s10 / big_m + s01 / big_n + 2 * s11 / (big_m * big_n)
    assert auc_covariance(x, y, method="delong", clusters=clusters)[0, 0, 0, 0] == pytest.approx(
        expected, rel=1e-12
    )


def test_unbiased_covariance_equals_the_u_statistic_over_distinct_cases():
    """Cov(A_a, A_b) = A_a A_b - mean of psi_a(i, j) psi_b(i', j') over i != i', j != j' (Gallas 2007)."""
    x, y = _study(7, n_cases=14)
    pos, neg = y == 1, y == 0
    flat = x.reshape(6, -1)
    psis = [_psi(flat[g], pos, neg) for g in range(6)]
    n1, n0 = psis[0].shape
    expected = np.zeros((6, 6))
    for a, b in product(range(6), range(6)):
        total = 0.0
        for i, j, i2, j2 in product(range(n1), range(n0), range(n1), range(n0)):
            if i != i2 and j != j2:
                total += psis[a][i, j] * psis[b][i2, j2]
        expected[a, b] = psis[a].mean() * psis[b].mean() - total / (n1 * (n1 - 1) * n0 * (n0 - 1))
    np.testing.assert_allclose(
        auc_covariance(x, y, method="unbiased").reshape(6, 6), expected, rtol=1e-10, atol=1e-15
    )


def test_readers_of_disjoint_cases_have_no_unbiased_covariance():
    x, y = _study(8, n_cases=40)
    x[:, 0, 20:] = np.nan  # reader 1 read the first half, reader 2 the second
    x[:, 1, :20] = np.nan
    y[[0, 1, 20, 21]], y[[2, 3, 22, 23]] = 1, 0
    cov = auc_covariance(x, y, method="unbiased")
    assert cov[0, 0, 0, 1] == pytest.approx(0, abs=1e-15) and cov[1, 0, 0, 1] == pytest.approx(0, abs=1e-15)
    assert cov[0, 0, 1, 0] != 0  # the same reader's cases in both modalities


def test_input_errors():
    x, y = _study()
    with pytest.raises(InvalidParameterError, match="'covariance' parameter of auc_covariance"):
        auc_covariance(x, y, method="bootstrap")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="unbiased.*clustered"):
        auc_covariance(x, y, method="unbiased", clusters=np.arange(x.shape[2]) // 2)
    with pytest.raises(InvalidParameterError, match="'truth'.*binary"):
        empirical_auc(x, y * 2)
    with pytest.raises(InvalidParameterError, match="every diseased or every non-diseased"):
        jackknife_auc(x, y, clusters=y)  # one cluster per class
