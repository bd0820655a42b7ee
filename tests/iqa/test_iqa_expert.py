"""z-scores, z-MOS and Tables 3-4 (cxreval.iqa.expert) against a hand-worked example and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cxreval.exceptions import SchemaError
from cxreval.iqa.expert import metric_agreement, rater_agreement, zscores, zscores_for_scores

# 2 raters x 4 images (hand-worked below)
RATINGS = pd.DataFrame({
    "image": ["a", "b", "c", "d"] * 2,
    "rater": ["r1"] * 4 + ["r2"] * 4,
    "rating": [1, 2, 3, 4, 2, 2, 4, 4],
})


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
    np.testing.assert_allclose(res.zscores.query("rater == 'r1'")["z"], stats.zscore([1, 2, 3, 4]), atol=1e-15)


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
    sc = pd.concat([_scores(), pd.DataFrame([{"reference": "R2", "test": "out/e.png", "metric": "ssim", "value": 1}])])
    ma = metric_agreement(sc, res.zmos, n_resamples=10, rng=0, metrics=["ssim"])
    t4, dropped = ma.table, ma.dropped
    assert dropped["test"].tolist() == ["e"] and t4.iloc[0].n == 4


# Rated reference image (issue 15, item 5). Rater A rates ref, t1, t2, t3 = 4, 1, 4, 2; rater B = 4, 3, 2, 3.
# keep (default): A: mu = 11/4, sigma = sqrt(27/16) = 3*sqrt(3)/4; B: mu = 3, sigma = sqrt(1/2).
#   z-MOS(t1) = (-7/(3 sqrt 3) + 0) / 2 = -7/(6 sqrt 3) = -0.67358
#   z-MOS(t2) = (5/(3 sqrt 3) - sqrt 2) / 2 = -0.22598;  z-MOS(t3) = (-1/sqrt 3 + 0) / 2 = -0.28868
#   ranks t1 < t3 < t2 = the metric's (0.1, 0.9, 0.5): SRCC = KRCC = 1.
# exclude: A: t1, t2, t3 = 1, 4, 2 (mu 7/3), B: 3, 2, 3 (mu 8/3): z-MOS ranks t1 < t2 < t3, so against the
#   metric's ranks (1, 3, 2): SRCC = 1 - 6 * 2 / (3 * 8) = 0.5, KRCC = (2 - 1) / 3.
REF_RATINGS = pd.DataFrame({"image": ["ref", "t1", "t2", "t3"] * 2, "rater": ["A"] * 4 + ["B"] * 4,
                            "rating": [4, 1, 4, 2, 4, 3, 2, 3]})
REF_SCORES = pd.DataFrame({"reference": "ref", "test": ["d/t1.png", "d/t2.png", "d/t3.png"], "metric": "ssim",
                           "value": [0.1, 0.9, 0.5]})


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
    assert dropped.to_dict("records") == [{"metric": "ssim", "test": "ref",
                                           "reason": "rated, not scored: in the raters' mean/SD, not correlated"}]


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
