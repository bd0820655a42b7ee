"""z-scores, z-MOS and Tables 3-4 (cxreval.iqa.expert) against a hand-worked example and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cxreval.exceptions import SchemaError
from cxreval.iqa.expert import metric_agreement, rater_agreement, zscores

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
    t4, dropped = metric_agreement(_scores(), res.zmos, n_resamples=200, rng=0)
    zm = res.zmos["zmos"].to_numpy()
    row = t4.set_index("metric").loc["ssim"]
    assert row.srcc == pytest.approx(stats.spearmanr([0.1, 0.5, 0.4, 0.9], zm).statistic)
    assert row.krcc == pytest.approx(stats.kendalltau([0.1, 0.5, 0.4, 0.9], zm).statistic)
    # rmse is lower-is-better: oriented so that it equals ssim's agreement here
    assert t4.set_index("metric").loc["rmse"].srcc == pytest.approx(row.srcc)
    assert row.srcc_ci_low <= row.srcc_ci_high and row.n == 4 and row.n_references == 2
    assert dropped.empty
    again, _ = metric_agreement(_scores(), res.zmos, n_resamples=200, rng=0)
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
        metric_agreement(sc, res.zmos, n_resamples=10, rng=0)


def test_unrated_scores_are_reported():
    res = zscores(RATINGS)
    sc = pd.concat([_scores(), pd.DataFrame([{"reference": "R2", "test": "out/e.png", "metric": "ssim", "value": 1}])])
    t4, dropped = metric_agreement(sc, res.zmos, n_resamples=10, rng=0, metrics=["ssim"])
    assert dropped["test"].tolist() == ["e"] and t4.iloc[0].n == 4
