"""Tests of cxreval.ranking: the XQA-Chest paper's SRCC/KRCC formulas by hand, the scipy variants against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from cxreval.bootstrap import summarize_distribution
from cxreval.classification import evaluate_auc
from cxreval.exceptions import CxrevalError, InvalidParameterError, SchemaError
from cxreval.ranking import (
    CORRELATION_COLUMNS,
    RANKING_COLUMNS,
    kendall_tau_a,
    kendall_tau_b,
    rank_desc,
    ranking_stability,
    spearman_rho,
    spearman_rho_d2,
)


def _brute_tau_a(x, y):
    """(C - D) / (n (n - 1) / 2) by a loop over the pairs (the paper's KRCC)."""
    n = len(x)
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n))
    return s / (n * (n - 1) / 2)


def _brute_rho_d2(x, y):
    """1 - 6 sum d^2 / (n (n^2 - 1)) on average ranks (the paper's SRCC)."""
    n = len(x)
    d = rankdata(x) - rankdata(y)
    return 1 - 6 * (d ** 2).sum() / (n * (n ** 2 - 1))


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


# --- the paper's formulas vs the scipy forms, on a hand-worked tied example --------------------------

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
    np.testing.assert_allclose(spearman_rho_d2(x, y), [spearmanr(a, b).statistic for a, b in zip(x, y)], atol=1e-12)
    np.testing.assert_allclose(kendall_tau_a(x, y), [kendalltau(a, b).statistic for a, b in zip(x, y)], atol=1e-12)
    xt, yt = np.round(x, 1), np.round(y, 1)  # ties
    np.testing.assert_allclose(spearman_rho_d2(xt, yt), [_brute_rho_d2(a, b) for a, b in zip(xt, yt)], atol=1e-12)
    np.testing.assert_allclose(kendall_tau_a(xt, yt), [_brute_tau_a(a, b) for a, b in zip(xt, yt)], atol=1e-12)
    np.testing.assert_allclose(spearman_rho_d2(xt.T, yt.T, axis=0), spearman_rho_d2(xt, yt))
    # tau_a = tau_b * sqrt((n0 - n1)(n0 - n2)) / n0
    n0 = 12 * 11 / 2
    tie = lambda v: sum(np.sign(v[i] - v[j]) != 0 for i in range(12) for j in range(i + 1, 12))  # noqa: E731
    for a, b in zip(xt[:5], yt[:5]):
        assert float(kendall_tau_a(a, b)) == pytest.approx(float(kendall_tau_b(a, b)) * np.sqrt(tie(a) * tie(b)) / n0)


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
    assert float(kendall_tau_a(x, y)) == pytest.approx(tb * np.sqrt((n0 - ties(x)) * (n0 - ties(y))) / n0, abs=1e-12)
    # the fast path on rows too large for the all-pairs path, vs the small-n path on the same rows
    xs, ys = np.round(g.random((3, 2500)), 2), np.round(g.random((3, 2500)), 2)
    ref = [kendalltau(a, b).statistic for a, b in zip(xs, ys)]
    np.testing.assert_allclose(kendall_tau_b(xs, ys), ref, atol=1e-12)


def test_kendall_small_n_bootstrap_path_and_scalar_input():
    g = np.random.default_rng(5)
    x, y = np.round(g.random((500, 7)), 1), np.round(g.random((500, 7)), 1)  # 500 replicates of 7 models
    np.testing.assert_allclose(kendall_tau_b(x, y), [kendalltau(a, b).statistic for a, b in zip(x, y)], atol=1e-12)
    np.testing.assert_allclose(kendall_tau_a(x.T, y.T, axis=0), [_brute_tau_a(a, b) for a, b in zip(x, y)],
                               atol=1e-12)
    for fn in (kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2):
        with pytest.raises(CxrevalError, match="scalar"):
            fn(np.float64(1.0), np.float64(2.0))
        with pytest.raises(CxrevalError, match="axis"):
            fn(np.ones(3), np.ones(3), axis=1)


def test_rank_desc_average_ties():
    assert rank_desc(np.array([0.7, 0.9, 0.7, 0.5])).tolist() == [2.5, 1.0, 2.5, 4.0]


