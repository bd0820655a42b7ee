"""evaluate_subgroups: not-estimable rows, reference groups, operating points, calibration fits, bad input, and a
simulation with known truth (a model without a gap, a labeller that misses more findings in one group)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import CxrevalError
from cxreval.options import Resampling
from cxreval.subgroups import SimulatedSubgroupSet, SubgroupResult, evaluate_subgroups, simulate_subgroup_set
from cxreval.subgroups._calibration import logistic_calibration
from cxreval.subgroups._groups import NO_VALUE, OperatingPoint, operating_threshold
from cxreval.subgroups._metrics import holm


def test_the_labeller_gap_is_flagged_under_it_and_not_under_the_truth() -> None:
    rng = np.random.default_rng(0)
    flagged = {"truth": 0, "labeller": 0}
    changes, expected = 0, 0
    n_sets = 12
    for k in range(n_sets):
        res = evaluate_subgroups(
            *_inputs(simulate_subgroup_set(5000, rng=rng)),
            by=["group"],
            resampling=Resampling(n_resamples=200, rng=k),
            calibration=False,
        )
        t = res.table[(res.table["metric"] == "auc") & (res.table["group"] == "B")].set_index("reference")
        for ref in flagged:
            flagged[ref] += bool(t.loc[ref, "significant"])
        expected += bool(t.loc["labeller", "significant"]) != bool(t.loc["truth", "significant"])
        v = res.verdicts[(res.verdicts["metric"] == "auc") & (res.verdicts["group"] == "B")]
        changes += v["verdict"].iloc[0] == "significance changes"
    assert flagged["truth"] <= 1  # the test's size: about 0.05 under the truth
    assert flagged["labeller"] >= 8  # the labeller's gap: found most of the time at this size
    assert changes == expected  # the verdict: the gap depends on the reference


def _small(n: int = 80, seed: int = 0):
    return _inputs(simulate_subgroup_set(n, rng=seed))


def _inputs(sim: SimulatedSubgroupSet) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return sim.predictions, sim.labels, sim.metadata


def test_a_group_without_positives_is_a_row_not_estimable() -> None:
    preds, labels, meta = _small()
    positives = set(labels.loc[(labels["source"] == "truth") & (labels["state"] == "positive"), "study_id"])
    meta["site"] = np.where(
        meta["study_id"].isin(positives), "X", np.where(np.arange(len(meta)) % 3, "X", "Y")
    )
    res = evaluate_subgroups(
        preds, labels, meta, by=["site"], references=["truth"], resampling=Resampling(n_resamples=30, rng=0)
    )
    y = res.table[(res.table["group"] == "Y") & (res.table["metric"] == "auc")].iloc[0]
    assert not y["estimable"] and y["reason"] == "group: no positives" and np.isnan(y["gap"])
    spec = res.table[(res.table["group"] == "Y") & (res.table["metric"] == "specificity")].iloc[0]
    assert spec["estimable"] and np.isfinite(spec["gap"])
    # its calibration row is kept: the Brier score and ECE are defined, intercept and slope are not, and it says so
    cal = res.calibration.set_index("group")
    assert (
        cal.loc["Y", "n_pos"] == 0 and np.isfinite(cal.loc["Y", "brier"]) and np.isnan(cal.loc["Y", "slope"])
    )
    assert cal.loc["Y", "reason"] == "intercept and slope not estimable: no positives"
    # 80 studies: every positive scores above every negative, so the slope has no finite maximum
    assert (
        cal.loc["X", "reason"] == "slope not estimable: the scores separate the classes (no finite maximum)"
    )


def test_a_group_with_too_few_cases_is_kept_not_estimable() -> None:
    preds, labels, meta = _small(200)
    truth = labels[labels["source"] == "truth"].set_index("study_id")["state"]
    pos = truth[truth == "positive"].index
    meta["site"] = np.where(
        meta["study_id"].isin(pos[:3]) | meta["study_id"].isin(truth.index[:40]), "Y", "X"
    )
    meta.loc[meta["study_id"].isin(pos[3:]) & (meta["site"] == "Y"), "site"] = "X"
    res = evaluate_subgroups(
        preds, labels, meta, by=["site"], references=["truth"], resampling=Resampling(30, rng=0)
    )
    y = res.table[res.table["group"] == "Y"].set_index("metric")
    assert y.loc["auc", "n_pos"] == 3 and y.loc["auc", "reason"] == "group: 3 positives (fewer than 10)"
    assert (
        not y.loc["auc", "estimable"] and np.isnan(y.loc["auc", "gap"]) and np.isfinite(y.loc["auc", "value"])
    )
    assert not y.loc["fnr", "estimable"] and y.loc["specificity", "estimable"]  # 30-odd negatives
    again = evaluate_subgroups(
        preds, labels, meta, by=["site"], references=["truth"], resampling=Resampling(30, rng=0), min_cases=3
    )
    assert again.table.query("group == 'Y' and metric == 'auc'")["estimable"].item()
    with pytest.raises(CxrevalError, match="'min_cases'"):
        evaluate_subgroups(preds, labels, meta, by=["site"], min_cases=0)


def test_a_table_without_an_estimable_gap_still_plots() -> None:
    preds, labels, meta = _small(40)
    res = evaluate_subgroups(
        preds,
        labels,
        meta,
        by=["group"],
        references=["truth"],
        resampling=Resampling(10, rng=0),
        min_cases=1000,
    )
    assert not res.table["estimable"].any()
    fig = res.figure(res.table)
    assert fig.data and fig.layout.annotations[0].text == "the table has no rows"


def test_a_gap_estimable_under_one_reference_only_says_so_in_the_verdicts() -> None:
    preds, labels, meta = _small(200)
    lab = labels.copy()
    b_ids = set(meta.loc[meta["group"] == "B", "study_id"])
    lab.loc[(lab["source"] == "labeller") & lab["study_id"].isin(b_ids), "state"] = "negative"
    res = evaluate_subgroups(preds, lab, meta, by=["group"], resampling=Resampling(20, rng=0))
    row = res.table.query("group == 'B' and metric == 'auc' and reference == 'labeller'").iloc[0]
    assert not row["estimable"] and row["reason"] == "group: no positives"
    v = res.verdicts.query("group == 'B' and metric == 'auc'").iloc[0]
    assert v["not_estimable_under"] == "labeller" and v["verdict"] == "one reference"
    assert np.isnan(v["gap_labeller"]) and np.isfinite(v["gap_truth"])


def test_studies_without_metadata_are_a_group_of_their_own() -> None:
    preds, labels, meta = _small()
    meta = meta.iloc[10:]  # ten studies without a row
    meta.loc[meta.index[:5], "group"] = ""  # five with a blank value
    res = evaluate_subgroups(preds, labels, meta, by=["group"], resampling=Resampling(n_resamples=20, rng=0))
    none = res.table[res.table["group"] == NO_VALUE]
    assert set(none["metric"]) == {"auc", "sensitivity", "specificity", "fnr", "selection_rate"}
    assert (none["n_studies"] == 15).all() and not none["estimable"].any()
    assert set(none["reason"]) == {"no value of 'group' in the metadata"}


def test_reference_group_and_intersections() -> None:
    preds, labels, meta = _small(120)
    meta["view"] = np.where(np.arange(len(meta)) % 4 < 2, "AP", "PA")
    res = evaluate_subgroups(
        preds,
        labels,
        meta,
        by=["group*view"],
        reference_group=["group*view=A & PA"],
        resampling=Resampling(n_resamples=20, rng=0),
        min_cases=5,
    )
    t = res.table[(res.table["reference"] == "truth") & (res.table["metric"] == "auc")].set_index("group")
    assert set(t.index) == {"A & AP", "A & PA", "B & AP", "B & PA"}
    assert (t["comparator"] == "A & PA").all()
    assert t.loc["B & AP", "gap"] == pytest.approx(t.loc["B & AP", "value"] - t.loc["A & PA", "value"])
    assert t.loc["A & PA", "reason"] == "the reference group" and np.isnan(t.loc["A & PA", "gap"])


def test_fixed_specificity_threshold_is_the_smallest_reaching_it() -> None:
    rng = np.random.default_rng(2)
    y = rng.random(200) < 0.4
    s = np.round(rng.random(200), 2)
    t = operating_threshold(OperatingPoint("specificity", 0.9), y, s)
    assert np.mean(s[~y] < t) >= 0.9
    below = np.max(s[s < t])  # any threshold not above the next lower score reaches less
    assert np.mean(s[~y] < below) < 0.9


def test_holm_matches_its_definition() -> None:
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.5])
    # sorted 0.01, 0.03, 0.04, 0.5 times 4, 3, 2, 1, running maximum, at most 1
    np.testing.assert_allclose(holm(p), [0.04, 0.09, np.nan, 0.09, 0.5])


def test_calibration_fit_solves_the_score_equations() -> None:
    rng = np.random.default_rng(4)
    p = rng.random(20000) * 0.98 + 0.01
    y = rng.random(p.size) < p
    a, b = logistic_calibration(y, p)
    assert abs(a) < 0.05 and abs(b - 1) < 0.05  # calibrated scores: intercept 0, slope 1
    x = np.log(p / (1 - p))
    mu = 1 / (1 + np.exp(-(a + x)))
    assert abs(np.sum(y - mu)) < 1e-8
    z = rng.normal(0, 1.5, 20000)  # over-confident scores: logit(p) = 2 logit(P(y)), a slope of 1/2
    a, b = logistic_calibration(rng.random(z.size) < 1 / (1 + np.exp(-z)), 1 / (1 + np.exp(-2 * z)))
    assert abs(b - 0.5) < 0.05
    assert all(np.isnan(logistic_calibration(np.zeros(5, bool), np.full(5, 0.5))))
    assert np.isnan(logistic_calibration(np.array([False, True]), np.array([0.2, 0.8]))[1])  # separated


def test_n_resamples_zero_gives_estimates_only() -> None:
    res = evaluate_subgroups(*_small(), by=["group"], resampling=Resampling(n_resamples=0, rng=0))
    assert isinstance(res, SubgroupResult)
    est = res.table[res.table["estimable"]]
    assert est["value"].notna().all() and est["ci_low"].isna().all() and est["pvalue"].isna().all()


def test_paired_and_reproducible() -> None:
    a = evaluate_subgroups(*_small(), by=["group"], resampling=Resampling(n_resamples=30, rng=7))
    b = evaluate_subgroups(*_small(), by=["group"], resampling=Resampling(n_resamples=30, rng=7))
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.calibration, b.calibration)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p, lab, m: (p, lab, m.drop(columns=["group"])), "has no column 'group'"),
        (lambda p, lab, m: (p, lab, m.assign(group="A")), "column 'group' has one value ('A')"),
        (lambda p, lab, m: (p, lab, m.rename(columns={"study_id": "image_id"})), "no 'study_id' column"),
        (lambda p, lab, m: (p.assign(score=p["score"] * 4 - 2), lab, m), "outside [0, 1]"),
        (lambda p, lab, m: (p, lab, pd.concat([m, m.head(1)])), "has 2 rows"),
    ],
)
def test_bad_input_is_refused_before_computing(change, message) -> None:
    preds, labels, meta = change(*_small())
    with pytest.raises(
        CxrevalError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ):
        evaluate_subgroups(preds, labels, meta, by=["group"], resampling=Resampling(n_resamples=10, rng=0))


def test_bad_options_are_refused() -> None:
    preds, labels, meta = _small()
    for kwargs, message in (
        ({"operating_point": "youden"}, "'threshold=T' or 'specificity=S'"),
        ({"operating_point": "specificity=1.5"}, "must be in"),
        ({"reference_group": ["group=C"]}, "not a value of 'group'"),
        ({"reference_group": ["sex=F"]}, "not one of the subgroup attributes"),
        ({"by": []}, "needs by="),
    ):
        with pytest.raises(CxrevalError, match=message):
            evaluate_subgroups(
                preds, labels, meta, **{"by": ["group"], "resampling": Resampling(n_resamples=5), **kwargs}
            )
    # without calibration, scores need not be probabilities
    res = evaluate_subgroups(
        preds.assign(score=preds["score"] * 4 - 2),
        labels,
        meta,
        by=["group"],
        resampling=Resampling(n_resamples=5),
        calibration=False,
    )
    assert res.calibration.empty and not res.table.empty


def test_verdicts() -> None:
    from cxreval.subgroups._result import _verdict

    assert _verdict([True, False], [-0.03, 0.001]) == "significance changes"  # a sign flip within noise
    assert _verdict([True, True], [-0.03, 0.02]) == "sign changes"
    assert _verdict([True, True], [-0.03, -0.02]) == "gap under every reference"
    assert _verdict([False, False], [-0.03, 0.02]) == "no gap under any reference"
    assert _verdict([True], [0.1]) == "one reference"


def test_a_continuous_column_and_a_triple_intersection_are_refused() -> None:
    preds, labels, meta = _small()
    meta["age"] = np.arange(len(meta))
    with pytest.raises(CxrevalError, match="column 'age' has 80 values.*band it first"):
        evaluate_subgroups(preds, labels, meta, by=["age"], resampling=Resampling(n_resamples=5))
    meta["age_band"] = np.where(meta["age"] < 40, "<40", ">=40")
    with pytest.raises(CxrevalError, match="intersection of two"):
        evaluate_subgroups(
            preds, labels, meta, by=["group*age_band*age"], resampling=Resampling(n_resamples=5)
        )
    res = evaluate_subgroups(
        preds, labels, meta, by=["age_band", "group*age_band"], resampling=Resampling(n_resamples=5, rng=0)
    )
    assert set(res.table["attribute"]) == {"age_band", "group*age_band"}
    assert set(res.calibration["attribute"]) == {"all", "age_band", "group*age_band"}
