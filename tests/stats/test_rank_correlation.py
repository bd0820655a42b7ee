"""Rank correlations: the XQA-Chest paper's SRCC/KRCC formulas by hand, the scipy variants against scipy, average
ranks in descending order."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from cxreval.exceptions import CxrevalError, InvalidParameterError
from cxreval.ranking._stability import rank_desc
from cxreval.stats import kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2


def _brute_tau_a(x, y):
    """(C - D) / (n (n - 1) / 2) by a loop over the pairs (the paper's KRCC)."""
    n = len(x)
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n))
    return s / (n * (n - 1) / 2)


def _brute_rho_d2(x, y):
    """1 - 6 sum d^2 / (n (n^2 - 1)) on average ranks (the paper's SRCC)."""
    n = len(x)
    d = rankdata(x) - rankdata(y)
    return 1 - 6 * (d**2).sum() / (n * (n**2 - 1))


def test_correlations_equal_scipy_with_ties_and_vectorised():
    g = np.random.default_rng(0)
    x = np.round(g.random((40, 9)), 1)
    y = np.round(g.random((40, 9)), 1)
    rs, kt = spearman_rho(x, y), kendall_tau_b(x, y)
    for i in range(40):
        assert abs(rs[i] - spearmanr(x[i], y[i]).statistic) < 1e-12
        assert abs(kt[i] - kendalltau(x[i], y[i]).statistic) < 1e-12
    # along axis 0, NaN propagation and constant input
    assert np.allclose(spearman_rho(x.T, y.T, axis=0), rs)
    x[0, 0] = np.nan
    assert np.isnan(spearman_rho(x[0], y[0])) and np.isnan(kendall_tau_b(x[0], y[0]))
    assert np.isnan(kendall_tau_b(np.ones(5), np.arange(5.0)))
    assert np.isnan(spearman_rho(np.ones(5), np.arange(5.0)))
    with pytest.raises(InvalidParameterError, match="same shape"):
        spearman_rho(np.ones(3), np.ones(4))


# --- the paper's formulas vs the scipy forms, on a hand-worked tied example ---------------------------


def test_hand_worked_tied_example_each_variant():
    # x = [1, 2, 2, 3], y = [1, 3, 2, 4]: average ranks [1, 2.5, 2.5, 4] and [1, 3, 2, 4], d = [0, -.5, .5, 0]
    x, y = np.array([1.0, 2, 2, 3]), np.array([1.0, 3, 2, 4])
    assert float(spearman_rho_d2(x, y)) == pytest.approx(1 - 6 * 0.5 / (4 * 15), abs=1e-15)  # 0.95
    # Pearson of the ranks: cov 4.5 / sqrt(4.5 * 5)
    assert float(spearman_rho(x, y)) == pytest.approx(4.5 / np.sqrt(4.5 * 5), abs=1e-15)
    assert float(spearman_rho(x, y)) == pytest.approx(spearmanr(x, y).statistic, abs=1e-15)
    # 6 pairs: 5 concordant, 1 tied in x, 0 discordant
    assert float(kendall_tau_a(x, y)) == pytest.approx(5 / 6, abs=1e-15)
    assert float(kendall_tau_b(x, y)) == pytest.approx(5 / np.sqrt(5 * 6), abs=1e-15)
    assert float(kendall_tau_b(x, y)) == pytest.approx(kendalltau(x, y).statistic, abs=1e-15)
    # constant input: the paper's formulas stay defined (rho_d2 = 0.5, tau_a = 0), the scipy forms are NaN
    c = np.ones(5)
    assert float(spearman_rho_d2(c, np.arange(5.0))) == pytest.approx(0.5)
    assert float(kendall_tau_a(c, np.arange(5.0))) == 0.0
    assert np.isnan(kendall_tau_b(c, np.arange(5.0))) and np.isnan(spearman_rho(c, np.arange(5.0)))


