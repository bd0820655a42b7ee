"""compare_rankings / compare_table_rankings: the correlations of model rankings between references (point and
bootstrap), from an AUCResult or a point AUC table, its errors and the count of undefined AUCs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from cxreval.bootstrap import summarize_distribution
from cxreval.classification import evaluate_auc
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.ranking import compare_rankings, compare_table_rankings
from cxreval.ranking._stability_result import CORRELATION_COLUMNS, RANKING_COLUMNS

from ..stats.test_rank_correlation import _brute_rho_d2, _brute_tau_a


def _toy_table():
    rows = []
    aucs = {"R0": [0.90, 0.85, 0.85, 0.70, 0.60], "R1": [0.80, 0.88, 0.75, 0.75, 0.61]}
    for r, vals in aucs.items():
        for m, v in zip("ABCDE", vals):
            rows.append(
                {
                    "model": m,
                    "group": "g1" if m in "ABC" else "g2",
                    "finding": "Effusion",
                    "reference": r,
                    "auc": v,
                }
            )
    rows.append({"model": "Mean", "group": "summary", "finding": "Effusion", "reference": "R0", "auc": 0.5})
    return pd.DataFrame(rows)


def test_ranking_stability_from_point_table():
    t = _toy_table()
    res = compare_table_rankings(t, min_models=2)
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
    sc = compare_table_rankings(t, min_models=2, kendall="tau-b", spearman="pearson").correlations
    srow = sc[(sc.group == "All Models") & (sc.method == "SRCC")].iloc[0]
    assert srow.statistic == pytest.approx(spearmanr(a, b).statistic, abs=1e-12) and srow.variant == "pearson"
    skrow = sc[(sc.group == "All Models") & (sc.method == "KRCC")].iloc[0]
    assert (
        skrow.statistic == pytest.approx(kendalltau(a, b).statistic, abs=1e-12) and skrow.variant == "tau-b"
    )
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
        labs.append(
            pd.DataFrame(
                {
                    "study_id": studies,
                    "patient_id": pat.astype(str),
                    "finding": "Effusion",
                    "source": f"R{r}",
                    "state": st,
                }
            )
        )
    for m in range(6):
        preds.append(
            pd.DataFrame(
                {
                    "study_id": studies,
                    "model": f"M{m}",
                    "finding": "Effusion",
                    "score": truth * g.random() * 2 + g.normal(size=n),
                }
            )
        )
    return pd.concat(preds), pd.concat(labs)


@pytest.mark.parametrize("kendall,spearman", [("tau-b", "pearson"), ("tau-a", "formula")])
def test_bootstrap_correlations_match_a_loop(kendall, spearman):
    preds, labels = _synthetic()
    auc = evaluate_auc(preds, labels, n_resamples=40, rng=0, mean_over_models=False)
    res = compare_rankings(auc, groups="overall", kendall=kendall, spearman=spearman)
    c = res.correlations
    D = auc.distribution[:, 0]  # models x refs x B
    if kendall == "tau-b":
        fns = (
            ("SRCC", lambda x, y: spearmanr(x, y).statistic),
            ("KRCC", lambda x, y: kendalltau(x, y).statistic),
        )
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
        compare_table_rankings(t, pairs=[("R0", "R7")])
    with pytest.raises(SchemaError, match="'auc' 'high' is not a number"):
        compare_table_rankings(
            t.astype({"auc": object}).assign(auc=lambda d: d.auc.where(d.index != 3, "high"))
        )
    with pytest.raises(InvalidParameterError, match="'methods' parameter"):
        compare_table_rankings(t, methods=["pearson"])
    with pytest.raises(InvalidParameterError, match="'kendall' parameter"):
        compare_table_rankings(t, kendall="tau-c")
    with pytest.raises(InvalidParameterError, match="'spearman' parameter"):
        compare_table_rankings(t, spearman="d2")


def test_undefined_aucs_leave_the_ranking_with_a_count():
    """A missing or NaN AUC: the model leaves that finding's ranking (n_excluded), the others rank as without it;
    a reference without any AUC for a finding is not ranked there."""
    t = _toy_table()
    without_e = compare_table_rankings(t[t.model != "E"], groups="overall")
    for table in (
        t[~((t.model == "E") & (t.reference == "R1"))],
        t.assign(auc=t.auc.where(~((t.model == "E") & (t.reference == "R1")), np.nan)),
    ):
        res = compare_table_rankings(table, groups="overall")
        c = res.correlations
        assert (c["n_excluded"] == 1).all() and (c["n_models"] == 4).all()
        np.testing.assert_array_equal(c["statistic"], without_e.correlations["statistic"])
        assert "E" not in set(res.rankings["model"])
        assert any("1 model(s)" in e and "'E'" in e for e in res.excluded)
        assert "left out of the rankings" in res.summary()
    extra = pd.concat(
        [
            t,
            pd.DataFrame(
                {
                    "model": list("ABCDE"),
                    "group": "g1",
                    "finding": "Effusion",
                    "reference": "R2",
                    "auc": np.nan,
                }
            ),
        ],
        ignore_index=True,
    )
    res = compare_table_rankings(extra, groups="overall")
    assert set(res.correlations["reference_b"]) == {"R1"} and set(res.rankings["reference"]) == {"R0", "R1"}
    assert any("no AUC under ['R2']" in e for e in res.excluded)
