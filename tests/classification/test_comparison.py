"""``compare_best_models``: the separability of the best model under each reference, against independent
computations (numpy percentiles of the paired replicate differences, ``delong_test``, Holm by hand)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.classification import SeparabilityResult, compare_best_models, delong_test, evaluate_auc
from cxreval.classification._comparison import SEPARABILITY_COLUMNS
from cxreval.exceptions import InvalidParameterError


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    n = 240
    ids = [f"s{i}" for i in range(n)]
    y = rng.integers(0, 2, n)
    preds, labels = [], []
    for f in ("Edema", "Effusion"):
        for m, noise in (("m1", 0.5), ("m2", 0.55), ("m3", 2.0)):
            preds += [(ids[i], m, f, y[i] + rng.normal(0, noise)) for i in range(n)]
        for src, flip in (("r1", 0.0), ("r2", 0.25)):
            for i in range(n):
                lab = y[i] if rng.random() >= flip else 1 - y[i]
                labels.append((ids[i], f"p{i // 2}", f, src, 2 * lab))
    return (
        pd.DataFrame(preds, columns=["study_id", "model", "finding", "score"]),
        pd.DataFrame(labels, columns=["study_id", "patient_id", "finding", "source", "state"]),
    )


def test_bootstrap_comparisons_match_the_replicates(tables) -> None:
    preds, labels = tables
    res = evaluate_auc(preds, labels, references=["r1", "r2"], n_resamples=300, rng=0)
    sep = compare_best_models(res)
    t = sep.table
    assert isinstance(sep, SeparabilityResult) and tuple(t.columns) == SEPARABILITY_COLUMNS
    assert set(t["finding"]) == set(res.findings)
    for _, row in t.iterrows():
        j = res.findings.index(row["finding"])
        k = res.references.index(row["reference"])
        pt = res.point[:, j, k]
        order = np.argsort(-pt, kind="stable")
        ia, ib = res.models.index(row["model_a"]), res.models.index(row["model_b"])
        if "runner-up" in row["comparison"].split("; "):
            assert (ia, ib) == (order[0], order[1])  # the best against the second best under this reference
        d = res.distribution[ia, j, k] - res.distribution[ib, j, k]
        level = 1 - 0.05 / row["n_comparisons"]  # Bonferroni over the finding's comparisons
        lo, hi = np.nanpercentile(d, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
        assert row["ci_low"] == pytest.approx(lo) and row["ci_high"] == pytest.approx(hi)
        assert row["difference"] == pytest.approx(pt[ia] - pt[ib])
        assert row["separable"] == (lo > 0 or hi < 0) and row["method"] == "bootstrap"
    for _, g in t.groupby("finding"):  # Holm: sorted p times (m - rank), running max, capped at 1
        p = g["pvalue"].to_numpy()
        o = np.argsort(p, kind="stable")
        want = np.minimum(1, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[o]))
        assert np.allclose(g["pvalue_holm"].to_numpy()[o], want)
        assert (g["n_comparisons"] == len(g)).all()


def test_without_a_plan_delong_per_finding(tables) -> None:
    preds, labels = tables
    res = evaluate_auc(preds, labels, references=["r1", "r2"], n_resamples=0, rng=0)
    t = compare_best_models(res, predictions=preds, labels=labels).table
    per = t[~t["finding"].isin(["macro", "micro"])]
    assert (per["method"] == "delong").all() and (
        t.loc[t["finding"].isin(["macro", "micro"]), "method"] == "none"
    ).all()
    from scipy.stats import norm

    row = per.iloc[0]
    lab = labels[(labels["finding"] == row["finding"]) & (labels["source"] == row["reference"])].set_index(
        "study_id"
    )
    sa = preds[(preds["model"] == row["model_a"]) & (preds["finding"] == row["finding"])].set_index(
        "study_id"
    )
    sb = preds[(preds["model"] == row["model_b"]) & (preds["finding"] == row["finding"])].set_index(
        "study_id"
    )
    dl = delong_test(
        (lab["state"] == 2).astype(int).to_numpy(),
        sa.loc[lab.index, "score"].to_numpy(),
        sb.loc[lab.index, "score"].to_numpy(),
    )
    half = norm.ppf(1 - 0.05 / row["n_comparisons"] / 2) * dl.standard_error
    assert row["ci_low"] == pytest.approx(dl.difference - half) and row["ci_high"] == pytest.approx(
        dl.difference + half
    )
    # no plan and no tables: not assessed, never an interval
    t0 = compare_best_models(res).table
    assert (t0["method"] == "none").all() and t0["ci_low"].isna().all() and not t0["separable"].any()


def test_save_and_bad_main_reference(tables, tmp_path) -> None:
    preds, labels = tables
    res = evaluate_auc(preds, labels, references=["r1", "r2"], n_resamples=50, rng=0)
    paths = compare_best_models(res, main_reference="r2").save(tmp_path)
    assert set(paths) == {"auc_comparison"} and (tmp_path / "auc_comparison.csv").is_file()
    assert (tmp_path / "auc_comparison.parquet").is_file()
    with pytest.raises(InvalidParameterError, match="main_reference"):
        compare_best_models(res, main_reference="r3")


def test_verdicts_do_not_depend_on_the_order_of_references(tables) -> None:
    """Every pair of references whose best models differ is compared both ways: swapping the references gives
    the same comparisons, intervals and verdicts (only the order of the rows changes)."""
    preds, labels = tables
    m2 = preds[preds["model"] == "m2"].set_index(["study_id", "finding"])["score"]
    third = labels[labels["source"] == "r1"].assign(source="r3")  # read off m2's scores: m2 is best under r3
    third["state"] = 2 * (m2.loc[list(zip(third["study_id"], third["finding"]))].to_numpy() > 0.5)
    labels = pd.concat([labels, third], ignore_index=True)
    key = ["finding", "reference", "model_a", "model_b"]

    def table(order):
        res = evaluate_auc(preds, labels, references=order, n_resamples=200, rng=0)
        t = compare_best_models(res).table
        t = t.assign(comparison=t["comparison"].map(lambda c: tuple(sorted(c.split("; ")))))
        return t.sort_values(key).reset_index(drop=True)

    a, b = table(["r1", "r2", "r3"]), table(["r3", "r2", "r1"])
    pd.testing.assert_frame_equal(a, b)
    cross = a[a["comparison"].map(lambda c: any(w.startswith("best under") for w in c))]
    assert len(cross) >= 2  # the fixture's references disagree on some best model
    for _, row in cross.iterrows():  # each cross-reference comparison is also made under the other reference
        for w in row["comparison"]:
            if w.startswith("best under "):
                other = w.removeprefix("best under ")
                assert (
                    (a["reference"] == other)
                    & (a["finding"] == row["finding"])
                    & (a["model_a"] == row["model_b"])
                    & (a["model_b"] == row["model_a"])
                ).any()
