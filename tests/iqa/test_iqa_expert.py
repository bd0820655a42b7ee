"""z-scores, z-MOS and Tables 3-4 (cxreval.iqa) against a hand-worked example and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.iqa import compare_with_experts, metric_agreement
from cxreval.iqa._expert import rater_agreement, zscores, zscores_for_scores

# 2 raters x 4 images (hand-worked below)
RATINGS = pd.DataFrame(
    {
        "image": ["a", "b", "c", "d"] * 2,
        "rater": ["r1"] * 4 + ["r2"] * 4,
        "rating": [1, 2, 3, 4, 2, 2, 4, 4],
    }
)


def test_zmos_hand_worked():
    res = zscores(RATINGS)
    # r1: mean 2.5, population sd sqrt(1.25); r2: mean 3, sd 1
    s1 = np.sqrt(1.25)
    z1 = np.array([-1.5, -0.5, 0.5, 1.5]) / s1
    z2 = np.array([-1.0, -1.0, 1.0, 1.0])
    np.testing.assert_allclose(res.zmos["zmos"].to_numpy(), (z1 + z2) / 2, atol=1e-15)
    assert res.zmos["image"].tolist() == ["a", "b", "c", "d"]
    # e.g. image a: (-1.5/1.118034 - 1) / 2 = -1.170820
    assert res.zmos["zmos"].iloc[0] == pytest.approx(-1.1708203932499369, abs=1e-12)
    np.testing.assert_allclose(
        res.zscores.query("rater == 'r1'")["z"], stats.zscore([1, 2, 3, 4]), atol=1e-15
    )


def test_table3_matches_scipy():
    res = zscores(RATINGS)
    t3 = rater_agreement(res)
    pair = t3[(t3.rater_a == "r1") & (t3.rater_b == "r2")].iloc[0]
    # hand: ranks r1 = 1,2,3,4; r2 = 1.5,1.5,3.5,3.5 -> rho = 0.894427; tau-b = 4/sqrt(6*4) = 0.816497
    assert pair.srcc == pytest.approx(0.8944271909999159, abs=1e-12)
    assert pair.krcc == pytest.approx(4 / np.sqrt(24), abs=1e-12)
    assert pair.srcc == pytest.approx(stats.spearmanr([1, 2, 3, 4], [2, 2, 4, 4]).statistic)
    vs = t3[(t3.rater_a == "r2") & (t3.rater_b == "z-MOS")].iloc[0]
    zm = res.zmos["zmos"].to_numpy()
    assert vs.srcc == pytest.approx(stats.spearmanr([2, 2, 4, 4], zm).statistic)
    assert vs.krcc == pytest.approx(stats.kendalltau([2, 2, 4, 4], zm).statistic)


def _scores():
    rows = []
    refs = {"a": "R1", "b": "R1", "c": "R2", "d": "R2"}
    for img, v in zip("abcd", [0.1, 0.5, 0.4, 0.9]):
        rows.append({"reference": refs[img], "test": f"out/{img}.png", "metric": "ssim", "value": v})
        rows.append({"reference": refs[img], "test": f"out/{img}.png", "metric": "rmse", "value": 1 - v})
    return pd.DataFrame(rows)


def test_table4_point_and_orientation_and_bootstrap():
    res = zscores(RATINGS)
    ma = metric_agreement(_scores(), res.zmos, n_resamples=200, rng=0)
    t4, dropped = ma.table, ma.dropped
    zm = res.zmos["zmos"].to_numpy()
    row = t4.set_index("metric").loc["ssim"]
    assert row.srcc == pytest.approx(stats.spearmanr([0.1, 0.5, 0.4, 0.9], zm).statistic)
    assert row.krcc == pytest.approx(stats.kendalltau([0.1, 0.5, 0.4, 0.9], zm).statistic)
    # rmse is lower-is-better: oriented so that it equals ssim's agreement here
    assert t4.set_index("metric").loc["rmse"].srcc == pytest.approx(row.srcc)
    assert row.srcc_ci_low <= row.srcc_ci_high and row.n == 4 and row.n_references == 2
    assert dropped.empty
    ma = metric_agreement(_scores(), res.zmos, n_resamples=200, rng=0)
    again, _ = ma.table, ma.dropped
    pd.testing.assert_frame_equal(t4, again)


def test_errors():
    with pytest.raises(SchemaError, match=r"outside the scale \[1, 4\]"):
        zscores(RATINGS.assign(rating=[1, 2, 3, 5, 2, 2, 4, 4]))
    with pytest.raises(SchemaError, match=r"rater\(s\) \['r2'\] gave the same rating"):
        zscores(RATINGS.assign(rating=[1, 2, 3, 4, 3, 3, 3, 3]))
    with pytest.raises(SchemaError, match="missing required column"):
        zscores(RATINGS.drop(columns="rater"))
    res = zscores(RATINGS)
    sc = _scores()
    sc = sc[sc.test != "out/d.png"]
    with pytest.raises(SchemaError, match=r"metric 'rmse' has no value for 1 rated image\(s\), e.g. \['d'\]"):
        metric_agreement(sc, res.zmos, n_resamples=10, rng=0, unscored="error")
    with pytest.raises(SchemaError, match=r"no value for 4 rated image\(s\).*\(none matches\)"):
        metric_agreement(sc.assign(test="x/" + sc.test.str[-5:-4] + "z.png"), res.zmos, n_resamples=10, rng=0)


def test_unrated_scores_are_reported():
    res = zscores(RATINGS)
    sc = pd.concat(
        [_scores(), pd.DataFrame([{"reference": "R2", "test": "out/e.png", "metric": "ssim", "value": 1}])]
    )
    ma = metric_agreement(sc, res.zmos, n_resamples=10, rng=0, metrics=["ssim"])
    t4, dropped = ma.table, ma.dropped
    assert dropped["test"].tolist() == ["e"] and t4.iloc[0].n == 4


# Rated reference image. Rater A rates ref, t1, t2, t3 = 4, 1, 4, 2; rater B = 4, 3, 2, 3.
# keep (default): A: mu = 11/4, sigma = sqrt(27/16) = 3*sqrt(3)/4; B: mu = 3, sigma = sqrt(1/2).
#   z-MOS(t1) = (-7/(3 sqrt 3) + 0) / 2 = -7/(6 sqrt 3) = -0.67358
#   z-MOS(t2) = (5/(3 sqrt 3) - sqrt 2) / 2 = -0.22598;  z-MOS(t3) = (-1/sqrt 3 + 0) / 2 = -0.28868
#   ranks t1 < t3 < t2 = the metric's (0.1, 0.9, 0.5): SRCC = KRCC = 1.
# exclude: A: t1, t2, t3 = 1, 4, 2 (mu 7/3), B: 3, 2, 3 (mu 8/3): z-MOS ranks t1 < t2 < t3, so against the
#   metric's ranks (1, 3, 2): SRCC = 1 - 6 * 2 / (3 * 8) = 0.5, KRCC = (2 - 1) / 3.
REF_RATINGS = pd.DataFrame(
    {
        "image": ["ref", "t1", "t2", "t3"] * 2,
        "rater": ["A"] * 4 + ["B"] * 4,
        "rating": [4, 1, 4, 2, 4, 3, 2, 3],
    }
)
REF_SCORES = pd.DataFrame(
    {
        "reference": "ref",
        "test": ["d/t1.png", "d/t2.png", "d/t3.png"],
        "metric": "ssim",
        "value": [0.1, 0.9, 0.5],
    }
)


def test_rated_reference_kept_in_mean_and_sd():
    res = zscores_for_scores(REF_RATINGS, REF_SCORES)  # unscored='keep'
    zm = res.zmos.set_index("image")["zmos"]
    s3 = np.sqrt(3.0)
    assert zm["t1"] == pytest.approx(-7 / (6 * s3), abs=1e-12)
    assert zm["t2"] == pytest.approx((5 / (3 * s3) - np.sqrt(2)) / 2, abs=1e-12)
    assert zm["t3"] == pytest.approx(-1 / (2 * s3), abs=1e-12)
    assert res.rater_stats.set_index("rater")["mean"].tolist() == [2.75, 3.0]
    ma = metric_agreement(REF_SCORES, res.zmos, n_resamples=5, rng=0)
    t4, dropped = ma.table, ma.dropped
    assert (t4.srcc.item(), t4.krcc.item(), t4.n.item()) == (pytest.approx(1.0), pytest.approx(1.0), 3)
    assert dropped.to_dict("records") == [
        {
            "metric": "ssim",
            "test": "ref",
            "reason": "rated, not scored: in the raters' mean/SD, not correlated",
        }
    ]


def test_rated_reference_excluded_or_refused():
    res = zscores_for_scores(REF_RATINGS, REF_SCORES, unscored="exclude")
    assert "ref" not in set(res.zmos.image) and res.rater_stats["n"].tolist() == [3, 3]
    ma = metric_agreement(REF_SCORES, res.zmos, n_resamples=5, rng=0)
    t4, dropped = ma.table, ma.dropped
    assert t4.srcc.item() == pytest.approx(0.5) and t4.krcc.item() == pytest.approx(1 / 3) and dropped.empty
    with pytest.raises(SchemaError, match=r"1 rated image\(s\) have no metric score, e.g. \['ref'\]"):
        zscores_for_scores(REF_RATINGS, REF_SCORES, unscored="error")
    with pytest.raises(SchemaError, match="has no value for 1 rated image"):
        metric_agreement(REF_SCORES, zscores(REF_RATINGS).zmos, n_resamples=5, rng=0, unscored="error")


# --- SRCC/KRCC variants and the z-score divisor, against scipy and hand-worked values -------------------------------

TIED_RATINGS = pd.DataFrame(
    {  # 3 raters x 6 images on the 4-point scale: many ties
        "image": list("abcdef") * 3,
        "rater": ["r1"] * 6 + ["r2"] * 6 + ["r3"] * 6,
        "rating": [1, 2, 2, 3, 4, 4, 1, 1, 3, 2, 4, 3, 2, 1, 2, 4, 3, 4],
    }
)


def _rho_formula(x, y):
    """The XQA-Chest paper's 1 - 6 sum d^2 / (n (n^2 - 1)) on scipy's average ranks."""
    d = stats.rankdata(x) - stats.rankdata(y)
    n = len(x)
    return 1 - 6 * float((d * d).sum()) / (n * (n * n - 1))


def _tau_a(x, y):
    """(C - D) / (n (n - 1) / 2), counted pair by pair (a tied pair is neither)."""
    n, s = len(x), 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
    return s / (n * (n - 1) / 2)


@pytest.mark.parametrize(
    ("spearman", "kendall"),
    [("pearson", "tau-b"), ("formula", "tau-a"), ("formula", "tau-b"), ("pearson", "tau-a")],
)
def test_table3_variants_match_references(spearman, kendall):
    res = zscores(TIED_RATINGS)
    t3 = rater_agreement(res, spearman=spearman, kendall=kendall)
    wide = TIED_RATINGS.pivot(index="image", columns="rater", values="rating")
    zm = res.zmos.set_index("image")["zmos"]
    ref_s = {"pearson": lambda x, y: stats.spearmanr(x, y).statistic, "formula": _rho_formula}[spearman]
    ref_k = {"tau-b": lambda x, y: stats.kendalltau(x, y).statistic, "tau-a": _tau_a}[kendall]
    for r in t3.itertuples():
        x = wide[r.rater_a].to_numpy(float)
        y = zm.to_numpy() if r.rater_b == "z-MOS" else wide[r.rater_b].to_numpy(float)
        assert r.srcc == pytest.approx(ref_s(x, y), abs=1e-12), (r.rater_a, r.rater_b)
        assert r.krcc == pytest.approx(ref_k(x, y), abs=1e-12), (r.rater_a, r.rater_b)
    # r1 vs r2 by hand: ranks [1, 2.5, 2.5, 4, 5.5, 5.5] and [1.5, 1.5, 4.5, 3, 6, 4.5], sum d^2 = 7.5;
    # of the 15 pairs, C - D = 9
    pair = t3[(t3.rater_a == "r1") & (t3.rater_b == "r2")].iloc[0]
    if spearman == "formula":
        assert pair.srcc == pytest.approx(1 - 6 * 7.5 / (6 * 35), abs=1e-12)
    if kendall == "tau-a":
        assert pair.krcc == pytest.approx(9 / 15, abs=1e-12)


def test_table4_variants_point_and_bootstrap_match_references():
    res = zscores(TIED_RATINGS)
    scores = pd.DataFrame(
        {
            "reference": ["R1", "R1", "R1", "R2", "R2", "R2"],
            "test": list("abcdef"),
            "metric": "ssim",
            "value": [0.1, 0.3, 0.3, 0.5, 0.9, 0.7],
        }
    )
    v, z = scores["value"].to_numpy(), res.zmos.set_index("image").loc[list("abcdef"), "zmos"].to_numpy()
    default = metric_agreement(scores, res.zmos, n_resamples=30, rng=0)
    seed = metric_agreement(scores, res.zmos, n_resamples=30, rng=0, spearman="formula", kendall="tau-a")
    row, row_d2 = default.table.iloc[0], seed.table.iloc[0]
    assert row.srcc == pytest.approx(stats.spearmanr(v, z).statistic, abs=1e-12)
    assert row.krcc == pytest.approx(stats.kendalltau(v, z).statistic, abs=1e-12)
    assert row_d2.srcc == pytest.approx(_rho_formula(v, z), abs=1e-12)
    assert row_d2.krcc == pytest.approx(_tau_a(v, z), abs=1e-12)
    assert row_d2.krcc != pytest.approx(row.krcc)  # the tie in ssim makes tau-a smaller than tau-b
    assert (default.spearman, default.kendall, seed.spearman, seed.kendall) == (
        "pearson",
        "tau-b",
        "formula",
        "tau-a",
    )
    # the same resampling plan (same rng) under both variants: the intervals are the variants' own
    assert row_d2.krcc_ci_high <= row.krcc_ci_high + 1e-12


def test_variant_and_ddof_errors_name_the_parameter():
    res = zscores(TIED_RATINGS)
    with pytest.raises(InvalidParameterError, match="'kendall' parameter of rater_agreement must be one of"):
        rater_agreement(res, kendall="tau-c")
    with pytest.raises(
        InvalidParameterError, match="'spearman' parameter of metric_agreement must be one of"
    ):
        metric_agreement(_scores(), res.zmos, spearman="d2")
    with pytest.raises(InvalidParameterError, match=r"'ddof' parameter of zscores must be one of \[0, 1\]"):
        zscores(RATINGS, ddof=2)
    with pytest.raises(InvalidParameterError, match="'ddof' parameter of compare_with_experts"):
        compare_with_experts(RATINGS, _scores(), ddof=True)


def test_zscores_ddof_hand_worked():
    """ddof=1: r1 = [1, 2, 3, 4] has sample SD sqrt(5/3); r2 = [2, 2, 4, 4] has sqrt(4/3)."""
    res = zscores(RATINGS, ddof=1)
    z1 = np.array([-1.5, -0.5, 0.5, 1.5]) / np.sqrt(5 / 3)
    z2 = np.array([-1.0, -1.0, 1.0, 1.0]) / np.sqrt(4 / 3)
    np.testing.assert_allclose(res.zscores.query("rater == 'r1'")["z"], z1, atol=1e-15)
    np.testing.assert_allclose(res.zscores.query("rater == 'r2'")["z"], z2, atol=1e-15)
    np.testing.assert_allclose(res.zmos["zmos"], (z1 + z2) / 2, atol=1e-15)
    np.testing.assert_allclose(
        res.zscores.query("rater == 'r1'")["z"], stats.zscore([1, 2, 3, 4], ddof=1), atol=1e-15
    )
    # ddof rescales each rater's z-scores by sqrt((n - 1) / n) only: with equal n, ranks and correlations agree
    np.testing.assert_allclose(
        zscores(RATINGS, ddof=0).zmos["zmos"] * np.sqrt(3 / 4), res.zmos["zmos"], atol=1e-15
    )


def test_expert_agreement_records_its_choices():
    res = compare_with_experts(
        TIED_RATINGS,
        pd.DataFrame(
            {
                "reference": "R",
                "test": list("abcdef"),
                "metric": "ssim",
                "value": [0.1, 0.3, 0.3, 0.5, 0.9, 0.7],
            }
        ),
        n_resamples=5,
        rng=0,
        ddof=1,
        spearman="formula",
        kendall="tau-a",
    )
    assert (res.ddof, res.spearman, res.kendall) == (1, "formula", "tau-a")
    d = res.to_dict()
    assert (d["ddof"], d["spearman"], d["kendall"]) == (1, "formula", "tau-a")
    text = res.summary()
    assert "ddof=1" in text and "the XQA-Chest paper's formula" in text and "tau-a" in text
    default = compare_with_experts(
        TIED_RATINGS,
        pd.DataFrame(
            {
                "reference": "R",
                "test": list("abcdef"),
                "metric": "ssim",
                "value": [0.1, 0.3, 0.3, 0.5, 0.9, 0.7],
            }
        ),
        n_resamples=5,
        rng=0,
    )
    assert (default.ddof, default.spearman, default.kendall) == (0, "pearson", "tau-b")
    assert "scipy.stats.spearmanr" in default.summary() and "ddof=0" in default.summary()