def _toy_table():
    rows = []
    aucs = {"R0": [0.90, 0.85, 0.85, 0.70, 0.60], "R1": [0.80, 0.88, 0.75, 0.75, 0.61]}
    for r, vals in aucs.items():
        for m, v in zip("ABCDE", vals):
            rows.append({"model": m, "group": "g1" if m in "ABC" else "g2", "finding": "Effusion", "reference": r,
                         "auc": v})
    rows.append({"model": "Mean", "group": "summary", "finding": "Effusion", "reference": "R0", "auc": 0.5})
    return pd.DataFrame(rows)


def test_ranking_stability_from_point_table():
    t = _toy_table()
    res = ranking_stability(t, min_models=2)
    c = res.correlations
    assert list(c.columns) == list(CORRELATION_COLUMNS)
    a = np.array([0.90, 0.85, 0.85, 0.70, 0.60])
    b = np.array([0.80, 0.88, 0.75, 0.75, 0.61])
    # default: the paper's formulas. Ranks [1, 2.5, 2.5, 4, 5] and [2, 1, 3.5, 3.5, 5]: sum d^2 = 4.5, so
    # SRCC = 1 - 6 * 4.5 / (5 * 24) = 0.775; 7 concordant, 1 discordant, 2 tied pairs: KRCC = 6 / 10 = 0.6
    row = c[(c.group == "All Models") & (c.method == "SRCC")].iloc[0]
    assert row.statistic == pytest.approx(0.775, abs=1e-12) and row.variant == "formula"
    assert row.n_tied_a == 2 and row.n_tied_b == 2 and np.isnan(row.boot_mean)
    krow = c[(c.group == "All Models") & (c.method == "KRCC")].iloc[0]
    assert krow.statistic == pytest.approx(0.6, abs=1e-12) and krow.variant == "tau-a"
    assert (res.kendall, res.spearman) == ("tau-a", "formula")
    # the scipy variants on request
    sc = ranking_stability(t, min_models=2, kendall="tau-b", spearman="pearson").correlations
    srow = sc[(sc.group == "All Models") & (sc.method == "SRCC")].iloc[0]
    assert srow.statistic == pytest.approx(spearmanr(a, b).statistic, abs=1e-12) and srow.variant == "pearson"
    skrow = sc[(sc.group == "All Models") & (sc.method == "KRCC")].iloc[0]
    assert skrow.statistic == pytest.approx(kendalltau(a, b).statistic, abs=1e-12) and skrow.variant == "tau-b"
    assert skrow.statistic == pytest.approx(6 / 9, abs=1e-12)
    assert set(c.group) == {"All Models", "g1", "g2"}
    r = res.rankings
    assert list(r.columns) == list(RANKING_COLUMNS)
    all0 = r[(r.group == "All Models") & (r.reference == "R0")].set_index("model")
    assert all0.loc["B", "rank"] == 2.5 and all0.loc["B", "tied"] and not all0.loc["A", "tied"]
    assert "Mean" not in set(r.model)
    top = res.top_changes
    best_r1 = top[(top.group == "All Models") & (top.best_under == "R1")]
    assert set(best_r1.model) == {"B"}
    assert best_r1.set_index("reference").loc["R0", "rank"] == 2.5


def _synthetic():
    g = np.random.default_rng(4)
    n = 90
    pat = g.integers(0, 40, n)
    studies = [f"s{i}" for i in range(n)]
    truth = g.random(n) < 0.4
    labs, preds = [], []
    for r in range(3):
        st = np.where(truth ^ (g.random(n) < 0.2), "positive", "negative")
        labs.append(pd.DataFrame({"study_id": studies, "patient_id": pat.astype(str), "finding": "Effusion",
                                  "source": f"R{r}", "state": st}))
    for m in range(6):
        preds.append(pd.DataFrame({"study_id": studies, "model": f"M{m}", "finding": "Effusion",
                                   "score": truth * g.random() * 2 + g.normal(size=n)}))
    return pd.concat(preds), pd.concat(labs)


