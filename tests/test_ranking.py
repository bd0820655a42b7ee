"""Tests of cxreval.ranking against scipy's spearmanr / kendalltau (tau-b)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from cxreval.bootstrap import summarize_distribution
from cxreval.classification import evaluate_auc
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.ranking import (
    CORRELATION_COLUMNS,
    RANKING_COLUMNS,
    kendall_tau_b,
    rank_desc,
    ranking_stability,
    spearman_rho,
)


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
    row = c[(c.group == "All Models") & (c.method == "SRCC")].iloc[0]
    assert row.statistic == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    assert row.n_tied_a == 2 and row.n_tied_b == 2 and np.isnan(row.boot_mean)
    krow = c[(c.group == "All Models") & (c.method == "KRCC")].iloc[0]
    assert krow.statistic == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
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


def test_bootstrap_correlations_match_scipy_loop():
    preds, labels = _synthetic()
    auc = evaluate_auc(preds, labels, n_resamples=40, rng=0, mean_over_models=False)
    res = ranking_stability(auc, groups="overall")
    c = res.correlations
    D = auc.distribution[:, 0]  # models x refs x B
    for method, fn in (("SRCC", spearmanr), ("KRCC", kendalltau)):
        row = c[(c.reference_a == "R0") & (c.reference_b == "R2") & (c.method == method)].iloc[0]
        loop = np.array([fn(D[:, 0, b], D[:, 2, b]).statistic for b in range(40)])
        s = summarize_distribution(loop)
        assert row.boot_mean == pytest.approx(s["mean"], abs=1e-12)
        assert row.boot_sd == pytest.approx(s["sd"], abs=1e-12)
        assert row.ci_low == pytest.approx(s["ci_low"], abs=1e-12)
        assert row.statistic == pytest.approx(fn(auc.point[:, 0, 0], auc.point[:, 0, 2]).statistic, abs=1e-12)
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
    with pytest.raises(SchemaError, match="lacks the AUC of model 'E' under reference 'R1'"):
        ranking_stability(t[~((t.model == "E") & (t.reference == "R1"))])
    with pytest.raises(InvalidParameterError, match="'methods' parameter"):
        ranking_stability(t, methods=["pearson"])