def test_seed_formulas_equal_scipy_without_ties_and_a_loop_with_ties():
    g = np.random.default_rng(3)
    x, y = g.random((30, 12)), g.random((30, 12))  # no ties
    np.testing.assert_allclose(
        spearman_rho_d2(x, y), [spearmanr(a, b).statistic for a, b in zip(x, y)], atol=1e-12
    )
    np.testing.assert_allclose(
        kendall_tau_a(x, y), [kendalltau(a, b).statistic for a, b in zip(x, y)], atol=1e-12
    )
    xt, yt = np.round(x, 1), np.round(y, 1)  # ties
    np.testing.assert_allclose(
        spearman_rho_d2(xt, yt), [_brute_rho_d2(a, b) for a, b in zip(xt, yt)], atol=1e-12
    )
    np.testing.assert_allclose(
        kendall_tau_a(xt, yt), [_brute_tau_a(a, b) for a, b in zip(xt, yt)], atol=1e-12
    )
    np.testing.assert_allclose(spearman_rho_d2(xt.T, yt.T, axis=0), spearman_rho_d2(xt, yt))
    # tau_a = tau_b * sqrt((n0 - n1)(n0 - n2)) / n0
    n0 = 12 * 11 / 2
    tie = lambda v: sum(np.sign(v[i] - v[j]) != 0 for i in range(12) for j in range(i + 1, 12))  # noqa: E731
    for a, b in zip(xt[:5], yt[:5]):
        assert float(kendall_tau_a(a, b)) == pytest.approx(
            float(kendall_tau_b(a, b)) * np.sqrt(tie(a) * tie(b)) / n0
        )


def test_kendall_large_n_is_n_log_n_and_equals_scipy():
    # SciPy's own large case: n = 200,000 with ties (all-pairs would need ~160 GB)
    g = np.random.default_rng(0)
    n = 200_000
    x = np.round(g.random(n), 2)
    y = np.round(x + g.normal(0, 0.3, n), 1)
    tb = float(kendall_tau_b(x, y))
    assert tb == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    # tau-a from the same counts: tau_b * sqrt((n0 - n1)(n0 - n2)) / n0, tie counts from the value counts
    n0 = n * (n - 1) / 2
    ties = lambda v: (lambda c: (c * (c - 1) / 2).sum())(np.unique(v, return_counts=True)[1].astype(float))  # noqa: E731
    assert float(kendall_tau_a(x, y)) == pytest.approx(
        tb * np.sqrt((n0 - ties(x)) * (n0 - ties(y))) / n0, abs=1e-12
    )
    # the fast path on rows too large for the all-pairs path, vs the small-n path on the same rows
    xs, ys = np.round(g.random((3, 2500)), 2), np.round(g.random((3, 2500)), 2)
    ref = [kendalltau(a, b).statistic for a, b in zip(xs, ys)]
    np.testing.assert_allclose(kendall_tau_b(xs, ys), ref, atol=1e-12)


@pytest.mark.parametrize("n", [3000, 2053, 4096])
@pytest.mark.parametrize(
    "kind", ["distinct", "ties in x only", "ties in y only", "few values", "one value of y", "two items"]
)
def test_kendall_large_n_paths_equal_scipy(kind, n):
    # distinct values and ties in one input take the inversion count (n neither a multiple of its blocks nor of
    # their doublings, and a power of two), few values the contingency table
    g = np.random.default_rng(7)
    x = {
        "distinct": g.random(n),
        "ties in x only": np.round(g.random(n), 1),
        "few values": g.integers(0, 4, n),
        "ties in y only": g.random(n),
        "one value of y": g.random(n),
        "two items": g.random(n),
    }[kind].astype(float)
    y = x + g.normal(0, 0.5, n)
    if kind == "ties in y only":
        y = np.round(y, 1)
    if kind == "few values":
        y = np.round(y)
    if kind == "one value of y":
        y = np.full(n, 3.0)
    if kind == "two items":
        x, y = np.tile(x[:2], (2, n // 2)), np.tile(y[:2], (2, n // 2))
    ref = kendalltau(x.ravel(), y.ravel()).statistic
    tb = float(kendall_tau_b(x.ravel(), y.ravel()))
    if np.isnan(ref):
        assert np.isnan(tb) and float(kendall_tau_a(x.ravel(), y.ravel())) == 0.0
    else:
        assert tb == pytest.approx(ref, abs=1e-12)


def test_kendall_small_n_bootstrap_path_and_scalar_input():
    g = np.random.default_rng(5)
    x, y = np.round(g.random((500, 7)), 1), np.round(g.random((500, 7)), 1)  # 500 replicates of 7 models
    np.testing.assert_allclose(
        kendall_tau_b(x, y), [kendalltau(a, b).statistic for a, b in zip(x, y)], atol=1e-12
    )
    np.testing.assert_allclose(
        kendall_tau_a(x.T, y.T, axis=0), [_brute_tau_a(a, b) for a, b in zip(x, y)], atol=1e-12
    )
    for fn in (kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2):
        with pytest.raises(CxrevalError, match="scalar"):
            fn(np.float64(1.0), np.float64(2.0))
        with pytest.raises(CxrevalError, match="axis"):
            fn(np.ones(3), np.ones(3), axis=1)


def test_rank_desc_average_ties():
    assert rank_desc(np.array([0.7, 0.9, 0.7, 0.5])).tolist() == [2.5, 1.0, 2.5, 4.0]