@pytest.mark.parametrize("kendall,spearman", [("tau-b", "pearson"), ("tau-a", "formula")])
def test_bootstrap_correlations_match_a_loop(kendall, spearman):
    preds, labels = _synthetic()
    auc = evaluate_auc(preds, labels, n_resamples=40, rng=0, mean_over_models=False)
    res = ranking_stability(auc, groups="overall", kendall=kendall, spearman=spearman)
    c = res.correlations
    D = auc.distribution[:, 0]  # models x refs x B
    if kendall == "tau-b":
        fns = (("SRCC", lambda x, y: spearmanr(x, y).statistic), ("KRCC", lambda x, y: kendalltau(x, y).statistic))
    else:
        fns = (("SRCC", _brute_rho_d2), ("KRCC", _brute_tau_a))
    for method, fn in fns:
        row = c[(c.reference_a == "R0") & (c.reference_b == "R2") & (c.method == method)].iloc[0]
        loop = np.array([fn(D[:, 0, b], D[:, 2, b]) for b in range(40)])
        s = summarize_distribution(loop)
        assert row.boot_mean == pytest.approx(s["mean"], abs=1e-12)
        assert row.boot_sd == pytest.approx(s["sd"], abs=1e-12)
        assert row.ci_low == pytest.approx(s["ci_low"], abs=1e-12)
        assert row.statistic == pytest.approx(fn(auc.point[:, 0, 0], auc.point[:, 0, 2]), abs=1e-12)
    top = res.top_changes
    assert top.prob_best.between(0, 1).all()
    # prob_best of the models under one reference sums to 1 (each replicate has a best model)
    allp = []
    for b in range(40):
        allp.append(np.argmax(D[:, 1, b]))
    best = top[(top.best_under == "R1") & (top.reference == "R1")]
    m = auc.models.index(best.model.iloc[0])
    assert best.prob_best.iloc[0] == pytest.approx(np.mean(np.array(allp) == m))


def test_ranking_errors():
    t = _toy_table()
    with pytest.raises(InvalidParameterError, match="Unknown reference 'R7' in 'pairs'"):
        ranking_stability(t, pairs=[("R0", "R7")])
    with pytest.raises(SchemaError, match="'auc' 'high' is not a number"):
        ranking_stability(t.astype({"auc": object}).assign(auc=lambda d: d.auc.where(d.index != 3, "high")))
    with pytest.raises(InvalidParameterError, match="'methods' parameter"):
        ranking_stability(t, methods=["pearson"])
    with pytest.raises(InvalidParameterError, match="'kendall' parameter"):
        ranking_stability(t, kendall="tau-c")
    with pytest.raises(InvalidParameterError, match="'spearman' parameter"):
        ranking_stability(t, spearman="d2")


def test_undefined_aucs_leave_the_ranking_with_a_count():
    """A missing or NaN AUC: the model leaves that finding's ranking (n_excluded), the others rank as without it;
    a reference without any AUC for a finding is not ranked there."""
    t = _toy_table()
    without_e = ranking_stability(t[t.model != "E"], groups="overall")
    for table in (t[~((t.model == "E") & (t.reference == "R1"))],
                  t.assign(auc=t.auc.where(~((t.model == "E") & (t.reference == "R1")), np.nan))):
        res = ranking_stability(table, groups="overall")
        c = res.correlations
        assert (c["n_excluded"] == 1).all() and (c["n_models"] == 4).all()
        np.testing.assert_array_equal(c["statistic"], without_e.correlations["statistic"])
        assert "E" not in set(res.rankings["model"])
        assert any("1 model(s)" in e and "'E'" in e for e in res.excluded)
        assert "left out of the rankings" in res.summary()
    extra = pd.concat([t, pd.DataFrame({"model": list("ABCDE"), "group": "g1", "finding": "Effusion",
                                        "reference": "R2", "auc": np.nan})], ignore_index=True)
    res = ranking_stability(extra, groups="overall")
    assert set(res.correlations["reference_b"]) == {"R1"} and set(res.rankings["reference"]) == {"R0", "R1"}
    assert any("no AUC under ['R2']" in e for e in res.excluded)
